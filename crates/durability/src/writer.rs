//! `durability write`: write records at the offsets fileio's request
//! generator picks, commit each one, and only then report it.
//!
//! The order per write is the whole point: the block is written, the commit
//! method makes it stable (fsync(2)/fdatasync(2) return, or an O_SYNC/O_DSYNC
//! write(2) returns), and only then is the acknowledgement queued for the
//! journal or the recorder. A report can be lost (the writer dies with it
//! queued), which only makes the check weaker, never wrong; a report can
//! never precede its commit.

use crate::client::{answer, connect, handshake};
use crate::error::{DurabilityError, RecorderProblem};
use crate::fileset::{self, Layout};
use crate::journal::{end_line, Ack, Commit, Session};
use crate::journal_file::{check_journal, open_journal};
use crate::options::{Sink, WriteOptions};
use crate::record::{encode, Aligned, Header, RunId};
use crate::wire::{never, write_all_by, Key, Limits, LineReader, Tagger, WireError};
use fileio::rng::{SeededStream, Xoroshiro};
use fileio::run::generator::{Generator, Op};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write as _};
use std::net::TcpStream;
use std::os::unix::fs::{FileExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a writer session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// `--time` ran out.
    TimeLimit,
    /// SIGINT or SIGTERM.
    Stopped,
    /// The storage under test failed: the expected end of a power cut.
    StorageGone(String),
    /// The recorder or the journal failed: nothing more could be reported.
    ReportingFailed(String),
    /// A writer thread could not be started (a pids limit, RLIMIT_NPROC):
    /// the threads that did start were stopped.
    ThreadsNotStarted(String),
}

#[derive(Debug, Clone)]
pub struct WriteSummary {
    pub run: RunId,
    pub ending: Ending,
    /// Writes whose commit returned.
    pub acknowledged: u64,
    /// Of those, reports handed to the recorder or written to the journal.
    pub reported: u64,
    pub elapsed_s: f64,
}

impl WriteSummary {
    /// The closing line.
    pub fn line(&self, sink: &Sink) -> String {
        let to = match sink {
            Sink::Recorder { addr, .. } => format!("the recorder at {addr}"),
            Sink::Journal(p) => format!("journal {}", p.display()),
        };
        let why = match &self.ending {
            Ending::TimeLimit => "time limit reached".to_string(),
            Ending::Stopped => "stopped by signal".to_string(),
            Ending::StorageGone(e) => format!("the storage under test failed ({e})"),
            Ending::ReportingFailed(e) => format!("reporting failed ({e})"),
            Ending::ThreadsNotStarted(e) => format!("writer threads could not be started ({e})"),
        };
        format!(
            "durability write: {why}: {} writes acknowledged, {} reported to {to} in {:.1} s (run {})",
            self.acknowledged, self.reported, self.elapsed_s, self.run
        )
    }

    /// Exit status: 0 for a planned end, 2 when the storage went away (the
    /// expected end of a power cut, told apart for scripts), 1 when reporting failed.
    pub fn exit_code(&self) -> i32 {
        match self.ending {
            Ending::TimeLimit | Ending::Stopped => 0,
            Ending::StorageGone(_) => 2,
            Ending::ReportingFailed(_) | Ending::ThreadsNotStarted(_) => 1,
        }
    }
}

/// Route SIGINT, SIGTERM and SIGHUP to the process's stop flag, which the
/// writer and the recorder poll (fileio's one policy: an ignored signal stays
/// ignored, a second one ends the process).
pub fn install_stop_handlers() {
    fileio::signals::StopHandlers::new().install();
}

/// Whether a stop signal arrived.
pub(crate) fn stop_requested() -> bool {
    fileio::signals::stop_requested()
}

/// Where reports go: a journal file or a recorder connection.
enum Reporter {
    Journal {
        out: BufWriter<File>,
        file: File,
    },
    Recorder {
        stream: TcpStream,
        tagger: Tagger,
        reader: LineReader,
        addr: String,
        /// Sealed lines not yet sent.
        wire: String,
    },
}

/// A recorder reached, with its key, before the session is announced.
struct Reached {
    stream: TcpStream,
    key: Key,
}

