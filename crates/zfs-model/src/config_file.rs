//! Reading a configuration file (a system, profile, matrix or lab TOML)
//! without letting the path decide how long or how much: only a regular file
//! is opened for reading, and at most a limit of it is read.
//!
//! A FIFO opened for reading blocks until a writer comes, `/dev/zero` never
//! ends, and a directory or a device is not a file anyone meant; each is
//! refused before it is read. The open is non-blocking and the type is
//! checked again on the open file, so swapping the path in between cannot
//! make it hang either.

use std::fs;
use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

/// Largest configuration file read: 16 MiB. The biggest real one (a matrix
/// with every axis spelled out) is a few KiB; a TOML parser holds several
/// times its input, so the limit also bounds the parse.
pub const CONFIG_LIMIT: u64 = 16 << 20;

/// Why a configuration file was not read. The message names no path:
/// callers put the option and the path before it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    #[error("{source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{kind}, not a regular file; accepted: a regular file")]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("larger than {limit} bytes, the most read of a configuration file")]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("not UTF-8 text")]
    NotText { path: PathBuf },
}

fn kind_of(t: fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a file"
    }
}

/// The text of `path`, which must be a regular file (or a link to one) of at
/// most [`CONFIG_LIMIT`] bytes.
pub fn read_config(path: &Path) -> Result<String, ConfigFileError> {
    read_text(path, CONFIG_LIMIT)
}

/// The text of `path`, a regular file of at most `limit` bytes; at most
/// `limit + 1` bytes are read whatever the file claims its size is.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ConfigFileError> {
    let io = |source: std::io::Error| ConfigFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let check = |meta: &fs::Metadata| -> Result<(), ConfigFileError> {
        if !meta.file_type().is_file() {
            return Err(ConfigFileError::NotRegular {
                path: path.to_path_buf(),
                kind: kind_of(meta.file_type()),
            });
        }
        if meta.len() > limit {
            return Err(ConfigFileError::TooLarge {
                path: path.to_path_buf(),
                limit,
            });
        }
        Ok(())
    };
    check(&fs::metadata(path).map_err(io)?)?;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(io)?;
    check(&file.metadata().map_err(io)?)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(ConfigFileError::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    String::from_utf8(bytes).map_err(|_| ConfigFileError::NotText {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt as _;
    use std::time::{Duration, Instant};

    #[test]
    fn a_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.toml");
        fs::write(&p, "name = \"x\"\n").unwrap();
        assert_eq!(read_config(&p).unwrap(), "name = \"x\"\n");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        let c = CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path and a mode; mkfifo touches nothing else.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = Instant::now();
        let e = read_config(&p).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(matches!(e, ConfigFileError::NotRegular { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "a FIFO (named pipe), not a regular file; accepted: a regular file"
        );
    }

    #[test]
    fn devices_and_directories_are_refused() {
        let e = read_config(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a character device, not a regular file; accepted: a regular file"
        );
        let dir = tempfile::tempdir().unwrap();
        let e = read_config(dir.path()).unwrap_err();
        assert!(e.to_string().starts_with("a directory, not a regular file"));
    }

    #[test]
    fn a_file_above_the_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.toml");
        fs::write(&p, vec![b'#'; 101]).unwrap();
        let e = read_text(&p, 100).unwrap_err();
        assert!(matches!(e, ConfigFileError::TooLarge { limit: 100, .. }));
        assert_eq!(read_text(&p, 101).unwrap().len(), 101);
    }

    #[test]
    fn missing_and_binary_files_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_config(&dir.path().join("none.toml")).unwrap_err();
        assert!(matches!(e, ConfigFileError::Io { .. }));
        let p = dir.path().join("bin");
        fs::write(&p, [0xff, 0xfe]).unwrap();
        assert_eq!(read_config(&p).unwrap_err().to_string(), "not UTF-8 text");
    }
}
