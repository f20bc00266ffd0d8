//! Fields of the kernel's mount tables (`/proc/*/mounts`,
//! `/proc/*/mountinfo`): the one decoder of their octal escapes. It lives in
//! this crate because it is the lowest one that reads a mount table (the
//! namespace hygiene of [`crate::host::mountns`]); fileio (the environment of
//! a run, the log-device checks) and the lab read theirs through it.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// The bytes a mount-table field names. The kernel writes space, tab,
/// newline and backslash as a backslash and three octal digits (`\040`);
/// anything else stands for itself, including a backslash that does not
/// start three octal digits and an escape above `\377`, which would not fit
/// a byte and is not one the kernel writes.
pub fn unescape(field: &str) -> Vec<u8> {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (b[i], escaped_byte(b.get(i + 1..i + 4))) {
            (b'\\', Some(v)) => {
                out.push(v);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The byte of three octal digits (at most `377`), or None.
fn escaped_byte(digits: Option<&[u8]>) -> Option<u8> {
    let digits = digits?;
    if !digits.iter().all(|c| (b'0'..=b'7').contains(c)) {
        return None;
    }
    let value = digits.iter().fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
    u8::try_from(value).ok()
}

/// A mount point or other path field, every byte kept (a path need not be
/// UTF-8).
pub fn unescape_path(field: &str) -> PathBuf {
    PathBuf::from(OsString::from_vec(unescape(field)))
}

/// A field as text for comparing and showing; bytes that are not UTF-8
/// become U+FFFD.
pub fn unescape_lossy(field: &str) -> String {
    String::from_utf8_lossy(&unescape(field)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_escapes_the_kernel_writes_are_decoded() {
        assert_eq!(unescape_lossy(r"/mnt/a\040b"), "/mnt/a b");
        assert_eq!(unescape_lossy(r"a\011b\012c\134d"), "a\tb\nc\\d");
        // At the very start and end of a field, and back to back.
        assert_eq!(unescape_lossy(r"\040x\040"), " x ");
        assert_eq!(unescape_lossy(r"\040\040"), "  ");
        assert_eq!(unescape_lossy(""), "");
    }

    #[test]
    fn what_is_not_an_escape_stands_for_itself() {
        // A backslash the kernel escaped, followed by digits of the name.
        assert_eq!(unescape_lossy(r"/x\134040"), r"/x\040");
        // Too few digits, digits that are not octal, a lone backslash.
        assert_eq!(unescape_lossy(r"/x\04"), r"/x\04");
        assert_eq!(unescape_lossy(r"/x\089"), r"/x\089");
        assert_eq!(unescape_lossy(r"/x\\"), r"/x\\");
        assert_eq!(unescape_lossy("/x\\"), "/x\\");
        // Above \377 a value does not fit a byte.
        assert_eq!(unescape_lossy(r"/x\400\777"), r"/x\400\777");
        assert_eq!(unescape(r"\377"), [0xff]);
        assert_eq!(unescape(r"\000"), [0]);
    }

    #[test]
    fn names_that_are_not_ascii_keep_their_bytes() {
        // The kernel writes UTF-8 (and any other bytes) as they are.
        assert_eq!(unescape_lossy("/mnt/café\\040b"), "/mnt/café b");
        let raw = unescape_path("/mnt/\u{e9}");
        assert_eq!(raw, PathBuf::from("/mnt/é"));
        // Bytes that are not UTF-8 stay in a path and are replaced in text.
        assert_eq!(
            unescape_path(r"/mnt/\377").into_os_string().into_vec(),
            b"/mnt/\xff"
        );
        assert_eq!(unescape_lossy(r"/mnt/\377"), "/mnt/\u{fffd}");
    }
}