impl Reporter {
    /// Reach the destination before anything is created in DIR: a journal
    /// that is not one, a key that cannot be read, or a recorder that cannot
    /// be reached refuses the run with nothing written.
    fn reach(sink: &Sink) -> Result<Option<Reached>, DurabilityError> {
        match sink {
            Sink::Journal(path) => {
                check_journal(path)?;
                Ok(None)
            }
            Sink::Recorder { addr, key } => {
                let key = Key::load(key)?;
                let stream = connect(addr)?;
                cap_send_buffer(&stream);
                Ok(Some(Reached { stream, key }))
            }
        }
    }

    /// Open the session: its `S` line in the journal, or the hello and the
    /// session line the recorder must answer with an authenticated `OK`.
    fn open(
        sink: &Sink,
        reached: Option<Reached>,
        session: &Session,
        limits: &Limits,
    ) -> Result<Reporter, DurabilityError> {
        match (sink, reached) {
            (Sink::Recorder { addr, .. }, Some(Reached { stream, key })) => {
                let mut reader = LineReader::new(limits.max_line);
                let mut tagger = handshake(
                    &stream,
                    &mut reader,
                    addr,
                    &key,
                    limits,
                    "writer",
                    &[session.line()],
                )?;
                let reply = reader
                    .read(&stream, limits.line_deadline, limits.line_deadline, &never)
                    .map_err(|e| {
                        DurabilityError::recorder(
                            addr,
                            match e {
                                WireError::Closed => RecorderProblem::ClosedAtSession,
                                e => RecorderProblem::NoSessionAnswer(e),
                            },
                        )
                    })?;
                let reply = answer(&mut tagger, &reply).map_err(|problem| {
                    DurabilityError::recorder(
                        addr,
                        match problem {
                            RecorderProblem::Refused { reason } => {
                                RecorderProblem::RefusedSession { reason }
                            }
                            other => other,
                        },
                    )
                })?;
                if reply != "OK" {
                    return Err(DurabilityError::recorder(
                        addr,
                        RecorderProblem::NotOk {
                            answer: reply.chars().take(60).collect(),
                        },
                    ));
                }
                Ok(Reporter::Recorder {
                    stream,
                    tagger,
                    reader,
                    addr: addr.clone(),
                    wire: String::new(),
                })
            }
            (Sink::Recorder { addr, .. }, None) => Err(DurabilityError::recorder(
                addr,
                RecorderProblem::NotConnected,
            )),
            (Sink::Journal(path), _) => {
                let file = open_journal(path)?;
                let out = BufWriter::new(file.try_clone().map_err(DurabilityError::io(path))?);
                let mut r = Reporter::Journal { out, file };
                r.send(
                    &format!("{}\n", session.line()),
                    Instant::now() + limits.line_deadline,
                    &never,
                )?;
                Ok(r)
            }
        }
    }

    /// Hand `lines` (each ending in a newline) on by `deadline`: to the
    /// recorder's socket, each with its tag, or to the journal's storage
    /// (fdatasync: the batch is one flush, as a database groups commits).
    /// `stop` ends a wait on a recorder that stopped reading.
    fn send(
        &mut self,
        lines: &str,
        deadline: Instant,
        stop: &dyn Fn() -> bool,
    ) -> Result<(), DurabilityError> {
        match self {
            Reporter::Journal { out, file } => out
                .write_all(lines.as_bytes())
                .and_then(|()| out.flush())
                .and_then(|()| file.sync_data())
                .map_err(|source| DurabilityError::System {
                    what: "journal",
                    source,
                }),
            Reporter::Recorder {
                stream,
                tagger,
                addr,
                wire,
                ..
            } => {
                wire.clear();
                for line in lines.lines() {
                    tagger.seal(line, wire);
                }
                write_all_by(stream, wire.as_bytes(), deadline, stop).map_err(|e| {
                    DurabilityError::recorder(
                        addr,
                        match e {
                            WireError::Deadline(_) => RecorderProblem::StoppedTaking,
                            WireError::Stopped => RecorderProblem::StoppedWhileWaiting,
                            e => RecorderProblem::Wire(e),
                        },
                    )
                })
            }
        }
    }

