//! pread/pwrite, one system call per request (`--file-io-mode=sync`).

use super::{last_errno, AlignedBuf, Engine, IoError, Submitted};
use crate::run::fileset::OpenFiles;
use crate::run::generator::{Op, Request};
use crate::spec::FsyncMode;
use std::os::fd::RawFd;
use std::sync::Arc;

/// pread/pwrite: one system call per request.
pub(crate) struct PsyncEngine {
    files: Arc<OpenFiles>,
    buf: AlignedBuf,
}

impl PsyncEngine {
    pub fn new(files: Arc<OpenFiles>, buf: AlignedBuf) -> PsyncEngine {
        PsyncEngine { files, buf }
    }
}

/// The outcome of a pread/pwrite system call that returned `rc`: the bytes
/// transferred, or -1 with errno set (pread(2), pwrite(2)).
fn check_transfer(req: &Request, fd: RawFd, rc: libc::c_long) -> Result<Submitted, IoError> {
    match u64::try_from(rc) {
        Ok(done) if done == req.size => Ok(Submitted::Done(req.size)),
        Ok(done) => Err(IoError {
            op: req.op,
            fd,
            pos: req.pos,
            errno: 0,
            short: Some((done, req.size)),
            cause: None,
        }),
        Err(_) => Err(IoError {
            op: req.op,
            fd,
            pos: req.pos,
            errno: last_errno(),
            short: None,
            cause: None,
        }),
    }
}

impl Engine for PsyncEngine {
    fn name(&self) -> &'static str {
        "psync"
    }
    fn buffer_mut(&mut self) -> &mut [u8] {
        self.buf.as_mut_slice()
    }
    #[inline]
    fn submit(&mut self, req: &Request) -> Result<Submitted, IoError> {
        let fd = self.files.fds[req.file as usize];
        let p = self.buf.as_ptr() as *mut libc::c_void;
        // The raw system calls: glibc's pread/pwrite wrappers are thread
        // cancellation points and toggle cancellation state around every call,
        // which costs a measurable share of a request served from page cache.
        // SAFETY: the buffer holds at least req.size bytes (request size bound).
        let rc = unsafe {
            match req.op {
                Op::Read => libc::syscall(
                    libc::SYS_pread64,
                    fd,
                    p,
                    req.transfer_len(),
                    req.pos as libc::off_t,
                ),
                _ => libc::syscall(
                    libc::SYS_pwrite64,
                    fd,
                    p,
                    req.transfer_len(),
                    req.pos as libc::off_t,
                ),
            }
        };
        check_transfer(req, fd, rc)
    }
    fn sync(&mut self, file: u32, mode: FsyncMode) -> Result<(), IoError> {
        self.files.sync(file, mode)
    }
}
