//! io_uring, several requests in flight per thread (`--file-io-mode=async`).

use super::{AlignedBuf, Completion, Engine, IoError, Submitted};
use crate::run::fileset::OpenFiles;
use crate::run::generator::{Op, Request};
use crate::spec::FsyncMode;
use std::sync::Arc;

/// Asynchronous I/O through io_uring (sysbench uses libaio), `depth` requests in
/// flight per thread.
///
/// Choices that make it fast:
/// - files and the buffer are registered, so the kernel skips per-request file
///   lookups and page pinning;
/// - the ring is single-issuer with deferred task running: completions are
///   posted when the owning thread asks for them, not by interrupting it;
/// - submissions are batched: a request is queued in the submission ring and
///   the kernel is entered only when the ring is full (one system call submits
///   everything queued and waits for the completions the runner asks for, a
///   quarter of the depth). sysbench enters the kernel once per request.
pub(crate) struct UringEngine {
    ring: io_uring::IoUring,
    files: Arc<OpenFiles>,
    buf: AlignedBuf,
    depth: usize,
    in_flight: usize,
    /// Queued in the submission ring, not yet handed to the kernel.
    unsubmitted: usize,
    /// Per slot: the request and when it was queued.
    slots: Vec<Option<(Request, u64)>>,
    free_slots: Vec<u32>,
    fixed_files: bool,
    fixed_buffer: bool,
    /// Made with IORING_SETUP_R_DISABLED: the submitting thread must enable it.
    disabled: bool,
}

