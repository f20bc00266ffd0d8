//! XDR (RFC 4506): big-endian 32-bit units, variable-length opaque data and
//! strings padded to a multiple of four bytes.

use crate::Error;

/// Builds the argument body of a call.
#[derive(Default)]
pub struct Enc {
    pub buf: Vec<u8>,
}

impl Enc {
    pub fn u32(&mut self, v: u32) -> &mut Enc {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Enc {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn bool(&mut self, v: bool) -> &mut Enc {
        self.u32(u32::from(v))
    }
    /// Variable-length opaque (or string): length, bytes, zero padding.
    pub fn opaque(&mut self, data: &[u8]) -> Result<&mut Enc, Error> {
        let len = u32::try_from(data.len()).map_err(|_| {
            Error::Protocol(format!("{} bytes do not fit one XDR opaque", data.len()))
        })?;
        self.u32(len);
        self.buf.extend_from_slice(data);
        self.buf.resize(self.buf.len() + pad(data.len()), 0);
        Ok(self)
    }
}

fn pad(len: usize) -> usize {
    (4 - len % 4) % 4
}

/// Reads a reply body; every read is bounds-checked, so a short or hostile
/// reply is an error, never a panic.
pub struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Dec<'a> {
    pub fn new(buf: &'a [u8]) -> Dec<'a> {
        Dec { buf, pos: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        match end {
            Some(end) => {
                let s = &self.buf[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(Error::Protocol(format!(
                "reply ends after {} bytes, {} more expected",
                self.buf.len(),
                n
            ))),
        }
    }
    pub fn u32(&mut self) -> Result<u32, Error> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn u64(&mut self) -> Result<u64, Error> {
        Ok((u64::from(self.u32()?) << 32) | u64::from(self.u32()?))
    }
    pub fn bool(&mut self) -> Result<bool, Error> {
        match self.u32()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(Error::Protocol(format!("XDR bool is {v}"))),
        }
    }
    /// Variable-length opaque of at most `max` bytes.
    pub fn opaque(&mut self, max: usize) -> Result<&'a [u8], Error> {
        let len = self.u32()? as usize;
        if len > max {
            return Err(Error::Protocol(format!(
                "opaque of {len} bytes where at most {max} are allowed"
            )));
        }
        let data = self.take(len)?;
        self.take(pad(len))?;
        Ok(data)
    }
    /// Fixed-length opaque of `n` bytes (a multiple of four here).
    pub fn take_fixed(&mut self, n: usize) -> Result<&'a [u8], Error> {
        self.take(n)
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub fn skip(&mut self, n: usize) -> Result<(), Error> {
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
        assert_eq!(d.opaque(16).unwrap(), b"abcde");
        assert_eq!(d.u32().unwrap(), 7);
    }

    #[test]
    fn a_short_or_oversized_reply_is_an_error() {
        let mut d = Dec::new(&[0, 0, 0, 9, 1, 2]);
        assert!(d.opaque(64).is_err(), "9 bytes announced, 2 present");
        let mut d = Dec::new(&[0, 0, 0, 200]);
        assert!(d.opaque(64).is_err(), "longer than the limit");
        let mut d = Dec::new(&[0, 0, 0, 2]);
        assert!(d.bool().is_err());
        let mut e = Enc::default();
        e.u64(0x0102_0304_0506_0708);
        assert_eq!(Dec::new(&e.buf).u64().unwrap(), 0x0102_0304_0506_0708);
    }
}
