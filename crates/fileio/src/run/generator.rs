//! Request generation: which operation, file, offset and size comes next.
//!
//! sysbench 1.0.20 generates every request under one global lock
//! (src/tests/fileio/sb_fileio.c at tag 1.0.20). We keep its exact semantics
//! but take the lock only where they need it: periodic
//! fsync bursts and `--validate` share a cursor and must be atomic; without them
//! random requests depend only on the thread's own RNG (plus the completion
//! counters for rndrw), and sequential requests on one atomic ticket, so the hot
//! path is lock-free. Generation stays race-free with any number of threads
//! (sysbench master/1.1 broke here: akopytov/sysbench issues #400, #430,
//! #431, #435).

use crate::rng::Xoroshiro;
use crate::spec::{Mode, RunSpec};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Fsync,
}

impl Op {
    /// sysbench's debug op code.
    pub fn code(self) -> u32 {
        match self {
            Op::Read => 1,
            Op::Write => 2,
            Op::Fsync => 3,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub op: Op,
    pub file: u32,
    pub pos: u64,
    pub size: u64,
}

impl Request {
    /// The `--debug` line sysbench 1.0.20 prints before executing a request.
    /// Its format string uses `%d` for every field (strings in the 1.0.20
    /// binary: `Executing request, operation: %d, file_id: %d, pos: %d, size: %d`),
    /// and on x86-64 a 64-bit offset passed to `%d` prints as its low 32 bits
    /// read as a signed int: positions from 2 GiB on come out negative and
    /// wrap every 4 GiB (observed with the real binary on a 3 GiB file:
    /// `pos: -1764409344`). Printed the same way so the lines compare.
    // Truncating to the low 32 bits is the point: it reproduces that `%d`.
    #[allow(clippy::cast_possible_truncation)]
    pub(crate) fn debug_line(&self) -> String {
        format!(
            "DEBUG: Executing request, operation: {}, file_id: {}, pos: {}, size: {}",
            self.op.code(),
            self.file as i32,
            self.pos as u32 as i32,
            self.size as u32 as i32
        )
    }

    /// The size as a buffer length.
    // Lossless on 64-bit targets; on 32-bit ones it still fits, because a
    // request is at most i32::MAX bytes (`RunSpec::check_runnable` refuses
    // larger ones, as sysbench cannot allocate them either).
    #[allow(clippy::cast_possible_truncation)]
    #[inline]
    pub(crate) fn transfer_len(&self) -> usize {
        self.size as usize
    }
}

/// A file number as requests carry it. `file` is below `--file-num`, which is
/// a C int as in sysbench (at most i32::MAX: the option parser refuses larger
/// values), so it fits a u32. Per request, so a proof rather than a check.
#[allow(clippy::cast_possible_truncation)]
#[inline]
pub(crate) fn file_index(file: u64) -> u32 {
    file as u32
}

/// Division by a run constant: a shift when it is a power of two (the usual
/// block and file sizes), a hardware divide otherwise. Divides cost tens of
/// cycles, a noticeable share of a request from page cache.
#[derive(Clone, Copy)]
struct FastDiv {
    divisor: u64,
    shift: Option<u32>,
}

impl FastDiv {
    fn new(divisor: u64) -> FastDiv {
        FastDiv {
            divisor,
            shift: divisor.is_power_of_two().then(|| divisor.trailing_zeros()),
        }
    }
    #[inline]
    fn div(self, x: u64) -> u64 {
        match self.shift {
            Some(s) => x >> s,
            None => x / self.divisor,
        }
    }
    #[inline]
    fn rem(self, x: u64) -> u64 {
        match self.shift {
            Some(_) => x & (self.divisor - 1),
            None => x % self.divisor,
        }
    }
}

/// State behind the lock (only used when semantics need it).
struct Cursor {
    current_file: u64,
    position: u64,
    /// [`Mode::SeqRw`]'s reads go on from here (its writes from
    /// `current_file`/`position`).
    read_file: u64,
    read_position: u64,
    fsynced_file: u64,
    is_dirty: bool,
    req_performed: u64,
    /// Last (file, pos) per thread, for --validate collision avoidance.
    last: Vec<(u64, u64)>,
}

pub struct Generator {
    mode: Mode,
    file_num: u64,
    file_size: u64,
    block_size: u64,
    request_size: u64,
    fsync_freq: u64,
    rw_ratio: f64,
    validate: bool,
    threads: usize,
    locked: bool,
    total_size_f64: f64,
    block_div: FastDiv,
    file_div: FastDiv,
    cursor: Mutex<Cursor>,
    /// Lock-free sequential ticket (request index since start).
    seq_ticket: AtomicU64,
    /// Completed reads and writes (all threads); rndrw's choice reads them.
    pub completed_reads: AtomicU64,
    pub completed_writes: AtomicU64,
}

impl Generator {
    pub fn new(w: &RunSpec) -> Generator {
        let mode = w.mode;
        let threads = w.threads as usize;
        Generator {
            mode,
            file_num: w.files.file_num,
            file_size: w.files.file_size,
            block_size: w.files.block_size,
            request_size: w.request_size(),
            fsync_freq: w.fsync_freq,
            rw_ratio: w.rw_ratio,
            validate: w.files.validate,
            threads,
            // SeqRw's two positions are kept under the lock.
            locked: w.fsync_freq > 0 || (w.files.validate && threads > 1) || mode == Mode::SeqRw,
            total_size_f64: w.files.total_size as f64,
            block_div: FastDiv::new(w.files.block_size),
            file_div: FastDiv::new(w.files.file_size.max(1)),
            cursor: Mutex::new(Cursor {
                current_file: 0,
                position: 0,
                read_file: 0,
                read_position: 0,
                fsynced_file: 0,
                is_dirty: false,
                req_performed: 0,
                last: vec![(u64::MAX, u64::MAX); threads],
            }),
            seq_ticket: AtomicU64::new(0),
            completed_reads: AtomicU64::new(0),
            completed_writes: AtomicU64::new(0),
        }
    }

    /// Whether rndrw's choice needs the completion counters updated.
    pub fn tracks_completions(&self) -> bool {
        self.mode.mixes()
    }

    #[inline]
    pub fn complete(&self, op: Op) {
        match op {
            Op::Read => self.completed_reads.fetch_add(1, Relaxed),
            Op::Write => self.completed_writes.fetch_add(1, Relaxed),
            Op::Fsync => 0,
        };
    }

    /// Reset rndrw's counters (a checkpoint report resets them in sysbench).
    pub(crate) fn reset_completions(&self) {
        self.completed_reads.store(0, Relaxed);
        self.completed_writes.store(0, Relaxed);
    }

    #[inline]
    fn random_op(&self) -> Op {
        match self.mode {
            Mode::RndRd => Op::Read,
            Mode::RndWr => Op::Write,
            _ => {
                let r = self.completed_reads.load(Relaxed) as f64;
                let w = self.completed_writes.load(Relaxed) as f64;
                if (r + 1.0) / (w + 1.0) < self.rw_ratio {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        }
    }

    /// A uniform block-aligned offset over `--file-total-size` (file_get_rand_rq in
    /// sb_fileio.c at sysbench 1.0.20). An offset
    /// in the unused remainder past the last file (sysbench reads past its file
    /// table there) is drawn again.
    #[inline]
    fn random_location(&self, rng: &mut Xoroshiro) -> (u64, u64, u64) {
        loop {
            let u = rng.next_f64();
            // 0 <= u < 1 and the total size is below 2^63, so the product is a
            // finite non-negative value that fits i64: the plain conversion
            // needs none of the saturation checks of `as u64`, and dropping the
            // fraction is the rounding down sysbench does.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let t = (u * self.total_size_f64) as i64 as u64;
            let t = t - self.block_div.rem(t);
            let file = self.file_div.div(t);
            if file >= self.file_num {
                continue;
            }
            let pos = t - file * self.file_size;
            let size = self.block_size.min(self.file_size - pos);
            return (file, pos, size);
        }
    }

    fn seq_op(&self) -> Op {
        match self.mode {
            Mode::SeqRd => Op::Read,
            Mode::SeqRw => self.random_op(),
            _ => Op::Write,
        }
    }

    /// The next request for thread `thread` (callers that never stop a
    /// `--validate` run from another thread: the simulator, durability).
    #[inline]
    pub fn next(&self, rng: &mut Xoroshiro, thread: usize) -> Request {
        static NEVER: AtomicBool = AtomicBool::new(false);
        self.next_unless_stopped(rng, thread, &NEVER)
            .expect("the stop flag is never raised")
    }

    /// The next request for thread `thread`; `None` when `stop` was raised
    /// while the thread waited for a block no other thread works on
    /// (`--validate`), so a deadline or Ctrl-C ends that wait too.
    #[inline]
    pub(crate) fn next_unless_stopped(
        &self,
        rng: &mut Xoroshiro,
        thread: usize,
        stop: &AtomicBool,
    ) -> Option<Request> {
        if self.locked {
            return self.next_locked(rng, thread, stop);
        }
        Some(if self.mode.is_random() {
            let op = self.random_op();
            let (file, pos, size) = self.random_location(rng);
            Request {
                op,
                file: file_index(file),
                pos,
                size,
            }
        } else {
            let k = self.seq_ticket.fetch_add(1, Relaxed);
            self.sequential_at(k)
        })
    }

    /// Whether a `--validate` random run keeps threads off each other's
    /// blocks (the collision wait in [`Self::next_locked`]).
    fn avoids_collisions(&self) -> bool {
        self.validate && self.threads > 1 && self.mode.is_random()
    }

    /// The k-th sequential request: files in order, wrapping around; the last
    /// request of a file is short when the file size is not a multiple.
    fn sequential_at(&self, k: u64) -> Request {
        let per_file = self.file_size.div_ceil(self.request_size);
        let file = (k / per_file) % self.file_num;
        let pos = (k % per_file) * self.request_size;
        Request {
            op: self.seq_op(),
            file: file_index(file),
            pos,
            size: self.request_size.min(self.file_size - pos),
        }
    }

    fn next_locked(
        &self,
        rng: &mut Xoroshiro,
        thread: usize,
        stop: &AtomicBool,
    ) -> Option<Request> {
        let mut c = self.cursor.lock().expect("generator lock");
        let op = if self.mode.is_random() {
            self.random_op()
        } else {
            self.seq_op()
        };
        // Periodic fsync: after every F requests, one fsync per file, in a burst.
        // Sequential reads never dirty anything, so the check never fires there.
        if self.fsync_freq > 0
            && c.is_dirty
            && c.req_performed.is_multiple_of(self.fsync_freq)
            && (self.mode.is_random() || op == Op::Write)
        {
            let file = c.fsynced_file;
            c.fsynced_file += 1;
            if c.fsynced_file == self.file_num {
                c.fsynced_file = 0;
                c.is_dirty = false;
            }
            return Some(Request {
                op: Op::Fsync,
                file: file_index(file),
                pos: 0,
                size: 0,
            });
        }
        let req = if self.mode.is_random() {
            let (mut file, mut pos, mut size) = self.random_location(rng);
            if self.avoids_collisions() {
                // Two threads must not work on the same block at once, or the
                // checksum of one could be read half-written by the other.
                // With at most one thread per block some block is always free
                // (`check_validate_threads` refuses more threads), but the
                // draws until one comes up are many when nearly every block is
                // taken, and every other thread waits on this lock meanwhile:
                // the stop flag ends the wait, as it ends the run.
                let mut draws = 0u32;
                while c
                    .last
                    .iter()
                    .enumerate()
                    .any(|(t, &l)| t != thread && l == (file, pos))
                {
                    draws = draws.wrapping_add(1);
                    if draws.is_multiple_of(64) && stop.load(Relaxed) {
                        return None;
                    }
                    (file, pos, size) = self.random_location(rng);
                }
            }
            c.last[thread] = (file, pos);
            Request {
                op,
                file: file_index(file),
                pos,
                size,
            }
        } else {
            let c = &mut *c;
            let (file, position) = if self.mode == Mode::SeqRw && op == Op::Read {
                (&mut c.read_file, &mut c.read_position)
            } else {
                (&mut c.current_file, &mut c.position)
            };
            if *file == self.file_num {
                *file = 0;
                *position = 0;
            }
            let size = self.request_size.min(self.file_size - *position);
            let req = Request {
                op,
                file: file_index(*file),
                pos: *position,
                size,
            };
            *position += size;
            if *position >= self.file_size {
                *file += 1;
                *position = 0;
            }
            req
        };
        c.req_performed += 1;
        if op == Op::Write {
            c.is_dirty = true;
        }
        Some(req)
    }
}

/// fio's `fsync=N` for one thread ([`RunSpec::sync_every_writes`]): when a
/// sync comes before the thread's next request. Kept per thread, as fio
/// keeps its counts per job; the runner and the simulator both ask it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SyncEveryWrites {
    every: u64,
    writes: u64,
    last_was_sync: bool,
    last_written: u32,
}

impl SyncEveryWrites {
    pub fn new(every: u64) -> SyncEveryWrites {
        SyncEveryWrites {
            every,
            ..SyncEveryWrites::default()
        }
    }

    /// The file to sync before the next request, if one is due: the
    /// thread's writes are a (non-zero) multiple of N and the last request
    /// was not a sync. Calling it again before [`Self::issued`] says none.
    #[inline]
    pub fn due(&mut self) -> Option<u32> {
        if self.every == 0
            || self.last_was_sync
            || self.writes == 0
            || !self.writes.is_multiple_of(self.every)
        {
            return None;
        }
        self.last_was_sync = true;
        Some(self.last_written)
    }

    /// A request was made.
    #[inline]
    pub fn issued(&mut self, req: &Request) {
        self.last_was_sync = false;
        if req.op == Op::Write {
            self.writes += 1;
            self.last_written = req.file;
        }
    }
}

/// The most threads a `--validate` run can have (the blocks its random
/// requests pick from), or None when there is no limit (see
/// `RunSpec::validate_threads`).
pub(crate) fn validate_thread_limit(w: &RunSpec) -> Option<u64> {
    // Decided from the settings alone: a Generator holds state per thread,
    // and this check must cost nothing for a workload that asks for 10^9
    // threads (the simulator refuses those itself, after this check).
    let avoids_collisions = w.files.validate && w.threads > 1 && w.mode.is_random();
    avoids_collisions.then(|| random_blocks(w))
}

/// How many distinct blocks a random request can land on: the block-aligned
/// offsets below the end of the last file.
pub(crate) fn random_blocks(w: &RunSpec) -> u64 {
    (w.files.file_num * w.files.file_size).div_ceil(w.files.block_size.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::GeneralOptions;
    use crate::sysbench::args::ParsedArgs;
    use crate::workload::WorkloadError;

    /// fio 3.33 with ioengine=null: randwrite fsync=1 on 100 writes makes 99
    /// syncs (none after the last write), fsync=3 makes 33, and a read after
    /// the Nth write is synced before as well.
    #[test]
    fn syncs_every_n_writes_follow_fio() {
        let req = |op| Request {
            op,
            file: 0,
            pos: 0,
            size: 4096,
        };
        let count = |every: u64, ops: &[Op]| {
            let mut s = SyncEveryWrites::new(every);
            let mut syncs = 0;
            for &op in ops {
                if s.due().is_some() {
                    syncs += 1;
                }
                s.issued(&req(op));
            }
            syncs
        };
        assert_eq!(count(1, &[Op::Write; 100]), 99);
        assert_eq!(count(3, &[Op::Write; 100]), 33);
        assert_eq!(count(0, &[Op::Write; 100]), 0);
        // W S R S R S W W W S R
        let mixed = [
            Op::Write,
            Op::Read,
            Op::Read,
            Op::Write,
            Op::Write,
            Op::Write,
            Op::Read,
        ];
        assert_eq!(count(1, &mixed), 6);
        assert_eq!(
            count(2, &mixed),
            2,
            "after the 2nd write, not after the 3rd"
        );
        let mut s = SyncEveryWrites::new(1);
        s.issued(&req(Op::Write));
        assert_eq!(s.due(), Some(0));
        assert_eq!(s.due(), None, "one sync until the next request");
    }

    #[test]
    fn debug_lines_print_positions_as_sysbench_32_bit_ints() {
        let line = |pos: u64| {
            Request {
                op: Op::Read,
                file: 0,
                pos,
                size: 16384,
            }
            .debug_line()
        };
        assert_eq!(
            line(2_041_446_400),
            "DEBUG: Executing request, operation: 1, file_id: 0, pos: 2041446400, size: 16384"
        );
        // 2 GiB and beyond: the low 32 bits as a signed int, as sysbench prints.
        assert!(line(2_530_557_952).ends_with("pos: -1764409344, size: 16384"));
        assert!(line(1 << 31).ends_with("pos: -2147483648, size: 16384"));
        assert!(line((4 << 30) + 16384).ends_with("pos: 16384, size: 16384"));
        let fsync = Request {
            op: Op::Fsync,
            file: 3,
            pos: 0,
            size: 0,
        };
        assert_eq!(
            fsync.debug_line(),
            "DEBUG: Executing request, operation: 3, file_id: 3, pos: 0, size: 0"
        );
    }

    fn workload(words: &[&str]) -> RunSpec {
        let mut a = ParsedArgs::parse(words.iter().copied());
        let g = GeneralOptions::from_args(&mut a).unwrap();
        RunSpec::from_args(&a, &g).unwrap()
    }

    /// Simulate a single-threaded sync run: completions follow generation.
    fn trace(w: &RunSpec, n: usize) -> Vec<Request> {
        let g = Generator::new(w);
        let mut rng = Xoroshiro::from_state(1, 2);
        (0..n)
            .map(|_| {
                let r = g.next(&mut rng, 0);
                g.complete(r.op);
                r
            })
            .collect()
    }

    fn ops(reqs: &[Request]) -> String {
        reqs.iter()
            .map(|r| match r.op {
                Op::Read => 'R',
                Op::Write => 'W',
                Op::Fsync => 'F',
            })
            .collect()
    }

    #[test]
    fn rndrw_pattern_and_fsync_bursts_match_sysbench() {
        let w = workload(&[
            "--file-total-size=64M",
            "--file-num=4",
            "--file-test-mode=rndrw",
            "--file-fsync-freq=10",
        ]);
        let t = trace(&w, 30);
        assert_eq!(ops(&t), "RWRWRRWRWRFFFFRWRWRRWRWRFFFFRW");
        let fsync_files: Vec<u32> = t
            .iter()
            .filter(|r| r.op == Op::Fsync)
            .map(|r| r.file)
            .collect();
        assert_eq!(fsync_files, vec![0, 1, 2, 3, 0, 1, 2, 3]);
    }

    #[test]
    fn seqrw_mixes_by_the_ratio_with_a_position_per_direction() {
        let w = RunSpec::builder()
            .files(
                crate::spec::FileSet::builder()
                    .file_num(2)
                    .total_size(64 << 10)
                    .block_size(4096),
            )
            .mode(Mode::SeqRw)
            .rw_ratio(1.0)
            .fsync_freq(0)
            .build()
            .unwrap();
        let t = trace(&w, 20);
        assert_eq!(&ops(&t)[..8], "WRWRWRWR");
        let positions = |op| {
            t.iter()
                .filter(|r| r.op == op)
                .map(|r| (r.file, r.pos))
                .collect::<Vec<_>>()
        };
        // 32 KiB files of 8 blocks: each direction from the start, on its own.
        let expect: Vec<(u32, u64)> = (0..10u64)
            .map(|k| (u32::from(k >= 8), (k % 8) * 4096))
            .collect();
        assert_eq!(positions(Op::Write), expect);
        assert_eq!(positions(Op::Read), expect);
    }

    #[test]
    fn rndrw_ratios() {
        for (ratio, expect) in [
            ("2", "RWRRWRRW"),
            ("1", "WRWRWRWR"),
            ("0.5", "WWRWWRWW"),
            ("0", "WWWWWWWW"),
        ] {
            let w = workload(&[
                "--file-total-size=64M",
                "--file-num=4",
                "--file-test-mode=rndrw",
                "--file-fsync-freq=0",
                &format!("--file-rw-ratio={ratio}"),
            ]);
            assert_eq!(ops(&trace(&w, 8)), expect, "ratio {ratio}");
        }
    }

    #[test]
    fn sequential_wraps_with_short_last_request() {
        let w = workload(&[
            "--file-total-size=200K",
            "--file-num=3",
            "--file-test-mode=seqrd",
            "--file-block-size=16K",
            "--file-merged-requests=2",
        ]);
        // file_size 68266: 32768, 32768, 2730 per file.
        let t = trace(&w, 10);
        let sizes: Vec<u64> = t.iter().map(|r| r.size).collect();
        assert_eq!(
            sizes,
            vec![32768, 32768, 2730, 32768, 32768, 2730, 32768, 32768, 2730, 32768]
        );
        assert_eq!(t[9].file, 0, "wraps to file 0");
    }

    #[test]
    fn seqwr_bursts_after_freq_writes() {
        let w = workload(&[
            "--file-total-size=256K",
            "--file-num=2",
            "--file-test-mode=seqwr",
            "--file-fsync-freq=10",
        ]);
        let t = trace(&w, 30);
        assert_eq!(ops(&t), "WWWWWWWWWWFFWWWWWWWWWWFFWWWWWW");
        assert_eq!((t[8].file, t[8].pos), (1, 0));
        assert_eq!((t[12].file, t[12].pos), (1, 32768));
    }

    #[test]
    fn lock_free_sequential_equals_locked() {
        let w = workload(&[
            "--file-total-size=200K",
            "--file-num=3",
            "--file-test-mode=seqrewr",
            "--file-fsync-freq=0",
        ]);
        let free = trace(&w, 40);
        let g = Generator::new(&w);
        let mut rng = Xoroshiro::from_state(1, 2);
        let no_stop = AtomicBool::new(false);
        let locked: Vec<Request> = (0..40)
            .map(|_| g.next_locked(&mut rng, 0, &no_stop).unwrap())
            .collect();
        assert_eq!(free, locked);
    }

    fn validate_run(extra: &[&str]) -> RunSpec {
        let mut words = vec![
            "--file-total-size=256K",
            "--file-num=4",
            "--file-block-size=4K",
            "--validate",
        ];
        words.extend_from_slice(extra);
        workload(&words)
    }

    #[test]
    fn validate_refuses_more_threads_than_blocks_only() {
        let w = validate_run(&["--file-test-mode=rndrw", "--threads=64"]);
        assert_eq!(random_blocks(&w), 64);
        assert!(w.validate_threads().is_ok());
        let w = validate_run(&["--file-test-mode=rndrd", "--threads=65"]);
        let e = w.validate_threads().unwrap_err();
        assert_eq!(
            e,
            WorkloadError::ValidateThreads {
                threads: 65,
                blocks: 64,
                block_size: 4096
            }
        );
        let text = e.to_string();
        assert!(
            text.starts_with("Invalid value for --threads: 65"),
            "{text}"
        );
        assert!(text.contains("at most 64 threads"), "{text}");
        // Sequential modes never wait for a block; without --validate nothing does.
        let w = validate_run(&["--file-test-mode=seqwr", "--threads=65"]);
        assert!(w.validate_threads().is_ok());
        let w = workload(&[
            "--file-total-size=256K",
            "--file-block-size=4K",
            "--file-test-mode=rndrw",
            "--threads=65",
        ]);
        assert!(w.validate_threads().is_ok());
        // A partial last block of a file counts: 3 files of 87381 bytes hold
        // 262143 bytes, 64 blocks of 4 KiB (the last one short).
        let w = workload(&[
            "--file-total-size=256K",
            "--file-num=3",
            "--file-block-size=4K",
            "--file-test-mode=rndwr",
            "--validate",
            "--threads=2",
        ]);
        assert_eq!(random_blocks(&w), 64);
    }

    #[test]
    fn a_thread_waiting_for_a_free_block_gives_up_on_stop() {
        // Two threads, one block (what check_validate_threads refuses): thread
        // 0 holds the block, so thread 1 can never get one; the stop flag is
        // its way out.
        let w = workload(&[
            "--file-total-size=4K",
            "--file-num=1",
            "--file-block-size=4K",
            "--file-test-mode=rndrd",
            "--validate",
            "--threads=2",
        ]);
        let g = Generator::new(&w);
        let mut rng = Xoroshiro::from_state(1, 2);
        let free = AtomicBool::new(false);
        assert!(g.next_unless_stopped(&mut rng, 0, &free).is_some());
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiting =
                s.spawn(|| g.next_unless_stopped(&mut Xoroshiro::from_state(3, 4), 1, &stop));
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(
                !waiting.is_finished(),
                "no block is free, so thread 1 waits"
            );
            stop.store(true, Relaxed);
            assert_eq!(waiting.join().unwrap(), None);
        });
    }
}