impl UringEngine {
    /// Make the ring (disabled: it is enabled by the thread that will use it,
    /// which single-issuer rings require).
    pub fn new(files: Arc<OpenFiles>, buf: AlignedBuf, depth: u32) -> std::io::Result<UringEngine> {
        let entries = depth.next_power_of_two().max(1);
        // Documented fallback: kernels before 6.1 refuse these setup flags
        // (io_uring_setup(2): EINVAL for an unknown flag), and a plain ring
        // does the same I/O, only with more interruptions. When the plain
        // ring fails too, its error is the one the caller reports.
        let (ring, disabled) = match io_uring::IoUring::builder()
            .setup_r_disabled()
            .setup_single_issuer()
            .setup_coop_taskrun()
            .setup_defer_taskrun()
            .build(entries)
        {
            Ok(ring) => (ring, true),
            Err(_) => (io_uring::IoUring::new(entries)?, false),
        };
        // Registered files and buffers are optimisations: without them
        // (older kernels, RLIMIT_MEMLOCK too low for the buffer) requests
        // name the descriptor and the buffer address instead.
        let fixed_files = ring.submitter().register_files(&files.fds).is_ok();
        let iov = libc::iovec {
            iov_base: buf.as_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        // SAFETY: the buffer lives as long as the ring (both are owned by the
        // engine; the registration ends when the ring is closed).
        let fixed_buffer = unsafe { ring.submitter().register_buffers(&[iov]).is_ok() };
        Ok(UringEngine {
            ring,
            files,
            buf,
            depth: depth as usize,
            in_flight: 0,
            unsubmitted: 0,
            slots: vec![None; depth as usize],
            free_slots: (0..depth).rev().collect(),
            fixed_files,
            fixed_buffer,
            disabled,
        })
    }

    fn enter_error(&self, e: std::io::Error) -> IoError {
        IoError {
            op: Op::Read,
            fd: -1,
            pos: 0,
            errno: e.raw_os_error().unwrap_or(0),
            short: None,
            cause: None,
        }
    }

    fn collect(&mut self, done: &mut dyn FnMut(Completion)) -> Result<(), IoError> {
        let mut error = None;
        for cqe in self.ring.completion() {
            // The user data is the slot number `submit` gave the request, a u32.
            #[allow(clippy::cast_possible_truncation)]
            let slot = cqe.user_data() as u32;
            let (req, at) = self.slots[slot as usize]
                .take()
                .expect("completion for a live slot");
            self.free_slots.push(slot);
            self.in_flight -= 1;
            let res = cqe.result();
            if res as i64 == req.size as i64 {
                done(Completion {
                    op: req.op,
                    bytes: req.size,
                    submitted_ns: at,
                });
            } else if error.is_none() {
                error = Some(IoError {
                    op: req.op,
                    fd: self.files.fds[req.file as usize],
                    pos: req.pos,
                    errno: if res < 0 { -res } else { 0 },
                    short: u64::try_from(res).ok().map(|done| (done, req.size)),
                    cause: None,
                });
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Engine for UringEngine {
    fn name(&self) -> &'static str {
        "io_uring"
    }
    fn depth(&self) -> usize {
        self.depth
    }
    fn in_flight(&self) -> usize {
        self.in_flight
    }
    fn buffer_mut(&mut self) -> &mut [u8] {
        self.buf.as_mut_slice()
    }
    fn submit(&mut self, req: &Request) -> Result<Submitted, IoError> {
        use io_uring::{opcode, types};
        let slot = self
            .free_slots
            .pop()
            .expect("caller keeps in_flight below depth");
        let ptr = self.buf.as_ptr();
        // A request is at most i32::MAX bytes (`RunSpec::check_runnable`).
        #[allow(clippy::cast_possible_truncation)]
        let len = req.size as u32;
        let fd = self.files.fds[req.file as usize];
        let entry = match (req.op, self.fixed_files, self.fixed_buffer) {
            (Op::Read, true, true) => opcode::ReadFixed::new(types::Fixed(req.file), ptr, len, 0)
                .offset(req.pos)
                .build(),
            (Op::Read, true, false) => opcode::Read::new(types::Fixed(req.file), ptr, len)
                .offset(req.pos)
                .build(),
            (Op::Read, false, _) => opcode::Read::new(types::Fd(fd), ptr, len)
                .offset(req.pos)
                .build(),
            (_, true, true) => opcode::WriteFixed::new(types::Fixed(req.file), ptr, len, 0)
                .offset(req.pos)
                .build(),
            (_, true, false) => opcode::Write::new(types::Fixed(req.file), ptr, len)
                .offset(req.pos)
                .build(),
            (_, false, _) => opcode::Write::new(types::Fd(fd), ptr, len)
                .offset(req.pos)
                .build(),
        }
        .user_data(slot as u64);
        self.slots[slot as usize] = Some((*req, crate::run::clock::now_ns()));
        // SAFETY: the buffer and files stay alive while the request is in flight.
        unsafe {
            self.ring
                .submission()
                .push(&entry)
                .expect("submission queue has room: in_flight < depth");
        }
        self.in_flight += 1;
        self.unsubmitted += 1;
        Ok(Submitted::Queued)
    }
    fn reap(&mut self, min: usize, done: &mut dyn FnMut(Completion)) -> Result<(), IoError> {
        let min = min.min(self.in_flight);
        if min == 0 {
            return Ok(());
        }
        // Hand over everything queued and wait for `min` completions in one call.
        if self.unsubmitted > 0 || self.ring.completion().len() < min {
            let wait = min.saturating_sub(self.ring.completion().len());
            self.ring
                .submit_and_wait(wait)
                .map_err(|e| self.enter_error(e))?;
            self.unsubmitted = 0;
        }
        self.collect(done)
    }
    fn sync(&mut self, file: u32, mode: FsyncMode) -> Result<(), IoError> {
        // Synchronous, like sysbench's async mode (its AIO fsync path is dead code).
        self.files.sync(file, mode)
    }
    fn start_on_this_thread(&mut self) -> std::io::Result<()> {
        if self.disabled {
            // The enabling thread becomes the single issuer
            // (IORING_REGISTER_ENABLE_RINGS, io_uring_register(2)).
            self.ring.submitter().register_enable_rings()?;
            self.disabled = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::fileset::OpenFiles;
    use std::os::fd::IntoRawFd;

    #[test]
    fn a_ring_that_cannot_be_enabled_is_an_error_not_ignored() {
        let f = tempfile::tempfile().unwrap();
        let files = Arc::new(OpenFiles {
            fds: vec![f.into_raw_fd()],
            maps: Vec::new(),
            nfs: None,
        });
        let mut engine = match UringEngine::new(files, AlignedBuf::new(4096), 4) {
            Ok(e) => e,
            Err(e) => return testkit::skip_or_fail(&format!("needs io_uring ({e})")),
        };
        let made_disabled = engine.disabled;
        engine.start_on_this_thread().unwrap();
        assert!(!engine.disabled);
        // Started once: starting again asks nothing of the kernel.
        engine.start_on_this_thread().unwrap();
        if !made_disabled {
            return testkit::skip_or_fail("needs a kernel with IORING_SETUP_R_DISABLED");
        }
        // Enabling an enabled ring is refused by the kernel (EBADFD): that
        // error must come back, where it used to be dropped.
        engine.disabled = true;
        let e = engine.start_on_this_thread().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADFD), "{e}");
    }
}