    /// A keep-alive line, so the recorder tells a live writer whose storage
    /// hangs from one that lost power.
    fn keepalive(&mut self, deadline: Instant) -> Result<(), DurabilityError> {
        match self {
            Reporter::Journal { .. } => Ok(()),
            Reporter::Recorder { .. } => self.send("K\n", deadline, &stop_requested),
        }
    }

    /// Whether the recorder said something (it only ever refuses, e.g. when
    /// its journal is full) or closed the connection.
    fn recorder_refused(&mut self) -> Option<DurabilityError> {
        let Reporter::Recorder {
            stream,
            tagger,
            reader,
            addr,
            ..
        } = self
        else {
            return None;
        };
        let problem = match reader.poll(stream)? {
            Ok(line) => answer(tagger, &line)
                .err()
                .unwrap_or(RecorderProblem::UnexpectedLine),
            Err(e) => RecorderProblem::Wire(e),
        };
        Some(DurabilityError::recorder(addr, problem))
    }

    fn is_recorder(&self) -> bool {
        matches!(self, Reporter::Recorder { .. })
    }
}

/// The writer's socket send buffer: acknowledgements the kernel holds for a
/// recorder that is not reading stay this few (some 2000 lines), so a
/// recorder that stopped reading is noticed by the send deadline, not after
/// megabytes queued.
const SEND_BUFFER: libc::c_int = 256 << 10;

fn cap_send_buffer(stream: &TcpStream) {
    use std::os::unix::io::AsRawFd as _;
    let size = SEND_BUFFER;
    // SAFETY: setsockopt(2) on an open socket with a pointer to an int and
    // its size; a failure only leaves the kernel's default.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            std::ptr::from_ref(&size).cast::<libc::c_void>(),
            libc::socklen_t::try_from(std::mem::size_of::<libc::c_int>()).unwrap_or(4),
        );
    }
}

/// Stripes of locks over blocks: two threads never write the same block at
/// once, so a block's writes reach the file in sequence order and the last
/// acknowledged one is the newest issued (otherwise an older write could land
/// after a newer acknowledged one and look like a loss).
const STRIPES: usize = 4096;

/// How long workers get to finish their request after a stop before the
/// writer reports what is queued and leaves them (a request on storage that
/// is gone can block for as long as the mount's timeouts say).
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Acknowledgements queued for the reporter at most. When the recorder stops
/// taking them the workers wait here (the queue never grows past this) and
/// the reporter ends the run by its deadline, --time or a signal.
const ACK_QUEUE: usize = 65536;

fn stripe(file: u32, block: u64) -> usize {
    let h = (u64::from(file).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ block)
        .wrapping_mul(0xbf58_476d_1ce4_e5b9);
    usize::try_from(h >> 52).unwrap_or(0) % STRIPES
}

struct Shared {
    files: Vec<File>,
    generator: Generator,
    stripes: Vec<Mutex<()>>,
    seq: AtomicU64,
    acknowledged: AtomicU64,
    stop: AtomicBool,
    failure: Mutex<Option<Ending>>,
}

impl Shared {
    fn reporting_failed(&self) -> bool {
        matches!(
            *self
                .failure
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            Some(Ending::ReportingFailed(_))
        )
    }

    fn fail(&self, ending: Ending) {
        let mut f = self
            .failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if f.is_none() {
            *f = Some(ending);
        }
        self.stop.store(true, SeqCst);
    }
}

/// What every worker thread needs besides the shared state.
#[derive(Clone)]
struct Worker {
    run: RunId,
    generation: u32,
    layout: Layout,
    commit: Commit,
    dir: std::path::PathBuf,
}

/// Open the file set for writing with the commit method's flags.
fn open_files(opts: &WriteOptions, layout: &Layout) -> Result<Vec<File>, DurabilityError> {
    let mut flags = libc::O_NOFOLLOW;
    match opts.commit {
        Commit::OSync => flags |= libc::O_SYNC,
        Commit::ODsync => flags |= libc::O_DSYNC,
        Commit::Fsync | Commit::Fdatasync => {}
    }
    if opts.direct {
        flags |= libc::O_DIRECT;
    }
    (0..layout.file_num)
        .map(|i| {
            let p = fileset::file_path(&opts.dir, i);
            OpenOptions::new()
                .write(true)
                .custom_flags(flags)
                .open(&p)
                .map_err(DurabilityError::io(&p))
        })
        .collect()
}

