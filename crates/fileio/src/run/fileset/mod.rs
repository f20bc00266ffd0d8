//! The test files: prepare, open for a run, cleanup (prepare, the size
//! check before a run and cleanup of src/tests/fileio/sb_fileio.c at sysbench
//! 1.0.20, and observed with the 1.0.20 binary).
//!
//! Only `test_file.0` … `test_file.<N-1>` in the target directory are ever
//! created, extended, truncated (seqwr) or removed.

pub mod nfs;

use crate::engine::{strerror, sync_fd, AlignedBuf, IoError};
use crate::failure::{Failure, Stream};
use crate::rng::{GlibcRandom, Xoroshiro};
use crate::run::generator::Op;
use crate::run::pattern::{fill_checked_block, fill_random};
use crate::spec::{DataPattern, FileSet, FsyncMode, IoMode, Mode, RunSpec};
use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Instant;

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).expect("paths have no NUL bytes")
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn errno_text(e: i32) -> String {
    format!("errno = {e} ({})", strerror(e))
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
    pub nfs: Option<nfs::NfsFiles>,
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
            cause: None,
        })
    }
}

/// Where a file set lives. Every operation on the files (prepare, open for a
/// run, cleanup) goes to the store's own implementation, so the rest of this
/// module is about local files only.
enum FileStore<'a> {
    /// A local directory (`--file-dir`, the default).
    Local,
    /// An NFSv3 export reached by tankbench's own client (`--file-dir=nfs://`).
    Nfs(&'a ::nfs::Target),
}

impl FileStore<'_> {
    fn of(files: &FileSet) -> FileStore<'_> {
        match &files.nfs {
            Some(target) => FileStore::Nfs(target),
            None => FileStore::Local,
        }
    }
}

/// Bytes per write RPC of prepare over NFS at most (rounded down to whole
/// blocks; the server's own limit can be lower).
pub(crate) const NFS_PREPARE_CHUNK: usize = 256 << 10;
/// Bytes per write call of a local prepare (rounded down to whole blocks,
/// at least one): sysbench's default block. The page cache takes a write
/// into folios of about the write's size, and on this project's VM (ext4 on
/// virtio, free memory handed back to the host) larger folios made rounds
/// swing: 256 KiB writes gave 0.3x to 1.9x sysbench's rate, 64 KiB 0.5x to
/// 1.7x, 16 KiB 1.5x to 1.7x with the early writeback below (1.0x without
/// it). Measured side by side, docs/performance.md (issue 37).
const LOCAL_PREPARE_CHUNK: usize = 16 << 10;
/// Prepare starts writeback after every this many bytes of a file.
const WRITEBACK_STEP: u64 = 8 << 20;

/// Progress of prepare, for a live line, and a way to stop it.
pub trait PrepareObserver {
    fn file_started(&mut self, _index: u64, _of: u64) {}
    fn bytes_written(&mut self, _total: u64) {}
    /// Asked before each file and after each chunk written: true stops
    /// prepare there (the files keep what was written so far). sysbench's
    /// prepare cannot be stopped short of being killed; this is for callers
    /// that must clean up after a signal, such as `quick`.
    fn stop_requested(&mut self) -> bool {
        false
    }
}

impl PrepareObserver for () {}

/// What prepare did.
#[derive(Debug, Clone, Copy)]
pub struct PrepareSummary {
    pub bytes_written: u64,
    pub seconds: f64,
    /// The observer asked to stop before every file was complete.
    pub stopped: bool,
}

impl PrepareSummary {
    /// The end of a prepare, local or over NFS: sysbench's closing NOTICE
    /// line (`sb_file_prepare` in sysbench's fileio.c), then the summary.
    pub(crate) fn finish(
        total: u64,
        start: std::time::Instant,
        stopped: bool,
        say: &mut dyn FnMut(&str),
    ) -> PrepareSummary {
        let seconds = start.elapsed().as_secs_f64();
        if stopped {
            say(&format!("Stopped after {total} bytes."));
        } else if total > 0 {
            say(&format!(
                "{} bytes written in {:.2} seconds ({:.2} MiB/sec).",
                total,
                seconds,
                total as f64 / 1048576.0 / seconds
            ));
        } else {
            say("No bytes written.");
        }
        PrepareSummary {
            bytes_written: total,
            seconds,
            stopped,
        }
    }
}

