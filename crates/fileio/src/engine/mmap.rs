//! Copies into shared mappings of whole files (`--file-io-mode=mmap`).

use super::{last_errno, AlignedBuf, Engine, IoError, Submitted};
use crate::run::fileset::OpenFiles;
use crate::run::generator::{Op, Request};
use crate::spec::FsyncMode;
use std::sync::Arc;

/// Memory copies into whole-file shared mappings; page faults do the I/O.
pub(crate) struct MmapEngine {
    files: Arc<OpenFiles>,
    buf: AlignedBuf,
}

impl MmapEngine {
    pub fn new(files: Arc<OpenFiles>, buf: AlignedBuf) -> MmapEngine {
        MmapEngine { files, buf }
    }
}

impl Engine for MmapEngine {
    fn name(&self) -> &'static str {
        "mmap"
    }
    fn buffer_mut(&mut self) -> &mut [u8] {
        self.buf.as_mut_slice()
    }
    #[inline]
    fn submit(&mut self, req: &Request) -> Result<Submitted, IoError> {
        let map = &self.files.maps[req.file as usize];
        // Checked in u64, so no position is cut short before the check.
        if req.pos.saturating_add(req.size) > map.len as u64 {
            return Err(IoError {
                op: req.op,
                fd: self.files.fds[req.file as usize],
                pos: req.pos,
                errno: libc::EINVAL,
                short: None,
                cause: None,
            });
        }
        // Both fit: their sum is at most the mapping's length, a usize.
        #[allow(clippy::cast_possible_truncation)]
        let (pos, n) = (req.pos as usize, req.size as usize);
        // SAFETY: bounds checked above; buffer holds at least n bytes.
        unsafe {
            let at = map.ptr.add(pos);
            match req.op {
                Op::Read => std::ptr::copy_nonoverlapping(at, self.buf.as_ptr(), n),
                _ => std::ptr::copy_nonoverlapping(self.buf.as_ptr(), at, n),
            }
        }
        Ok(Submitted::Done(req.size))
    }
    fn sync(&mut self, file: u32, _mode: FsyncMode) -> Result<(), IoError> {
        let map = &self.files.maps[file as usize];
        // SAFETY: msync on our own mapping.
        let rc = unsafe {
            libc::msync(
                map.ptr as *mut libc::c_void,
                map.len,
                libc::MS_SYNC | libc::MS_INVALIDATE,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(IoError {
                op: Op::Fsync,
                fd: self.files.fds[file as usize],
                pos: 0,
                errno: last_errno(),
                short: None,
                cause: None,
            })
        }
    }
}