/// Run a writer session. `say` receives progress lines (stderr).
pub fn write(
    opts: &WriteOptions,
    say: &mut dyn FnMut(&str),
) -> Result<WriteSummary, DurabilityError> {
    let spec = &opts.spec;
    let layout = Layout::of(&spec.files);
    let limits = Limits::from_env();
    // A thread count the process cannot hold would abort it midway (files
    // and journal left): refused before anything is made, as fileio does.
    fileio::run::runner::check_thread_budget(spec)?;
    // The destination of reports is checked before anything is created in DIR.
    let reached = Reporter::reach(&opts.sink)?;
    let planned = fileset::plan(&opts.dir, layout)?;
    let run = RunId::random().map_err(DurabilityError::getrandom)?;
    let session = Session {
        run,
        fileset: planned.id,
        generation: planned.generation,
        block_size: layout.block_size,
        file_num: layout.file_num,
        file_size: layout.file_size,
        mode: spec.mode.short_name().to_string(),
        commit: opts.commit,
        direct: opts.direct,
        threads: spec.threads,
        started: fileio::clock::utc_now_rfc3339(),
    };
    // The recorder accepts the session before anything is created in DIR
    // (a refusal leaves nothing behind) and before the first block is written.
    let mut reporter = Reporter::open(&opts.sink, reached, &session, &limits)?;
    let marker = match fileset::prepare(&opts.dir, &planned, say) {
        Ok(m) => m,
        Err(e) => {
            let end = format!("{}\n", end_line(&run, 0, "prepare_failed"));
            let _ = reporter.send(&end, Instant::now() + limits.line_deadline, &never);
            return Err(e);
        }
    };
    let shared = Arc::new(Shared {
        files: open_files(opts, &layout)?,
        generator: Generator::new(spec),
        stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        seq: AtomicU64::new(0),
        acknowledged: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        failure: Mutex::new(None),
    });
    say(&format!(
        "durability write: run {run}, file set {} generation {}, {} thread(s), {} x {} bytes, blocks of {}, commit {}{}",
        marker.id,
        marker.generation,
        spec.threads,
        layout.file_num,
        layout.file_size,
        layout.block_size,
        opts.commit.name(),
        if opts.direct { ", O_DIRECT" } else { "" }
    ));
    let start = Instant::now();
    let (tx, rx) = mpsc::sync_channel::<Ack>(ACK_QUEUE);
    let worker = Worker {
        run,
        generation: marker.generation,
        layout,
        commit: opts.commit,
        dir: opts.dir.clone(),
    };
    let mut threads = Vec::new();
    for t in 0..spec.threads {
        let mine = Arc::clone(&shared);
        let tx = tx.clone();
        let worker = worker.clone();
        let th = std::thread::Builder::new()
            .name(format!("durability-writer-{t}"))
            .spawn(move || writer_thread(&mine, &tx, t, &worker));
        match th {
            Ok(th) => threads.push(th),
            Err(e) => {
                shared.fail(Ending::ThreadsNotStarted(format!(
                    "{} of {} started: {e}",
                    threads.len(),
                    spec.threads
                )));
                break;
            }
        }
    }
    drop(tx);
    let mut pending = String::new();
    let mut reported = report_loop(
        opts,
        &limits,
        &shared,
        &rx,
        &threads,
        &mut reporter,
        &mut pending,
        start,
    );
    Ok(finish(
        &shared,
        &limits,
        &rx,
        &mut reporter,
        &mut pending,
        &mut reported,
        &run,
        start,
    ))
}