/// `prepare`: create or extend every file by appending whole blocks (files are
/// rounded up to a block multiple and never truncated). `say` prints a NOTICE line.
pub fn prepare(
    files: &FileSet,
    say: &mut dyn FnMut(&str),
    observer: &mut dyn PrepareObserver,
) -> Result<PrepareSummary, Failure> {
    say(&format!(
        "{} files, {}Kb each, {}Mb total",
        files.file_num,
        files.file_size / 1024,
        (files.file_num * files.file_size) / 1048576
    ));
    say("Creating files for the test...");
    say(&format!(
        "Extra file open flags: {}",
        files.extra_flags.describe()
    ));
    if let FileStore::Nfs(target) = FileStore::of(files) {
        return nfs::prepare(target, files, say, observer);
    }
    let mut writer = ChunkWriter::new(files, LOCAL_PREPARE_CHUNK);
    let start = Instant::now();
    let mut total: u64 = 0;
    let mut stopped = false;
    for i in 0..files.file_num {
        if observer.stop_requested() {
            stopped = true;
            break;
        }
        observer.file_started(i, files.file_num);
        let path = files.file_path(i);
        let fd = open_to_prepare(&path, files)?;
        // SAFETY: fd is ours.
        let size = unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
        // lseek(2) returns -1 on error: then the file is written from the start.
        let size = u64::try_from(size).unwrap_or(0);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if size >= files.file_size {
            say(&format!("Reusing existing file {name}"));
        } else if size > 0 {
            say(&format!("Extending existing file {name}"));
        } else {
            say(&format!("Creating file {name}"));
        }
        match writer.extend(fd, size, files.file_size, observer, &mut total) {
            Ok(Extended::Complete) => {
                // SAFETY: fd is ours; sysbench ignores the fsync result too.
                unsafe {
                    libc::fsync(fd);
                    libc::close(fd);
                }
            }
            Ok(Extended::Stopped) => {
                // Unflushed data needs no fsync: the caller is about to give
                // the files up (quick removes them).
                // SAFETY: closing our fd.
                unsafe { libc::close(fd) };
                stopped = true;
                break;
            }
            Err(f) => {
                // SAFETY: closing our fd.
                unsafe { libc::close(fd) };
                return Err(f);
            }
        }
    }
    Ok(PrepareSummary::finish(total, start, stopped, say))
}

/// Open (creating it if need be) one test file for prepare to append to.
fn open_to_prepare(path: &Path, files: &FileSet) -> Result<RawFd, Failure> {
    let c = cpath(path);
    // SAFETY: plain open(2).
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC | files.extra_flags.open_flags(),
            0o600,
        )
    };
    if fd < 0 {
        return Err(Failure::fatal(format!(
            "Can't open file {}",
            errno_text(errno())
        )));
    }
    Ok(fd)
}

/// How [`ChunkWriter::extend`] ended.
enum Extended {
    Complete,
    /// The observer asked to stop.
    Stopped,
}

/// Prepare's writes: whole blocks, many per system call, from one buffer.
pub(crate) struct ChunkWriter {
    buf: AlignedBuf,
    block: usize,
    blocks_per_chunk: usize,
    /// Fills `--validate` blocks (and the `--file-data=random` buffer once).
    rng: Xoroshiro,
    validate: bool,
}

impl ChunkWriter {
    /// A writer of up to `chunk` bytes per call (whole blocks, at least one).
    pub(crate) fn new(files: &FileSet, chunk: usize) -> ChunkWriter {
        // Lossless on 64-bit targets; on 32-bit ones too, because the block
        // size is a C int (the option parser refuses more than i32::MAX).
        #[allow(clippy::cast_possible_truncation)]
        let block = files.block_size as usize;
        // Write in chunks of whole blocks: the final size is the same as with
        // block-sized writes, with fewer system calls.
        let blocks_per_chunk = chunk / block;
        let blocks_per_chunk = blocks_per_chunk.max(1);
        let mut buf = AlignedBuf::new(block * blocks_per_chunk);
        // sysbench's prepare never seeds its RNG, so validated content is the same on
        // every prepare; we keep that property with a fixed seed.
        let mut rng = {
            let mut g = GlibcRandom::new(1);
            Xoroshiro::from_glibc(&mut g)
        };
        if files.data == DataPattern::Random && !files.validate {
            fill_random(buf.as_mut_slice(), &mut rng);
        }
        ChunkWriter {
            buf,
            block,
            blocks_per_chunk,
            rng,
            validate: files.validate,
        }
    }

