//! XDR (RFC 4506): big-endian 32-bit units, variable-length opaque data and
//! strings padded to a multiple of four bytes.

use super::error::CallError;

/// Builds the argument body of a call.
#[derive(Default)]
pub(crate) struct Enc {
    pub(crate) buf: Vec<u8>,
}

impl Enc {
    pub(crate) fn u32(&mut self, v: u32) -> &mut Enc {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub(crate) fn u64(&mut self, v: u64) -> &mut Enc {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub(crate) fn bool(&mut self, v: bool) -> &mut Enc {
        self.u32(u32::from(v))
    }
    /// Variable-length opaque (or string): length, bytes, zero padding.
    pub(crate) fn opaque(&mut self, data: &[u8]) -> Result<&mut Enc, CallError> {
        let len = u32::try_from(data.len())
            .map_err(|_| CallError::ArgumentTooLarge { len: data.len() })?;
        self.u32(len);
        self.buf.extend_from_slice(data);
        self.buf.resize(self.buf.len() + pad(data.len()), 0);
        Ok(self)
    }
}

fn pad(len: usize) -> usize {
    (4 - len % 4) % 4
}

/// Reads a reply body; every read is bounds-checked and every length field
/// is checked against a limit before it is used, so a short or hostile
/// reply is an error, never a panic or an allocation the server chose.
pub(crate) struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Dec<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Dec<'a> {
        Dec { buf, pos: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], CallError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        match end {
            Some(end) => {
                let s = &self.buf[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(CallError::Truncated {
                len: self.buf.len(),
                more: n - self.remaining(),
            }),
        }
    }
    pub(crate) fn u32(&mut self) -> Result<u32, CallError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, CallError> {
        Ok((u64::from(self.u32()?) << 32) | u64::from(self.u32()?))
    }
    pub(crate) fn bool(&mut self) -> Result<bool, CallError> {
        match self.u32()? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(CallError::BadBool { value }),
        }
    }
    /// Variable-length opaque of at most `max` bytes; `field` names it in
    /// the error (the length is checked before anything is taken).
    pub(crate) fn opaque(
        &mut self,
        max: usize,
        field: &'static str,
    ) -> Result<&'a [u8], CallError> {
        let len = self.u32()?;
        let len =
            usize::try_from(len)
                .ok()
                .filter(|&l| l <= max)
                .ok_or(CallError::LengthField {
                    field,
                    len: u64::from(len),
                    max: max as u64,
                })?;
        let data = self.take(len)?;
        self.take(pad(len))?;
        Ok(data)
    }
    /// Fixed-length opaque of `n` bytes (a multiple of four here).
    pub(crate) fn take_fixed(&mut self, n: usize) -> Result<&'a [u8], CallError> {
        self.take(n)
    }
    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub(crate) fn skip(&mut self, n: usize) -> Result<(), CallError> {
        self.take(n).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opaque_is_length_prefixed_and_padded_to_four_bytes() {
        let mut e = Enc::default();
        e.opaque(b"abcde").unwrap().u32(7);
        assert_eq!(
            e.buf,
            [0, 0, 0, 5, b'a', b'b', b'c', b'd', b'e', 0, 0, 0, 0, 0, 0, 7]
        );
        let mut d = Dec::new(&e.buf);
        assert_eq!(d.opaque(16, "name").unwrap(), b"abcde");
        assert_eq!(d.u32().unwrap(), 7);
    }

    #[test]
    fn a_short_or_oversized_reply_is_an_error() {
        let mut d = Dec::new(&[0, 0, 0, 9, 1, 2]);
        assert!(
            matches!(
                d.opaque(64, "file handle"),
                Err(CallError::Truncated { len: 6, more: 7 })
            ),
            "9 bytes announced, 2 present"
        );
        let mut d = Dec::new(&[0, 0, 0, 200]);
        let e = d.opaque(64, "file handle").unwrap_err();
        assert!(
            matches!(
                e,
                CallError::LengthField {
                    field: "file handle",
                    len: 200,
                    max: 64
                }
            ),
            "{e}"
        );
        let mut d = Dec::new(&[0, 0, 0, 2]);
        assert!(matches!(d.bool(), Err(CallError::BadBool { value: 2 })));
        let mut e = Enc::default();
        e.u64(0x0102_0304_0506_0708);
        assert_eq!(Dec::new(&e.buf).u64().unwrap(), 0x0102_0304_0506_0708);
    }

    #[test]
    fn a_length_of_four_gigabytes_is_refused_before_anything_is_taken() {
        // 0xffff_ffff as the length of a READ's data, with nothing after it.
        let mut d = Dec::new(&[0xff, 0xff, 0xff, 0xff]);
        let e = d.opaque(4096, "READ data").unwrap_err();
        assert_eq!(
            e.to_string(),
            "reply announced READ data of 4294967295 bytes, more than the 4096 allowed"
        );
    }
}
