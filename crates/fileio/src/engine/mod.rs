//! I/O engines behind one interface, after fio's ioengine table: `submit` either
//! finishes a request (synchronous engines) or queues it (io_uring), `reap`
//! collects completions, and the runner — not the engine — decides timing and
//! statistics. Engines are generic parameters of the worker loop, so the hot path
//! has no dynamic dispatch.

pub mod nfs;

use crate::spec::{FsyncMode, InjectedLatency, IoMode};
use crate::rng::Xoroshiro;
use crate::run::clock::precise_wait;
use crate::run::generator::{Op, Request};
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Text of an errno value, as strerror(3) gives it.
pub fn strerror(errno: i32) -> String {
    // SAFETY: strerror returns a pointer to a static or thread-local string.
    unsafe {
        let p = libc::strerror(errno);
        if p.is_null() {
            return format!("Unknown error {errno}");
        }
        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

fn last_errno() -> i32 {
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

pub enum Submitted {
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
    pub fn try_new(len: usize) -> Option<AlignedBuf> {
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
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
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

/// One shared mapping of a whole file (mmap mode).
pub struct Mapping {
    pub ptr: *mut u8,
    pub len: usize,
}

/// The run's open files: one descriptor per file shared by all threads (all I/O
/// is positional), and in mmap mode one mapping per file.
pub struct OpenFiles {
    pub fds: Vec<RawFd>,
    pub maps: Vec<Mapping>,
    /// Files on an NFS export (`--file-dir=nfs://`): no descriptors then.
    pub nfs: Option<crate::engine::nfs::NfsFiles>,
}

// SAFETY: descriptors are plain integers and the mappings stay valid until the
// value is dropped, on whichever thread that is: nothing is tied to the thread
// that opened or mapped them.
unsafe impl Send for OpenFiles {}
// SAFETY: shared use only reads the descriptors and the mapping addresses; the
// mapped memory is accessed with copies at positions the generator hands out,
// like positional I/O on a file shared by threads (no Rust references into it).
unsafe impl Sync for OpenFiles {}

impl Drop for OpenFiles {
    fn drop(&mut self) {
        for m in &self.maps {
            // SAFETY: mapped by us with this length.
            unsafe {
                libc::munmap(m.ptr as *mut libc::c_void, m.len);
            }
        }
        for &fd in &self.fds {
            // SAFETY: descriptors opened by us.
            unsafe {
                libc::close(fd);
            }
        }
    }
}

impl OpenFiles {
    /// fsync/fdatasync one file of the set.
    pub fn sync(&self, file: u32, mode: FsyncMode) -> Result<(), IoError> {
        let fd = self.fds[file as usize];
        sync_fd(fd, mode).map_err(|errno| IoError {
            op: Op::Fsync,
            fd,
            pos: 0,
            errno,
            short: None,
        })
    }
}

pub fn sync_fd(fd: RawFd, mode: FsyncMode) -> Result<(), i32> {
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
pub struct Capabilities {
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
pub fn capabilities(io_mode: IoMode, async_backlog: u32) -> Capabilities {
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
pub trait Engine: Send {
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

/// pread/pwrite: one system call per request.
pub struct PsyncEngine {
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
        }),
        Err(_) => Err(IoError {
            op: req.op,
            fd,
            pos: req.pos,
            errno: last_errno(),
            short: None,
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

/// Memory copies into whole-file shared mappings; page faults do the I/O.
pub struct MmapEngine {
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
            })
        }
    }
}

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
pub struct UringEngine {
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

/// Replaces I/O by a latency model (for testing the core: timing, histograms,
/// percentiles). Waits are precise: sleep most of the time, spin the rest.
pub struct InjectedEngine {
    model: InjectedLatency,
    rng: Xoroshiro,
    buf: AlignedBuf,
    /// Where the waits actually produced go (tests compare the statistics with
    /// them: on a busy machine the realised waits drift from the model, and the
    /// statistics must follow what really happened).
    trace: Option<Arc<std::sync::Mutex<Vec<u64>>>>,
    realised: Vec<u64>,
}

impl Drop for InjectedEngine {
    fn drop(&mut self) {
        if let Some(t) = &self.trace {
            t.lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(self.realised.drain(..));
        }
    }
}

impl InjectedEngine {
    pub fn new(
        model: InjectedLatency,
        seed: u64,
        buf: AlignedBuf,
        trace: Option<Arc<std::sync::Mutex<Vec<u64>>>>,
    ) -> InjectedEngine {
        InjectedEngine {
            model,
            rng: Xoroshiro::from_state(seed | 1, 0x9e37_79b9_7f4a_7c15 ^ seed),
            buf,
            trace,
            realised: Vec::new(),
        }
    }
    fn wait(&mut self) {
        let ns = match self.model {
            InjectedLatency::Fixed { ns } => ns,
            InjectedLatency::Bimodal {
                fast_ns,
                slow_ns,
                p_slow,
            } => {
                if self.rng.next_f64() < p_slow {
                    slow_ns
                } else {
                    fast_ns
                }
            }
        };
        let t = Instant::now();
        precise_wait(Duration::from_nanos(ns));
        if self.trace.is_some() {
            // The model's waits are at most an hour (`--tb-inject-latency` is
            // refused beyond), far below the 584 years a u64 of ns holds.
            #[allow(clippy::cast_possible_truncation)]
            let ns = t.elapsed().as_nanos() as u64;
            self.realised.push(ns);
        }
    }
}

impl Engine for InjectedEngine {
    fn name(&self) -> &'static str {
        "injected"
    }
    fn buffer_mut(&mut self) -> &mut [u8] {
        self.buf.as_mut_slice()
    }
    fn submit(&mut self, req: &Request) -> Result<Submitted, IoError> {
        self.wait();
        Ok(Submitted::Done(req.size))
    }
    fn sync(&mut self, _file: u32, _mode: FsyncMode) -> Result<(), IoError> {
        self.wait();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
