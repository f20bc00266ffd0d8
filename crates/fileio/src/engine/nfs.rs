//! The NFS engine (`--file-dir=nfs://HOST/EXPORT`): each request becomes
//! READ/WRITE calls and each fsync a COMMIT over tankbench's own client, one
//! connection per thread. There is no client cache, so every request is a
//! call the server sees, as with a hypervisor's datastore client. The files
//! themselves are prepared and opened in `crate::run::fileset::nfs`.

use super::{AlignedBuf, Engine, IoError, Submitted};
use crate::failure::Failure;
use crate::run::fileset::nfs::NfsFiles;
use crate::run::fileset::OpenFiles;
use crate::run::generator::{Op, Request};
use crate::spec::FsyncMode;
use nfs::{Client, Stable};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// READ/WRITE per request (split at the server's transfer size), COMMIT per
/// fsync of a file with unstable data; one connection per thread.
pub struct NfsEngine {
    files: Arc<OpenFiles>,
    /// Boxed: the runner holds engines in one enum, sized by its largest.
    client: Box<Client>,
    buf: AlignedBuf,
}

fn io_error(op: Op, file: u32, pos: u64, e: &nfs::Error) -> IoError {
    IoError {
        op,
        fd: i32::try_from(file).unwrap_or(i32::MAX),
        pos,
        errno: e.errno(),
        short: None,
        cause: Some(crate::text::one_line(e)),
    }
}

impl NfsEngine {
    /// A new connection to the export of `files` (which must be on NFS).
    pub fn new(files: Arc<OpenFiles>, buf: AlignedBuf) -> Result<NfsEngine, Failure> {
        let nfs = files
            .nfs
            .as_ref()
            .ok_or_else(|| Failure::fatal("the NFS engine needs files on an NFS export"))?;
        let client =
            Box::new(nfs.client.another().map_err(|e| {
                Failure::fatal(format!("nfs: cannot connect a worker thread: {e}"))
            })?);
        Ok(NfsEngine { files, client, buf })
    }

    /// Calls this engine's connection made so far.
    pub fn counts(&self) -> nfs::Counts {
        self.client.counts()
    }

    fn nfs(&self) -> &NfsFiles {
        self.files.nfs.as_ref().expect("checked in new")
    }
}

impl Engine for NfsEngine {
    fn name(&self) -> &'static str {
        "nfs"
    }
    fn buffer_mut(&mut self) -> &mut [u8] {
        self.buf.as_mut_slice()
    }
    fn submit(&mut self, req: &Request) -> Result<Submitted, IoError> {
        let files = Arc::clone(&self.files);
        let nfs = files.nfs.as_ref().expect("checked in new");
        let fh = &nfs.handles[req.file as usize];
        let len = req.transfer_len();
        if req.op != Op::Read {
            // Short WRITEs are sent again, a bounded number of times, and a
            // WRITE of which the server takes nothing is an error.
            let committed = self
                .client
                .write_all(fh, req.pos, &self.buf.as_slice()[..len], nfs.stable)
                .map_err(|e| io_error(req.op, req.file, req.pos, &e))?;
            if committed == Stable::Unstable {
                nfs.dirty[req.file as usize].store(true, Ordering::Release);
            }
            return Ok(Submitted::Done(req.size));
        }
        let max_read = self.client.max_read() as usize;
        let most = len.div_ceil(max_read) + nfs::MAX_SHORT_RESENDS as usize;
        let mut done = 0usize;
        let mut calls = 0;
        // A READ may return fewer bytes than asked; the rest is asked again,
        // but not for ever: at end of file (0 bytes) or after `most` calls
        // the request is a short read.
        while done < len && calls < most {
            let pos = req.pos + done as u64;
            let chunk = (len - done).min(max_read);
            let buf = &mut self.buf.as_mut_slice()[done..done + chunk];
            let n = self
                .client
                .read(fh, pos, buf)
                .map_err(|e| io_error(req.op, req.file, pos, &e))?;
            calls += 1;
            if n == 0 {
                break;
            }
            done += n;
        }
        if done == len {
            Ok(Submitted::Done(req.size))
        } else {
            Err(IoError {
                op: req.op,
                fd: i32::try_from(req.file).unwrap_or(i32::MAX),
                pos: req.pos,
                errno: 0,
                short: Some((done as u64, req.size)),
                cause: None,
            })
        }
    }
    fn sync(&mut self, file: u32, _mode: FsyncMode) -> Result<(), IoError> {
        // fsync and fdatasync both COMMIT (the Linux client's nfs_file_fsync
        // makes no difference either), and only when unstable data is there.
        if !self.nfs().dirty[file as usize].swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let files = Arc::clone(&self.files);
        let fh = &files.nfs.as_ref().expect("checked in new").handles[file as usize];
        self.client
            .commit(fh)
            .map_err(|e| io_error(Op::Fsync, file, 0, &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nfs::CallError;

    /// Issue 37: a READ reply that lies about its length fails with EIO like
    /// a bad disk, and the line says what the server did wrong.
    #[test]
    fn a_bad_read_reply_is_named_after_the_errno() {
        for (kind, named) in [
            (
                CallError::ReadCountOver {
                    count: 1 << 20,
                    asked: 4096,
                },
                "READ reply claims 1048576 bytes read where 4096 were asked",
            ),
            (
                CallError::LengthField {
                    field: "the READ data",
                    len: u64::from(u32::MAX),
                    max: 65536,
                },
                "READ reply announced the READ data of 4294967295 bytes",
            ),
        ] {
            let e = nfs::Error::Call {
                server: "127.0.0.1:2049".into(),
                procedure: "READ",
                kind,
            };
            let line = io_error(Op::Read, 0, 4096, &e).message();
            assert!(line.starts_with("Failed to read file! file: 0 pos: 4096 errno = 5 (Input/output error: NFS server 127.0.0.1:2049: "), "{line}");
            assert!(line.contains(named), "{line}");
        }
    }
}
