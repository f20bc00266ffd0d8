//! I/O engines behind one interface, after fio's ioengine table: `submit` either
//! finishes a request (synchronous engines) or queues it (io_uring), `reap`
//! collects completions, and the runner — not the engine — decides timing and
//! statistics. Engines are generic parameters of the worker loop, so the hot path
//! has no dynamic dispatch.

pub mod injected;
pub mod mmap;
pub mod nfs;
pub mod psync;
pub mod uring;

use crate::run::generator::{Op, Request};
use crate::spec::{FsyncMode, IoMode};
use std::os::fd::RawFd;

/// Text of an errno value, as strerror(3) gives it.
pub(crate) fn strerror(errno: i32) -> String {
    // SAFETY: strerror returns a pointer to a static or thread-local string.
    unsafe {
        let p = libc::strerror(errno);
        if p.is_null() {
            return format!("Unknown error {errno}");
        }
        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

pub(crate) fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A failed operation, with what sysbench prints about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoError {
    pub op: Op,
    pub fd: RawFd,
    pub pos: u64,
    pub errno: i32,
    /// For short transfers: (done, wanted) bytes.
    pub short: Option<(u64, u64)>,
    /// What went wrong, when the errno alone does not say it (an NFS reply
    /// that claims more bytes than were asked fails with EIO like a bad
    /// disk): printed after the errno's text.
    pub cause: Option<String>,
}

impl IoError {
    /// `Failed to read file! file: <fd> pos: <pos> errno = <n> (<text>)`.
    pub fn message(&self) -> String {
        let what = match self.op {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
        };
        let detail = match self.short {
            Some((done, wanted)) => format!("short {what}: {done} of {wanted} bytes"),
            None => strerror(self.errno),
        };
        let detail = match &self.cause {
            Some(cause) => format!("{detail}: {cause}"),
            None => detail,
        };
        match self.op {
            Op::Fsync => format!(
                "Failed to fsync file! file: {} errno = {} ({})",
                self.fd, self.errno, detail
            ),
            _ => format!(
                "Failed to {what} file! file: {} pos: {} errno = {} ({})",
                self.fd, self.pos, self.errno, detail
            ),
        }
    }
}

/// A finished queued request.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub op: Op,
    pub bytes: u64,
    /// Submission time on the runner's clock ([`crate::run::clock::now_ns`]).
    pub submitted_ns: u64,
}

pub(crate) enum Submitted {
    /// Finished: bytes transferred.
    Done(u64),
    Queued,
}

/// A page-aligned, zero-filled buffer (O_DIRECT needs the alignment).
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by one engine at a time.
unsafe impl Send for AlignedBuf {}

const PAGE: usize = 4096;

impl AlignedBuf {
    pub fn new(len: usize) -> AlignedBuf {
        AlignedBuf::try_new(len).expect("out of memory allocating an I/O buffer")
    }
    /// None when the memory cannot be had (a buffer per thread times many
    /// threads can exceed the address space or the memory limits).
    pub(crate) fn try_new(len: usize) -> Option<AlignedBuf> {
        let len = len.max(1);
        let layout = std::alloc::Layout::from_size_align(len, PAGE).ok()?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(AlignedBuf { ptr, len })
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr/len describe our allocation.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr/len describe our allocation, borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len, PAGE).expect("buffer layout");
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, layout) }
    }
}

pub(crate) fn sync_fd(fd: RawFd, mode: FsyncMode) -> Result<(), i32> {
    // SAFETY: plain syscalls on a descriptor we own.
    let rc = unsafe {
        match mode {
            FsyncMode::Fsync => libc::fsync(fd),
            FsyncMode::Fdatasync => libc::fdatasync(fd),
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(last_errno())
    }
}

/// What the engine of an I/O mode is, known before any engine is built: the
/// runner sizes its memory-map budget and counts events with it, the report
/// records the queue depth, and `--validate` is refused where it cannot work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Capabilities {
    /// Requests are queued and complete later (an event is then a completed
    /// request, not one call of the engine).
    pub queued: bool,
    /// Requests one thread keeps in flight at most.
    pub queue_depth: u32,
    /// Memory maps one thread's engine adds (an io_uring ring maps its
    /// submission queue, its completion queue and its entries).
    pub maps_per_thread: usize,
    /// Memory maps the engine adds per test file, once per process (the mmap
    /// engine maps every file).
    pub maps_per_file: usize,
    /// In-flight requests of a thread share its one buffer, so a request's
    /// buffer may hold another request's data when it completes.
    pub shares_buffer: bool,
}

/// The engine `--file-io-mode` selects, with `--file-async-backlog` as the
/// queue depth of `async`.
pub(crate) fn capabilities(io_mode: IoMode, async_backlog: u32) -> Capabilities {
    match io_mode {
        IoMode::Sync => Capabilities {
            queued: false,
            queue_depth: 1,
            maps_per_thread: 0,
            maps_per_file: 0,
            shares_buffer: false,
        },
        IoMode::Mmap => Capabilities {
            queued: false,
            queue_depth: 1,
            maps_per_thread: 0,
            maps_per_file: 1,
            shares_buffer: false,
        },
        IoMode::Async => Capabilities {
            queued: true,
            queue_depth: async_backlog,
            maps_per_thread: 3,
            maps_per_file: 0,
            shares_buffer: true,
        },
    }
}

/// The engine interface.
pub(crate) trait Engine: Send {
    /// Name recorded in results (psync, io_uring, mmap, ...).
    fn name(&self) -> &'static str;
    /// Requests that may be in flight at once.
    fn depth(&self) -> usize {
        1
    }
    fn in_flight(&self) -> usize {
        0
    }
    /// The buffer writes take their data from and reads land in.
    fn buffer_mut(&mut self) -> &mut [u8];
    /// Start a read or write.
    fn submit(&mut self, req: &Request) -> Result<Submitted, IoError>;
    /// Wait for at least `min` queued requests and hand every finished one to `done`.
    fn reap(&mut self, _min: usize, _done: &mut dyn FnMut(Completion)) -> Result<(), IoError> {
        Ok(())
    }
    /// Make a file durable (fsync/fdatasync, or msync for mappings).
    fn sync(&mut self, file: u32, mode: FsyncMode) -> Result<(), IoError>;
    /// Called once on the thread that will submit, before its first request
    /// (an io_uring ring made for a single issuer is enabled there).
    fn start_on_this_thread(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_queued_engine_shares_its_buffer_and_takes_the_backlog_as_depth() {
        let sync = capabilities(IoMode::Sync, 64);
        let mmap = capabilities(IoMode::Mmap, 64);
        let uring = capabilities(IoMode::Async, 64);
        for c in [sync, mmap] {
            assert!(!c.queued && !c.shares_buffer);
            assert_eq!(c.queue_depth, 1, "--file-async-backlog is for async only");
        }
        assert!(uring.queued && uring.shares_buffer);
        assert_eq!(uring.queue_depth, 64);
        // Maps: the ring per thread, the files in mmap mode.
        assert_eq!(
            (
                sync.maps_per_thread,
                mmap.maps_per_thread,
                uring.maps_per_thread
            ),
            (0, 0, 3)
        );
        assert_eq!(
            (sync.maps_per_file, mmap.maps_per_file, uring.maps_per_file),
            (0, 1, 0)
        );
    }
}