    /// Bytes per chunk at most (whole blocks).
    pub(crate) fn max_len(&self) -> usize {
        self.block * self.blocks_per_chunk
    }

    pub(crate) fn block(&self) -> usize {
        self.block
    }

    /// The data of `len` bytes (whole blocks, at most `max_len`) to write at
    /// `offset`: `--validate` blocks carry their offset and checksum.
    pub(crate) fn chunk(&mut self, offset: u64, len: usize) -> &[u8] {
        let block = self.block;
        if self.validate {
            for (k, b) in self.buf.as_mut_slice()[..len].chunks_mut(block).enumerate() {
                fill_checked_block(b, offset + (k * block) as u64, &mut self.rng);
            }
        }
        &self.buf.as_slice()[..len]
    }

    /// Append blocks to `fd` from `offset` until the file holds `file_size`
    /// bytes, adding what was written to `total`.
    fn extend(
        &mut self,
        fd: RawFd,
        mut offset: u64,
        file_size: u64,
        observer: &mut dyn PrepareObserver,
        total: &mut u64,
    ) -> Result<Extended, Failure> {
        let block = self.block;
        while offset < file_size {
            let remaining_blocks = (file_size - offset).div_ceil(block as u64);
            let n_blocks = usize::try_from(remaining_blocks)
                .map_or(self.blocks_per_chunk, |r| r.min(self.blocks_per_chunk));
            let len = n_blocks * block;
            self.chunk(offset, len);
            // SAFETY: buffer holds len bytes.
            let rc = unsafe {
                libc::pwrite(
                    fd,
                    self.buf.as_ptr() as *const libc::c_void,
                    len,
                    offset as libc::off_t,
                )
            };
            // pwrite(2) returns -1 on error, else the bytes written.
            let Ok(written) = usize::try_from(rc) else {
                return Err(Failure::fatal(format!(
                    "Failed to write file! {}",
                    errno_text(errno())
                )));
            };
            offset += written as u64;
            *total += written as u64;
            observer.bytes_written(*total);
            if offset / WRITEBACK_STEP > (offset - written as u64) / WRITEBACK_STEP {
                // Start writeback of the step just completed so the disk works
                // while we fill the next one; the fsync at the end of the file
                // then waits for little. Advisory: errors surface at fsync.
                let step_start = (offset / WRITEBACK_STEP - 1) * WRITEBACK_STEP;
                // SAFETY: plain syscall on our fd.
                unsafe {
                    libc::sync_file_range(
                        fd,
                        step_start as libc::off64_t,
                        WRITEBACK_STEP as libc::off64_t,
                        libc::SYNC_FILE_RANGE_WRITE,
                    )
                };
            }
            if observer.stop_requested() {
                return Ok(Extended::Stopped);
            }
            // A short write leaves the rest for the next call (disk full shows
            // up as an error there), rather than sysbench's silent truncation.
        }
        Ok(Extended::Complete)
    }
}

/// `cleanup`: remove `test_file.0` … `test_file.<N-1>`, ignoring every error.
pub fn cleanup(files: &FileSet, say: &mut dyn FnMut(&str)) {
    if let FileStore::Nfs(target) = FileStore::of(files) {
        return nfs::cleanup(target, files, say);
    }
    say("Removing test files...");
    for i in 0..files.file_num {
        let _ = std::fs::remove_file(files.file_path(i));
    }
}

/// `fmt(x)` of sysbench's run header: divide by 1024 up to 4 times, `%.5g`, unit.
pub(crate) fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["Ki", "Mi", "Gi", "Ti"];
    let mut x = bytes as f64;
    let mut unit = "";
    let mut i = 0;
    while x >= 1024.0 && i < 4 {
        x /= 1024.0;
        unit = UNITS[i];
        i += 1;
    }
    format!("{}{}", format_g5(x), unit)
}