/// Write reports while the workers run; returns how many were written.
/// Ends once the workers stopped (or were given up on).
#[allow(clippy::too_many_arguments)]
fn report_loop(
    opts: &WriteOptions,
    limits: &Limits,
    shared: &Shared,
    rx: &mpsc::Receiver<Ack>,
    threads: &[std::thread::JoinHandle<()>],
    reporter: &mut Reporter,
    pending: &mut String,
    start: Instant,
) -> u64 {
    let dev = std::fs::metadata(&opts.dir).map(|m| m.dev()).ok();
    let mut reported = 0u64;
    let mut last_mount_check = Instant::now();
    let mut stop_seen: Option<Instant> = None;
    let end = (opts.time_s > 0).then(|| start + Duration::from_secs(opts.time_s));
    // A send waits for the recorder until its line deadline, never long past
    // --time (but at least a second, so a healthy recorder near the end is
    // not mistaken for a stuck one).
    let deadline = || {
        let now = Instant::now();
        let by_line = now + limits.line_deadline;
        end.map_or(by_line, |e| {
            by_line.min(e.max(now + Duration::from_secs(1)))
        })
    };
    let mut last_sent = Instant::now();
    loop {
        let mut batch = 0;
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(a) => {
                a.write_line(pending);
                batch += 1;
                while let Ok(a) = rx.try_recv() {
                    a.write_line(pending);
                    batch += 1;
                    if batch >= 4096 {
                        break;
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return reported,
        }
        if batch > 0 && !shared.reporting_failed() {
            match reporter.send(pending, deadline(), &stop_requested) {
                Ok(()) => {
                    reported += batch;
                    last_sent = Instant::now();
                }
                Err(e) => shared.fail(Ending::ReportingFailed(format!(
                    "{e}; {batch} acknowledgement(s) not reported"
                ))),
            }
            pending.clear();
        } else if reporter.is_recorder()
            && !shared.reporting_failed()
            && last_sent.elapsed() >= limits.keepalive()
        {
            match reporter.keepalive(deadline()) {
                Ok(()) => last_sent = Instant::now(),
                Err(e) => shared.fail(Ending::ReportingFailed(e.to_string())),
            }
        }
        // Batches past a failed report are dropped: the queue stays bounded
        // while the workers stop.
        pending.clear();
        if let Some(e) = reporter.recorder_refused() {
            shared.fail(Ending::ReportingFailed(e.to_string()));
        }
        if stop_requested() {
            shared.fail(Ending::Stopped);
        }
        if opts.time_s > 0 && start.elapsed() >= Duration::from_secs(opts.time_s) {
            shared.fail(Ending::TimeLimit);
        }
        if last_mount_check.elapsed() >= Duration::from_secs(1) {
            last_mount_check = Instant::now();
            // An unmounted file system under DIR: the writes may still go to
            // open files of a lazily detached mount, which no longer counts.
            let now = std::fs::metadata(&opts.dir).map(|m| m.dev()).ok();
            if now != dev {
                shared.fail(Ending::StorageGone(format!(
                    "{} is no longer the file system the run started on",
                    opts.dir.display()
                )));
            }
        }
        if shared.stop.load(SeqCst) {
            if threads.iter().all(std::thread::JoinHandle::is_finished) {
                return reported;
            }
            // A worker stuck in a write or commit on storage that is gone:
            // report what is queued and leave it (the process exits).
            if stop_seen.get_or_insert_with(Instant::now).elapsed() > STOP_GRACE {
                return reported;
            }
        }
    }
}

/// Report what the workers queued last, then the session's end line.
#[allow(clippy::too_many_arguments)]
fn finish(
    shared: &Shared,
    limits: &Limits,
    rx: &mpsc::Receiver<Ack>,
    reporter: &mut Reporter,
    pending: &mut String,
    reported: &mut u64,
    run: &RunId,
    start: Instant,
) -> WriteSummary {
    let mut last = 0u64;
    while let Ok(a) = rx.try_recv() {
        a.write_line(pending);
        last += 1;
    }
    let ending = shared
        .failure
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
        .unwrap_or(Ending::Stopped);
    let acknowledged = shared.acknowledged.load(SeqCst);
    // After a failed report the reporter is not trusted to take more: the
    // run ends now, with what it could report.
    if let Ending::ReportingFailed(e) = ending {
        return WriteSummary {
            run: *run,
            ending: Ending::ReportingFailed(e),
            acknowledged,
            reported: *reported,
            elapsed_s: start.elapsed().as_secs_f64(),
        };
    }
    let deadline = Instant::now() + limits.line_deadline;
    let mut flushed = reporter.send(pending, deadline, &never);
    if flushed.is_ok() {
        *reported += last;
    }
    let reason = match &ending {
        Ending::TimeLimit => "time_limit",
        Ending::Stopped => "stopped",
        Ending::StorageGone(_) => "storage_failed",
        Ending::ReportingFailed(_) => "reporting_failed",
        Ending::ThreadsNotStarted(_) => "threads_not_started",
    };
    if flushed.is_ok() {
        let end = format!("{}\n", end_line(run, acknowledged, reason));
        flushed = reporter.send(&end, deadline, &never);
    }
    let ending = match (ending, flushed) {
        (Ending::ReportingFailed(e), _) => Ending::ReportingFailed(e),
        (_, Err(e)) => Ending::ReportingFailed(e.to_string()),
        (e, Ok(())) => e,
    };
    WriteSummary {
        run: *run,
        ending,
        acknowledged,
        reported: *reported,
        elapsed_s: start.elapsed().as_secs_f64(),
    }
}

fn writer_thread(shared: &Shared, tx: &mpsc::SyncSender<Ack>, thread: u32, w: &Worker) {
    let (run, layout) = (w.run, w.layout);
    let mut rng = request_stream(&run, thread);
    let bs = usize::try_from(layout.block_size).unwrap_or(usize::MAX);
    let mut buf = Aligned::new(bs);
    let block_size = u32::try_from(layout.block_size).unwrap_or(u32::MAX);
    let index = usize::try_from(thread).unwrap_or(0);
    while !shared.stop.load(SeqCst) {
        let req = shared.generator.next(&mut rng, index);
        // Whole, aligned blocks only (the options refuse file sizes that are
        // not whole blocks; this keeps a record's block number its offset).
        if req.op != Op::Write
            || req.size != layout.block_size
            || !req.pos.is_multiple_of(layout.block_size)
        {
            continue;
        }
        let block = req.pos / layout.block_size;
        let Some(file) = shared
            .files
            .get(usize::try_from(req.file).unwrap_or(usize::MAX))
        else {
            continue;
        };
        let guard = shared.stripes[stripe(req.file, block)]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let seq = shared.seq.fetch_add(1, SeqCst) + 1;
        let header = Header {
            run,
            file: req.file,
            block,
            seq,
            thread,
            generation: w.generation,
            block_size,
        };
        let checksum = encode(&header, buf.buf());
        let done = file
            .write_all_at(buf.buf(), req.pos)
            .and_then(|()| match w.commit {
                Commit::Fsync => file.sync_all(),
                Commit::Fdatasync => file.sync_data(),
                Commit::OSync | Commit::ODsync => Ok(()),
            });
        drop(guard);
        if let Err(e) = done {
            shared.fail(Ending::StorageGone(format!(
                "{}: {e}",
                fileset::file_path(&w.dir, u64::from(req.file)).display()
            )));
            return;
        }
        shared.generator.complete(Op::Write);
        shared.acknowledged.fetch_add(1, SeqCst);
        // Only now, with the commit returned, may the write be reported.
        let ack = Ack {
            run,
            file: req.file,
            block,
            seq,
            checksum,
        };
        if tx.send(ack).is_err() {
            return;
        }
    }
}

/// The generator of `thread`'s requests: fileio's request generator
/// (xoroshiro128+, as sysbench's threads draw) seeded from the run id
/// through [`SeededStream`], so every run and thread picks its own offsets.
/// Nothing recomputes them later: the journal records each acknowledged
/// block, so the seeding is free to change between versions.
fn request_stream(run: &RunId, thread: u32) -> Xoroshiro {
    let mut seeds = SeededStream::new(run.seed(), u64::from(thread));
    // xoroshiro's state must not be all zeros.
    Xoroshiro::from_state(seeds.next_u64(), seeds.next_u64() | 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each run and each thread draws its own request stream, the same one
    /// every time for the same run and thread.
    #[test]
    fn request_streams_differ_by_run_and_thread() {
        let draw = |run: u8, thread: u32| {
            let mut r = request_stream(&RunId([run; 16]), thread);
            (0..4).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(1, 0), draw(1, 0));
        assert_ne!(draw(1, 0), draw(1, 1));
        assert_ne!(draw(1, 0), draw(2, 0));
        // A run id of zeros still gives a working generator.
        assert_ne!(draw(0, 0), vec![0; 4]);
    }
}