/// C's `%.5g`.
pub(crate) fn format_g5(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    // Round to 5 significant digits first; rounding can bump the exponent.
    let formatted = format!("{:.4e}", x);
    let (mantissa, e) = formatted.split_once('e').expect("exponent form");
    let e: i32 = e.parse().expect("exponent digits");
    if !(-4..5).contains(&e) {
        let m = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    // e is in -4..5 here, so there are 0 to 8 decimals.
    let decimals = usize::try_from(4 - e).unwrap_or(0);
    let s = format!("{:.*}", decimals, x);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// seqwr writes its files anew: remove `path` (the test file `name`) and
/// create it empty, exclusively.
fn recreate_for_seqwr(path: &CString, name: &str) -> Result<(), Failure> {
    // SAFETY: unlink/open on our own test file name.
    unsafe {
        libc::unlink(path.as_ptr());
        let fd = libc::open(
            path.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
            0o600,
        );
        if fd < 0 {
            // sysbench 1.0.20 closes the failed descriptor (-1) before it
            // prints errno, so it always says EBADF; under its name that is
            // the line, under tankbench's the open's errno.
            let shown = if crate::failure::invoked_as_sysbench() {
                libc::EBADF
            } else {
                errno()
            };
            return Err(Failure::fatal(format!(
                "Cannot create file '{name}' {}",
                errno_text(shown)
            )));
        }
        libc::close(fd);
    }
    Ok(())
}

/// Open the files for a run (after the header is printed): seqwr recreates them;
/// every mode opens them read-write with the extra flags and checks sizes.
/// `debug` receives DEBUG lines.
pub fn open_for_run(w: &RunSpec, debug: &mut dyn FnMut(&str)) -> Result<OpenFiles, Failure> {
    let mode = w.mode;
    if let FileStore::Nfs(target) = FileStore::of(&w.files) {
        return nfs::open_for_run(target, w, debug);
    }
    let mut files = OpenFiles {
        // A capacity hint: --file-num is a C int, which fits usize.
        fds: Vec::with_capacity(usize::try_from(w.files.file_num).unwrap_or(0)),
        maps: Vec::new(),
        nfs: None,
    };
    for i in 0..w.files.file_num {
        let path = w.files.file_path(i);
        let c = cpath(&path);
        let name = w.files.display_name(i);
        if mode == Mode::SeqWr {
            recreate_for_seqwr(&c, &name)?;
        }
        debug(&format!("Opening file: {name}"));
        // SAFETY: plain open(2).
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDWR | libc::O_CLOEXEC | w.files.extra_flags.open_flags(),
                0o600,
            )
        };
        if fd < 0 {
            return Err(Failure::fatal(format!(
                "Cannot open file '{name}' {}",
                errno_text(errno())
            ))
            .then(
                Stream::Stdout,
                "WARNING: Did you forget to run the prepare step?",
            ));
        }
        files.fds.push(fd);
        if mode != Mode::SeqWr {
            let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            if size < w.files.file_size {
                return Err(Failure::fatal(format!(
                    "Size of file '{name}' is {}B, but at least {}B is expected.",
                    format_size(size),
                    format_size(w.files.file_size)
                ))
                .then(
                    Stream::Stdout,
                    "WARNING: Did you run 'prepare' with different --file-total-size or --file-num values?",
                ));
            }
        }
        if w.io_mode == IoMode::Mmap {
            if mode == Mode::SeqWr {
                // SAFETY: extend our freshly created file (sparse).
                unsafe { libc::ftruncate(fd, w.files.file_size as libc::off_t) };
            }
            let Ok(len) = usize::try_from(w.files.file_size) else {
                return Err(Failure::fatal(format!(
                    "--file-io-mode=mmap: files of {} bytes do not fit the address space of this {}-bit system; use smaller or more files, or --file-io-mode=sync",
                    w.files.file_size,
                    usize::BITS
                )));
            };
            // SAFETY: mapping a file we hold open, length checked above.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            };
            if ptr == libc::MAP_FAILED {
                return Err(Failure::fatal(format!(
                    "mmap() failed for file '{name}' {}",
                    errno_text(errno())
                )));
            }
            files.maps.push(Mapping {
                ptr: ptr as *mut u8,
                len,
            });
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_like_sysbench() {
        assert_eq!(format_size(16384), "16Ki");
        assert_eq!(format_size(1000), "1000");
        assert_eq!(format_size(34952533), "33.333Mi");
        assert_eq!(format_size(104857599), "100Mi");
        assert_eq!(format_size(0), "0");
        assert_eq!(format_size(68266), "66.666Ki");
        assert_eq!(format_size(128 << 20), "128Mi");
        assert_eq!(format_size(4 << 30), "4Gi");
    }

    /// Asks to stop after `chunks` chunks have been written.
    struct StopAfter {
        chunks: u32,
        asked_after_write: u32,
    }

    impl PrepareObserver for StopAfter {
        fn bytes_written(&mut self, _total: u64) {
            self.asked_after_write += 1;
        }
        fn stop_requested(&mut self) -> bool {
            self.asked_after_write >= self.chunks
        }
    }

    #[test]
    fn prepare_stops_between_chunks_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let words: Vec<String> = [
            "fileio".to_string(),
            format!("--file-dir={}", dir.path().display()),
            "--file-total-size=8M".into(),
            "--file-num=2".into(),
        ]
        .into();
        let mut a = crate::sysbench::args::ParsedArgs::parse(&words);
        let g = crate::options::GeneralOptions::from_args(&mut a).unwrap();
        let w = FileSet::from_args(&a, &g).unwrap();
        let mut observer = StopAfter {
            chunks: 2,
            asked_after_write: 0,
        };
        let summary = prepare(&w, &mut |_| {}, &mut observer).unwrap();
        assert!(summary.stopped);
        // Two chunks, then nothing more: the second file was never begun.
        assert_eq!(summary.bytes_written, 2 * LOCAL_PREPARE_CHUNK as u64);
        assert_eq!(
            std::fs::metadata(w.file_path(0)).unwrap().len(),
            2 * LOCAL_PREPARE_CHUNK as u64
        );
        assert!(!w.file_path(1).exists());
        // Without a stop, every file is complete.
        let summary = prepare(&w, &mut |_| {}, &mut ()).unwrap();
        assert!(!summary.stopped);
        assert_eq!(std::fs::metadata(w.file_path(1)).unwrap().len(), 4 << 20);
    }

    /// The bytes each write call added.
    #[derive(Default)]
    struct WriteSizes {
        last_total: u64,
        sizes: Vec<u64>,
    }

    impl PrepareObserver for WriteSizes {
        fn bytes_written(&mut self, total: u64) {
            self.sizes.push(total - self.last_total);
            self.last_total = total;
        }
    }

    #[test]
    fn a_local_prepare_writes_16_kib_per_call() {
        // 256 KiB and 64 KiB calls made prepare's rounds swing between
        // 0.3x and 1.9x sysbench's rate on ext4 (issue 37); 16 KiB kept
        // them steady.
        let dir = tempfile::tempdir().unwrap();
        let w = FileSet::builder()
            .dir(dir.path())
            .file_num(2)
            .total_size(2 << 20)
            .build()
            .unwrap();
        let mut sizes = WriteSizes::default();
        let summary = prepare(&w, &mut |_| {}, &mut sizes).unwrap();
        assert_eq!(summary.bytes_written, 2 << 20);
        assert_eq!(sizes.sizes.len(), 128, "{:?}", sizes.sizes);
        assert!(
            sizes.sizes.iter().all(|&n| n == 16 << 10),
            "{:?}",
            sizes.sizes
        );
    }

    #[test]
    fn prepare_reports_a_failed_write_with_its_errno() {
        // Writes to /dev/full fail with ENOSPC (full(4)): a full disk on demand.
        if !Path::new("/dev/full").exists() {
            eprintln!("skipped: /dev/full is missing");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let words: Vec<String> = [
            "fileio".to_string(),
            format!("--file-dir={}", dir.path().display()),
            "--file-total-size=1M".into(),
            "--file-num=2".into(),
        ]
        .into();
        let mut a = crate::sysbench::args::ParsedArgs::parse(&words);
        let g = crate::options::GeneralOptions::from_args(&mut a).unwrap();
        let w = FileSet::from_args(&a, &g).unwrap();
        std::os::unix::fs::symlink("/dev/full", w.file_path(0)).unwrap();
        let mut said = Vec::new();
        let failure = prepare(&w, &mut |l| said.push(l.to_string()), &mut ()).unwrap_err();
        assert_eq!(
            failure.lines[0].1,
            format!(
                "FATAL: Failed to write file! errno = {} ({})",
                libc::ENOSPC,
                strerror(libc::ENOSPC)
            )
        );
        assert_eq!(failure.exit_code, 1);
        // Prepare stops at the failure: the second file is never begun.
        assert!(!w.file_path(1).exists());
        assert!(
            said.iter().any(|l| l == "Creating file test_file.0"),
            "{said:?}"
        );
    }
}
