//! The simulation: fileio's closed-loop workers, each issuing its next
//! request when the previous one completes, driven through the client, link,
//! server CPU, ARC, ZIL and pool by one event queue.

use crate::notes::SimNote;
use fileio::options::{IoMode, RunSpec};
use fileio::result::{Counts, Environment, LatencyKey, ResultKind, RunResult, Warning};
use fileio::rng::{worker_seeds, SeededStream, Xoroshiro};
use fileio::run::generator::{Generator, Op, Request};
use fileio::run::histograms::FastHistogram;
use fileio::summary::{clamp_percentiles, summarize};

use crate::components::{LinkPath, PageCache};
use crate::convergence::{BatchMeans, RunOptions};
use crate::event::Event;
use crate::limits::{check_workload, Budget, MAX_MODELLED_BLOCKS, STALLED_EVENTS};
use crate::queue::{EventQueue, Nanos};
use crate::server::{Message, Rpc, ZfsServer, JOURNAL_BLOCK};
use crate::system::{service_time, GuestSync, Protocol, System, SystemModel};
use crate::{NotModelled, SimError};

/// Most blocks the client page cache tracks (the ARC's bound is the same).
/// A 4 GiB file set at 4 KiB blocks is 1 Mi blocks.
const MAX_RECORDS: u64 = MAX_MODELLED_BLOCKS;

/// Stream of the run seed the link's draws come from (the disks use their
/// index, the log device u64::MAX).
const LINK_STREAM: u64 = 1 << 32;
const CLIENT_STREAM: u64 = (1 << 32) + 2;

/// One request the simulator issued, for checking the stream against fileio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issued {
    pub thread: usize,
    pub request: Request,
}

#[derive(Clone, Copy)]
struct Worker {
    rng: Xoroshiro,
    req: Request,
    rpc: Rpc,
    /// Round trips left of the fsync in progress (0: a transfer).
    fsync_left: u32,
    event_start: Nanos,
    op_start: Nanos,
    events: u64,
    busy_ns: u64,
    stopped: bool,
}

/// The guest file system's journal (ext4's jbd2) on a client whose fsync
/// is the guest's journal commit (`esxi-nfs`, `esxi-6.5-nfs` with
/// `client.guest_fs = "ext4"`, and fileio's `--file-fsync-mode=fsync`:
/// `GuestFs::sync`). The guest has one journal
/// for the whole file system: one running transaction takes the inode of
/// every file a write dirties (its timestamps; `i_sync_tid`, set in
/// `ext4_update_inode_fsync_trans`), one commit is in flight at a time
/// (`kjournald2` commits transaction after transaction), and an fsync
/// waits for the commit of its file's transaction (`ext4_sync_file` ->
/// `jbd2_complete_transaction` -> `jbd2_log_wait_commit`), which wakes
/// every waiter at once (`wake_up(&journal->j_wait_done_commit)` at the
/// end of `jbd2_journal_commit_transaction`; the model takes them in the
/// order they began to wait, the guest in its scheduler's). So concurrent
/// fsyncs share one commit's journal writes instead of each sending its
/// own (Linux fs/ext4/fsync.c, fs/jbd2/journal.c, fs/jbd2/commit.c).
///
/// A thread that writes while the commit of the transaction before is in
/// flight is in the next one, which commits only after it: threads can
/// split into groups whose commits take turns, as the ZIL's batches do.
struct GuestJournal {
    /// The journal thread's index in the server's and the link's messages
    /// (the one after the workers).
    agent: u32,
    /// The running transaction.
    running: u64,
    /// The transaction being committed, if any.
    committing: Option<u64>,
    /// Every transaction up to this one is committed.
    committed: u64,
    /// Journal blocks of the commit in flight not yet written.
    blocks_left: u32,
    /// Workers waiting for the committing transaction, and for the running
    /// one (its commit starts when the one in flight completes:
    /// `jbd2_log_start_commit` only records the request then).
    waiting_commit: Vec<u32>,
    waiting_running: Vec<u32>,
    /// The transaction that last dirtied each file's inode (0: what
    /// `prepare` wrote, committed before the run).
    file_tid: Vec<u64>,
    /// Commits started, for the result's notes.
    commits: u64,
}

impl GuestJournal {
    fn new(agent: u32, files: usize) -> GuestJournal {
        GuestJournal {
            agent,
            running: 1,
            committing: None,
            committed: 0,
            blocks_left: 0,
            waiting_commit: Vec::with_capacity(agent as usize),
            waiting_running: Vec::with_capacity(agent as usize),
            file_tid: vec![0; files],
            commits: 0,
        }
    }

    /// A write dirtied `file`'s inode: it is in the running transaction.
    fn dirty(&mut self, file: u32) {
        if let Some(t) = self.file_tid.get_mut(file as usize) {
            *t = self.running;
        }
    }
}

#[derive(Default)]
struct Histos {
    event: FastHistogram,
    read: FastHistogram,
    write: FastHistogram,
    fsync: FastHistogram,
}

struct Sim<'a> {
    spec: &'a RunSpec,
    sys: &'a System,
    generator: Generator,
    queue: EventQueue<Event>,
    workers: Vec<Worker>,
    /// The guest's journal when an fsync is its commit (esxi-nfs).
    journal: Option<GuestJournal>,
    /// What a guest fsync becomes under a hypervisor client's guest file
    /// system (None: no guest, the protocol's own flush requests).
    guest_sync: Option<GuestSync>,
    link: Option<LinkPath>,
    client_jitter: SeededStream,
    server: ZfsServer<'a>,
    /// The client's page cache, in units of `--file-block-size` (`None`
    /// with `--file-extra-flags=direct` or no cache).
    guest_cache: Option<PageCache>,
    blocks_per_file: u64,
    /// What the run counts; a warm-up's end starts it again.
    tally: Tally,
    active: usize,
    end: Nanos,
    limit_ns: Option<Nanos>,
    /// The run's budget of fileio events, and whether it ended the run.
    max_events: u64,
    budget_reached: bool,
    /// The instant of the latest issue and how many were issued at it: time
    /// that does not advance is a system whose requests cost nothing.
    instant: Nanos,
    at_instant: u64,
    stalled: bool,
    trace: Option<(usize, Vec<Issued>)>,
    /// Batch means of the completions while the run may stop early, and
    /// the instant it converged (crate::convergence).
    convergence: Option<BatchMeans>,
    converged_at: Option<Nanos>,
    /// While `Some`, the run is warming up (`RunOptions::warmup_events`):
    /// nothing is counted until the first txg sync has completed or this
    /// many events were issued, whichever comes first.
    warmup_events: Option<u64>,
    /// When the counted part of the run began (0 without a warm-up).
    measured_from: Nanos,
    /// A warmed-up run of a workload that writes reaches `--events` only
    /// once its counted part has lasted this long too (one
    /// `zfs_txg_timeout`; 0 otherwise: a read-only workload has no txg
    /// syncs and none of these phases).
    /// Why: a sync workload's rate moves by ±10 % over seconds (txg syncs
    /// and the write throttle, and guest threads that share a journal
    /// commit for a while, then split into two groups whose commits take
    /// turns), so a count that is short in simulated time reports whichever
    /// phase it fell on. With a SATA SSD log (3xraidz2-8, 2x10G, a plan's
    /// system) the 4,000 events after the warm-up took 0.4 s and ran 16 %
    /// faster than a 240 s run (3,754 against 3,247 writes/s); counted for
    /// 5 s (41,000 events) they gave 3,283 (+1.1 %).
    count_at_least_ns: Nanos,
}

/// The run's counts of operations, latencies and issued events: what
/// `Sim::new` starts from and `Sim::start_counting` starts again.
struct Tally {
    counts: Counts,
    histos: Histos,
    event_min: Nanos,
    event_max: Nanos,
    event_sum: u64,
    issued: u64,
}

impl Default for Tally {
    fn default() -> Tally {
        Tally {
            counts: Counts::default(),
            histos: Histos::default(),
            event_min: Nanos::MAX,
            event_max: 0,
            event_sum: 0,
            issued: 0,
        }
    }
}

/// A prediction of one workload on one system: the one way into the
/// engine. Made from the workload and the system, told how to run (its
/// budget, its stopping rule and warm-up, a trace), run once.
///
/// By default it simulates every second of `--time` within the default
/// budget of events ([`Budget::default`]); [`Simulation::options`] sets the
/// options a prediction runs with (stopping a `--time` run once its
/// throughput is known, [`crate::convergence`]).
#[must_use]
pub struct Simulation<'a> {
    spec: &'a RunSpec,
    system: &'a SystemModel,
    options: RunOptions,
    trace: usize,
    disk_trace: bool,
}

/// What a simulation gives: the predicted run, how busy each resource was,
/// and the first requests issued when a trace was asked for.
#[derive(Debug, Clone)]
pub struct Simulated {
    pub result: RunResult,
    pub utilisation: Utilisation,
    /// The first [`Simulation::trace`] requests, in the order the workers
    /// issued them.
    pub trace: Vec<Issued>,
    /// Every disk request when [`Simulation::disk_trace`] asked for them,
    /// by arrival time (a flush issued after an earlier one finishes
    /// arrives then, not when it was decided).
    pub disk_trace: Vec<zfs_model::diskmodel::DiskRequest>,
}

impl<'a> Simulation<'a> {
    /// `spec` on `system`, every simulated second, the default budget.
    pub fn new(spec: &'a RunSpec, system: &'a SystemModel) -> Simulation<'a> {
        Simulation {
            spec,
            system,
            options: RunOptions {
                early_stop: false,
                ..RunOptions::default()
            },
            trace: 0,
            disk_trace: false,
        }
    }

    /// At most `budget` fileio events: a `--time` run that reaches it ends
    /// there, its notes say so (`predicted_budget_reached`), and its rates
    /// are over the simulated time it reached.
    pub fn budget(mut self, budget: Budget) -> Simulation<'a> {
        self.options.budget = budget;
        self
    }

    /// Run as `options` say: their budget, their stopping rule and warm-up.
    pub fn options(mut self, options: &RunOptions) -> Simulation<'a> {
        self.options = *options;
        self
    }

    /// Keep the first `requests` requests issued ([`Simulated::trace`]).
    pub fn trace(mut self, requests: usize) -> Simulation<'a> {
        self.trace = requests;
        self
    }

    /// Record every request the simulated disks take
    /// ([`Simulated::disk_trace`]): the simulator's side of `lab up
    /// --disk-trace`.
    pub fn disk_trace(mut self, on: bool) -> Simulation<'a> {
        self.disk_trace = on;
        self
    }

    /// Resolve the system, check the workload is one the engine models,
    /// and simulate it.
    pub fn run(self) -> Result<Simulated, SimError> {
        let (spec, options) = (self.spec, self.options);
        let sys = self.system.resolve()?;
        check_supported(spec, options.budget)?;
        let mut sim = Sim::new(spec, &sys, self.trace, options.budget)?;
        if self.disk_trace {
            sim.server.start_disk_trace();
        }
        sim.warmup_events = options.warmup_events;
        if options.warmup_events.is_none()
            && options.early_stop
            && spec.time_s > 0
            && spec.events == 0
        {
            let run_ns = spec.time_s.saturating_mul(1_000_000_000);
            let warmup = crate::convergence::warmup_ns(run_ns, sys.txg_timeout_ns);
            let minimum = crate::convergence::minimum_ns(warmup, sys.txg_timeout_ns);
            if minimum < run_ns {
                sim.convergence = Some(BatchMeans::new(warmup, minimum).within(options.half_width));
            }
        }
        sim.run()?;
        let trace = sim.trace.take().map(|(_, t)| t).unwrap_or_default();
        let disk_trace = sim.server.take_disk_trace();
        Ok(Simulated {
            result: sim.result(),
            utilisation: sim.utilisation(),
            trace,
            disk_trace,
        })
    }
}

/// Share of the run each resource was busy (0 to 1), and what the txg
/// throttle did: which resource limits the prediction.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Utilisation {
    /// Server CPU time over cores × run time.
    pub server_cpu: f64,
    /// Serialisation time over run time, client to server and back.
    pub link_up: f64,
    pub link_down: f64,
    /// Time with a log block outstanding on the log device.
    pub log_device: f64,
    /// Time the busiest pool disk had an operation outstanding.
    pub pool_disk: f64,
    /// Writes the txg throttle delayed, and those that waited at
    /// `zfs_dirty_data_max`.
    pub writes_delayed: u64,
    pub writes_blocked: u64,
    pub txg_syncs: u64,
}

/// A resource this busy is saturated: the prediction is limited by it.
pub(crate) const SATURATED: f64 = 0.9;

impl Utilisation {
    /// The resources by name with their share of the run, busiest first.
    pub(crate) fn by_resource(&self) -> Vec<(&'static str, f64)> {
        let mut v = vec![
            ("server CPU", self.server_cpu),
            ("link (client to server)", self.link_up),
            ("link (server to client)", self.link_down),
            ("log device", self.log_device),
            ("busiest pool disk", self.pool_disk),
        ];
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    }

    /// The busiest resource, if it is saturated.
    pub fn bottleneck(&self) -> Option<(&'static str, f64)> {
        self.by_resource()
            .first()
            .copied()
            .filter(|&(_, u)| u >= SATURATED)
    }
}

/// The client's page cache over the file set, filled as `prepare` left it
/// (the last blocks written), and the blocks per file. None when reads
/// bypass it (O_DIRECT) or it has no room.
fn guest_cache(spec: &RunSpec, sys: &System) -> Result<(Option<PageCache>, u64), SimError> {
    let unit = spec.files.block_size.max(1);
    let per_file = spec.files.file_size.div_ceil(unit).max(1);
    let capacity = sys.page_cache_bytes / unit;
    if spec.files.extra_flags.direct || capacity == 0 {
        return Ok((None, per_file));
    }
    let blocks = spec.files.file_num.saturating_mul(per_file);
    if blocks > MAX_RECORDS {
        return Err(SimError::from(NotModelled {
            option: "--file-block-size",
            message: format!(
            "the file set is {blocks} blocks of --file-block-size; at most {MAX_RECORDS} are modelled in client.page_cache (raise --file-block-size, lower --file-total-size, or set client.page_cache = \"0\" or --file-extra-flags=direct)"
        ),
        }));
    }
    let capacity = capacity.min(blocks);
    // Both at most MAX_RECORDS (2^28), within u32.
    #[allow(clippy::cast_possible_truncation)]
    let mut cache = PageCache::new(blocks as u32, capacity as u32);
    #[allow(clippy::cast_possible_truncation)]
    for b in (blocks - capacity) as u32..blocks as u32 {
        cache.insert(b);
    }
    Ok((Some(cache), per_file))
}

fn check_supported(spec: &RunSpec, budget: Budget) -> Result<(), SimError> {
    check_workload(spec, budget, 1)?;
    if spec.io_mode != IoMode::Sync {
        return Err(NotModelled {
            option: "--file-io-mode",
            message: "--file-io-mode must be sync (async and mmap are not modelled yet)".into(),
        }
        .into());
    }
    if spec.rate > 0 {
        return Err(NotModelled {
            option: "--rate",
            message: "--rate must be 0 (open-loop arrivals are not modelled yet)".into(),
        }
        .into());
    }
    if spec.sync_every_writes > 0 {
        return Err(NotModelled {
            option: "fsync",
            message: "fio's fsync=N rule (a sync before the next request after every Nth write) is not modelled yet; fsync=1 on a job that only writes is (as --file-fsync-all)".into(),
        }
        .into());
    }
    if spec.time_s == 0 && spec.events == 0 {
        return Err(NotModelled {
            option: "--time",
            message: "--time or --events must be above 0 (a prediction needs an end)".into(),
        }
        .into());
    }
    Ok(())
}

impl<'a> Sim<'a> {
    fn new(
        spec: &'a RunSpec,
        sys: &'a System,
        trace: usize,
        budget: Budget,
    ) -> Result<Sim<'a>, SimError> {
        // The server's bounds are checked before the client's. One slot
        // more than the workers: the guest journal's thread.
        let server = ZfsServer::new(spec, sys, spec.threads as usize + 1)?;
        let (guest_cache, blocks_per_file) = guest_cache(spec, sys)?;
        let seeds = worker_seeds(spec, 0);
        let workers = seeds
            .into_iter()
            .map(|rng| Worker {
                rng,
                req: Request {
                    op: Op::Read,
                    file: 0,
                    pos: 0,
                    size: 0,
                },
                rpc: Rpc::Read,
                fsync_left: 0,
                event_start: 0,
                op_start: 0,
                events: 0,
                busy_ns: 0,
                stopped: false,
            })
            .collect::<Vec<_>>();
        let threads = workers.len();
        let guest_sync = sys.guest_fs.map(|fs| fs.sync(spec.fsync_mode));
        // Thread counts are u32 in RunSpec; file counts fit usize.
        #[allow(clippy::cast_possible_truncation)]
        let journal = (guest_sync == Some(GuestSync::JournalCommit))
            .then(|| GuestJournal::new(threads as u32, spec.files.file_num as usize));
        Ok(Sim {
            spec,
            sys,
            generator: Generator::new(spec),
            // Each worker has at most one event pending, plus the guest
            // journal's, the txg and a ZIL batch.
            queue: EventQueue::with_capacity(threads + 5),
            workers,
            journal,
            guest_sync,
            link: match sys.protocol {
                Protocol::Local => None,
                p => sys.link.map(|l| {
                    LinkPath::new(l, sys.rtt_ns, p.header_bytes()).with_jitter(
                        sys.rtt_spread,
                        SeededStream::new(spec.rand_seed, LINK_STREAM),
                    )
                }),
            },
            client_jitter: SeededStream::new(spec.rand_seed, CLIENT_STREAM),
            server,
            guest_cache,
            blocks_per_file,
            tally: Tally::default(),
            active: threads,
            end: 0,
            limit_ns: (spec.time_s > 0).then(|| spec.time_s.saturating_mul(1_000_000_000)),
            max_events: budget.events,
            budget_reached: false,
            instant: 0,
            at_instant: 0,
            stalled: false,
            trace: (trace > 0).then(|| (trace, Vec::with_capacity(trace))),
            convergence: None,
            converged_at: None,
            warmup_events: None,
            measured_from: 0,
            count_at_least_ns: 0,
        })
    }

    fn run(&mut self) -> Result<(), SimError> {
        for w in 0..self.workers.len() {
            // Thread counts are u32 in RunSpec.
            #[allow(clippy::cast_possible_truncation)]
            self.queue.schedule(0, Event::Issue(w as u32));
        }
        self.queue.schedule(self.sys.txg_timeout_ns, Event::Txg);
        while let Some((now, event)) = self.queue.pop() {
            match event {
                Event::Issue(w) => {
                    self.issue(now, w);
                    if self.stalled {
                        return Err(self.stall_error(now));
                    }
                }
                Event::Send(w) => self.send(now, w),
                Event::Reply(w) => self.reply(now, w),
                Event::Done(w) => self.done(now, w),
                Event::Arrive(w) => {
                    let message = self.message(w);
                    self.server.arrive(now, w, message, &mut self.queue);
                }
                Event::Synced(w) => self.fsync_done(now, w),
                // The server's own events.
                Event::Served(w) => self.server.served(now, w, &mut self.queue),
                Event::Ready(w) => self.server.ready(now, w, &mut self.queue),
                Event::ZilBatch => self.server.zil_batch(now, &mut self.queue),
                Event::Commit(w) => self.server.commit(now, w, &mut self.queue),
                Event::Txg => self
                    .server
                    .txg_timeout(now, self.active > 0, &mut self.queue),
                Event::Throttled(w) => self.server.apply(now, w, &mut self.queue),
                Event::AsyncDone(generation) => {
                    self.server.async_done(now, generation, &mut self.queue);
                }
                Event::TxgSynced => {
                    self.server.txg_synced(now, &mut self.queue);
                    // A sync after the last worker stopped (the txg timer
                    // outlives a short run) ends no warm-up: there is
                    // nothing left to count.
                    if self.warmup_events.is_some() && self.active > 0 {
                        self.start_counting(now);
                    }
                }
            }
        }
        Ok(())
    }

    /// End the warm-up at `now`: what was counted so far is dropped, and
    /// `--events` counts from here. Requests in flight finish and count
    /// with the latency they had, as a measured run's first events do.
    fn start_counting(&mut self, now: Nanos) {
        self.warmup_events = None;
        self.measured_from = now;
        if self.spec.mode.writes() {
            self.count_at_least_ns = self.sys.txg_timeout_ns;
        }
        self.tally = Tally::default();
        for w in &mut self.workers {
            w.events = 0;
            w.busy_ns = 0;
        }
    }

    /// The error of a run whose simulated time stopped at `now`, naming the
    /// system's costs that are 0.
    fn stall_error(&self, now: Nanos) -> SimError {
        let sys = self.sys;
        let mut zero: Vec<&str> = [
            ("client.cache_hit_us = 0", sys.cache_hit_ns),
            ("client.cpu_us = 0", sys.client_cpu_ns),
            ("server.cpu_us = 0", sys.server_cpu_ns),
            ("server.cpu_us_per_mib = 0", sys.server_cpu_ns_per_mib),
        ]
        .into_iter()
        .filter(|&(_, ns)| ns == 0)
        .map(|(f, _)| f)
        .collect();
        if self.link.is_some() && sys.rtt_ns == 0 {
            zero.push("link.rtt_ms = 0");
        }
        SimError::Stalled {
            at_s: now as f64 / 1e9,
            events: self.at_instant,
            fields: if zero.is_empty() {
                "every cost on the requests' path rounds to 0 ns".into()
            } else {
                zero.join(", ")
            },
        }
    }

    fn issue(&mut self, now: Nanos, w: u32) {
        let spec = self.spec;
        if self
            .warmup_events
            .is_some_and(|most| self.tally.issued >= most)
        {
            self.start_counting(now);
        }
        let over_time = self.limit_ns.is_some_and(|l| now >= l);
        let over_events = spec.events > 0
            && self.warmup_events.is_none()
            && self.tally.issued >= spec.events
            && now.saturating_sub(self.measured_from) >= self.count_at_least_ns;
        let over_budget = self.tally.issued >= self.max_events;
        let worker = &mut self.workers[w as usize];
        if over_time || over_events || over_budget {
            self.budget_reached |= over_budget && !over_time && !over_events;
            worker.stopped = true;
            self.active -= 1;
            return;
        }
        self.tally.issued += 1;
        if now == self.instant {
            self.at_instant += 1;
            self.stalled = self.at_instant > STALLED_EVENTS;
        } else {
            self.instant = now;
            self.at_instant = 1;
        }
        let req = self.generator.next(&mut worker.rng, w as usize);
        worker.req = req;
        worker.event_start = now;
        worker.op_start = now;
        if let Some((n, t)) = &mut self.trace {
            if t.len() < *n {
                t.push(Issued {
                    thread: w as usize,
                    request: req,
                });
            }
        }
        match req.op {
            Op::Read if self.guest_cache_hit(&req) => {
                // Served from the client's page cache: never leaves it.
                self.workers[w as usize].rpc = Rpc::Read;
                let cost = service_time(
                    &mut self.client_jitter,
                    self.sys.client_cpu_service,
                    self.sys.cache_hit_ns,
                );
                self.queue.schedule(now + cost, Event::Done(w));
            }
            Op::Read => self.begin_rpc(now, w, Rpc::Read),
            Op::Write => {
                if let Some(j) = &mut self.journal {
                    j.dirty(req.file);
                }
                self.begin_rpc(now, w, Rpc::Write);
            }
            Op::Fsync => self.begin_fsync(now, w),
        }
    }

    fn block_of(&self, req: &Request) -> u32 {
        let b = u64::from(req.file) * self.blocks_per_file
            + req.pos / self.spec.files.block_size.max(1);
        // Below the block count, which guest_cache() held to MAX_RECORDS.
        #[allow(clippy::cast_possible_truncation)]
        let b = b as u32;
        b
    }

    fn guest_cache_hit(&mut self, req: &Request) -> bool {
        let block = self.block_of(req);
        self.guest_cache.as_mut().is_some_and(|c| c.lookup(block))
    }

    fn begin_fsync(&mut self, now: Nanos, w: u32) {
        let worker = &mut self.workers[w as usize];
        worker.op_start = now;
        self.tally.counts.fsyncs += 1;
        match self.guest_sync {
            Some(GuestSync::JournalCommit) => self.journal_fsync(now, w),
            Some(GuestSync::Flush) => self.guest_flush(now, w),
            None => {
                worker.fsync_left = self.sys.fsync_round_trips;
                self.begin_rpc(now, w, Rpc::Commit);
            }
        }
    }

    /// A guest fsync that is a cache flush of the virtual disk alone (an
    /// ext4 fdatasync of an overwrite, an fsync with no guest file system,
    /// an fsync of a file whose transaction is committed). Every data write
    /// already sent stable: the flush sends nothing to the NFS datastore
    /// (sync-write-facts.md (a), inferred) and costs the client's CPU. A
    /// client told to write unstable (`client.stable_writes = false`) has
    /// data for the flush to commit: one COMMIT (facts (a): "with
    /// UNSTABLE+COMMIT it would be one COMMIT").
    fn guest_flush(&mut self, now: Nanos, w: u32) {
        let flags = self.spec.files.extra_flags;
        if self.sys.stable_writes || flags.sync || flags.dsync {
            let cost = service_time(
                &mut self.client_jitter,
                self.sys.client_cpu_service,
                self.sys.client_cpu_ns,
            );
            self.queue.schedule(now + cost, Event::Synced(w));
        } else {
            self.workers[w as usize].fsync_left = 1;
            self.begin_rpc(now, w, Rpc::Commit);
        }
    }

    /// A guest fsync: wait for the commit of the transaction that last
    /// dirtied the file, starting it if nothing else is committing. A file
    /// whose transaction is committed already needs no journal write; its
    /// fsync ends in a cache flush of the virtual disk ([`Sim::guest_flush`]).
    fn journal_fsync(&mut self, now: Nanos, w: u32) {
        let file = self.workers[w as usize].req.file as usize;
        let Some(j) = self.journal.as_mut() else {
            return;
        };
        let tid = j.file_tid.get(file).copied().unwrap_or(0);
        if tid <= j.committed {
            self.guest_flush(now, w);
        } else if j.committing == Some(tid) {
            j.waiting_commit.push(w);
        } else {
            // The running transaction.
            j.waiting_running.push(w);
            if j.committing.is_none() {
                self.start_commit(now);
            }
        }
    }

    /// kjournald2 commits the running transaction: its journal blocks, one
    /// stable WRITE after another (`client.fsync_round_trips`: the
    /// descriptor with the inode table block, then the commit block, which
    /// jbd2 submits after the others complete).
    fn start_commit(&mut self, now: Nanos) {
        let trips = self.sys.fsync_round_trips;
        let Some(j) = self.journal.as_mut() else {
            return;
        };
        j.committing = Some(j.running);
        j.running += 1;
        j.commits += 1;
        j.blocks_left = trips;
        std::mem::swap(&mut j.waiting_commit, &mut j.waiting_running);
        let agent = j.agent;
        self.begin_rpc(now, agent, Rpc::Journal);
    }

    /// One journal block is written; after the last the transaction is
    /// committed, its waiters wake in the order they began to wait, and a
    /// commit asked for meanwhile starts.
    fn journal_block_done(&mut self, now: Nanos) {
        let Some(j) = self.journal.as_mut() else {
            return;
        };
        j.blocks_left = j.blocks_left.saturating_sub(1);
        if j.blocks_left > 0 {
            let agent = j.agent;
            self.begin_rpc(now, agent, Rpc::Journal);
            return;
        }
        if let Some(tid) = j.committing.take() {
            j.committed = tid;
        }
        for &w in &j.waiting_commit {
            self.queue.schedule(now, Event::Synced(w));
        }
        j.waiting_commit.clear();
        if !j.waiting_running.is_empty() {
            self.start_commit(now);
        }
    }

    fn is_journal(&self, w: u32) -> bool {
        self.journal.as_ref().is_some_and(|j| j.agent == w)
    }

    /// What `w` (a worker or the guest journal's thread) sends.
    fn message(&self, w: u32) -> Message {
        match &self.journal {
            Some(j) if j.agent == w => Message {
                rpc: Rpc::Journal,
                req: Request {
                    op: Op::Write,
                    file: 0,
                    pos: 0,
                    size: JOURNAL_BLOCK,
                },
            },
            _ => {
                let worker = &self.workers[w as usize];
                Message {
                    rpc: worker.rpc,
                    req: worker.req,
                }
            }
        }
    }

    /// `w`'s message `rpc` goes out after the client's CPU time (the guest
    /// journal's thread only sends journal blocks).
    fn begin_rpc(&mut self, now: Nanos, w: u32, rpc: Rpc) {
        if !self.is_journal(w) {
            self.workers[w as usize].rpc = rpc;
        }
        let cost = service_time(
            &mut self.client_jitter,
            self.sys.client_cpu_service,
            self.sys.client_cpu_ns,
        );
        self.queue.schedule(now + cost, Event::Send(w));
    }

    fn request_payload(&self, w: u32) -> u64 {
        let message = self.message(w);
        match message.rpc {
            Rpc::Write => message.req.size,
            Rpc::Journal => JOURNAL_BLOCK,
            Rpc::Read | Rpc::Commit => 0,
        }
    }

    fn send(&mut self, now: Nanos, w: u32) {
        let payload = self.request_payload(w);
        let at = match &mut self.link {
            Some(link) => link.send_up(now, payload),
            None => now,
        };
        self.queue.schedule(at, Event::Arrive(w));
    }

    fn reply(&mut self, now: Nanos, w: u32) {
        let message = self.message(w);
        let payload = match message.rpc {
            Rpc::Read => message.req.size,
            _ => 0,
        };
        let at = match &mut self.link {
            Some(link) => link.send_down(now, payload),
            None => now,
        };
        self.queue.schedule(at, Event::Done(w));
    }

    /// `w`'s fsync is complete.
    fn fsync_done(&mut self, now: Nanos, w: u32) {
        let worker = &self.workers[w as usize];
        self.tally.histos.fsync.record(now - worker.op_start);
        if worker.req.op == Op::Write && self.generator.tracks_completions() {
            // The write this fsync followed counts for rndrw's choice only
            // now (see done()).
            self.generator.complete(Op::Write);
        }
        self.finish_event(now, w);
    }

    fn done(&mut self, now: Nanos, w: u32) {
        if self.is_journal(w) {
            self.journal_block_done(now);
            return;
        }
        let worker = &mut self.workers[w as usize];
        let latency = now - worker.op_start;
        if worker.fsync_left > 0 {
            worker.fsync_left -= 1;
            if worker.fsync_left > 0 {
                let rpc = worker.rpc;
                self.begin_rpc(now, w, rpc);
                return;
            }
            self.fsync_done(now, w);
            return;
        }
        let op = worker.req.op;
        let size = worker.req.size;
        if op != Op::Fsync {
            // What was read or written is in the client's page cache now.
            let block = self.block_of(&self.workers[w as usize].req);
            if let Some(c) = self.guest_cache.as_mut() {
                c.insert(block);
            }
        }
        match op {
            Op::Read => {
                self.tally.counts.reads += 1;
                self.tally.counts.bytes_read += size;
                self.tally.histos.read.record(latency);
            }
            _ => {
                self.tally.counts.writes += 1;
                self.tally.counts.bytes_written += size;
                self.tally.histos.write.record(latency);
            }
        }
        // rndrw's choice (read while (reads + 1) / (writes + 1) is below
        // the ratio) counts completed operations. sysbench 1.0.20
        // (sb_fileio.c, file_execute_request) increments write_ops after
        // the write *and* its --file-fsync-all fsync: counted before the
        // fsync, the read quota a write opens goes to whichever thread is
        // idle (one that is reading) instead of the thread that finished
        // the write, and one thread ends up doing every read while the
        // others only write (issue 21: [2383, 16666, 2383, 2383] events on
        // four identical threads).
        let counted_after_fsync = op == Op::Write && self.spec.fsync_all;
        if self.generator.tracks_completions() && !counted_after_fsync {
            self.generator.complete(op);
        }
        if op == Op::Write && self.spec.fsync_all {
            self.begin_fsync(now, w);
        } else {
            self.finish_event(now, w);
        }
    }

    fn finish_event(&mut self, now: Nanos, w: u32) {
        let worker = &mut self.workers[w as usize];
        let latency = now - worker.event_start;
        worker.events += 1;
        worker.busy_ns += latency;
        self.tally.counts.events += 1;
        self.tally.event_sum += latency;
        self.tally.event_min = self.tally.event_min.min(latency);
        self.tally.event_max = self.tally.event_max.max(latency);
        self.tally.histos.event.record(latency);
        self.end = self.end.max(now);
        if self.convergence.as_mut().is_some_and(|c| c.complete(now)) {
            // The rate is known: no worker starts another event.
            self.convergence = None;
            self.converged_at = Some(now);
            self.limit_ns = Some(now);
        }
        self.queue.schedule(now, Event::Issue(w));
    }

    fn utilisation(&self) -> Utilisation {
        let t = self.end.max(1) as f64;
        let share = |ns: Nanos| (ns as f64 / t).min(1.0);
        Utilisation {
            server_cpu: (self.server.cpu.used as f64 / (t * f64::from(self.sys.cores.max(1))))
                .min(1.0),
            link_up: self.link.as_ref().map_or(0.0, |l| share(l.up_busy)),
            link_down: self.link.as_ref().map_or(0.0, |l| share(l.down_busy)),
            log_device: self.server.log.as_ref().map_or(0.0, |l| share(l.busy.ns)),
            pool_disk: share(self.server.pool.busiest_disk_ns()),
            writes_delayed: self.server.txg.delayed,
            writes_blocked: self.server.txg.blocks,
            txg_syncs: self.server.txg.syncs,
        }
    }

    /// The prediction's notes: how busy each resource was, which one
    /// saturated, and what the write throttle did.
    fn notes(&self) -> Vec<Warning> {
        let u = self.utilisation();
        let busy = u
            .by_resource()
            .iter()
            .map(|(name, share)| format!("{name} {:.0} %", share * 100.0))
            .collect::<Vec<_>>()
            .join(", ");
        let journal = match (&self.journal, self.guest_sync) {
            (Some(j), _) => format!(
                "; {} guest journal commits for {} fsyncs",
                j.commits, self.tally.counts.fsyncs
            ),
            (None, Some(GuestSync::Flush)) => format!(
                "; {} guest fsyncs, each a cache flush of the virtual disk (no journal commit: client.guest_fs and --file-fsync-mode)",
                self.tally.counts.fsyncs
            ),
            (None, _) => String::new(),
        };
        let mut notes = vec![SimNote::Utilisation.warning(
            format!(
                "busy: {busy}; {} txg syncs, {} writes delayed by the write throttle, {} blocked at zfs_dirty_data_max{journal}",
                u.txg_syncs, u.writes_delayed, u.writes_blocked
            ),
            "the resource nearest 100 % limits throughput; below that, latency (round trips, commits) does".into(),
        )];
        if self.budget_reached {
            notes.push(SimNote::BudgetReached.warning(
                format!(
                    "stopped at the simulation budget of {} events after {:.3} simulated s of the {} s asked (--time); the rates are over the time simulated",
                    self.max_events,
                    self.end as f64 / 1e9,
                    self.spec.time_s
                ),
                "raise the budget with --max-sim-events (host time grows with it), or give --events".into(),
            ));
        }
        if self.measured_from > 0 {
            notes.push(SimNote::AfterWarmup.warning(
                format!(
                    "counted from {:.3} simulated s, the end of the warm-up (the first txg sync, or its bound of events), to {:.3} s{}; the rates and --events are over that part",
                    self.measured_from as f64 / 1e9,
                    self.end as f64 / 1e9,
                    if self.count_at_least_ns > 0 && self.spec.events > 0 {
                        " (--events, and at least one zfs_txg_timeout: a sync workload's rate moves over seconds)"
                    } else {
                        ""
                    }
                ),
                "before the first txg sync nothing competes with the writes; without --count-after-first-sync the run counts from 0".into(),
            ));
        } else if self.warmup_events.is_some() {
            notes.push(SimNote::WarmupUnfinished.warning(
                "the run ended before its first txg sync or the warm-up's bound of events; it is counted from 0".into(),
                "a longer --time or more --events reach the first sync".into(),
            ));
        }
        if let Some(at) = self.converged_at {
            notes.push(crate::convergence::note(at, self.end, self.spec.time_s));
        }
        if let Some((name, share)) = u.bottleneck() {
            notes.push(SimNote::Saturation.warning(
                format!("{name} is saturated ({:.0} % busy)", share * 100.0),
                format!("more threads will not raise throughput; a faster {name} would"),
            ));
        }
        notes
    }

    /// The prediction as a result, built like a measured one
    /// ([`RunResult::new`] and [`fileio::summary`]).
    fn result(&self) -> RunResult {
        let spec = self.spec;
        // A converged run's counts are its rate over the time asked.
        let (seconds, scale) = match self.converged_at {
            Some(_) => {
                let asked = spec.time_s as f64;
                (asked, asked / (self.end.max(1) as f64 / 1e9))
            }
            None => (
                self.end.saturating_sub(self.measured_from) as f64 / 1e9,
                1.0,
            ),
        };
        let counts = crate::convergence::scale_counts(self.tally.counts, scale);
        let pcts = &spec.percentiles;
        // Each recorder as an HDR histogram that ends at its largest sample
        // (a plan summarises four per simulated layout; a full-range one is
        // ~190 KiB to fill and read).
        let summary_of = |recorded: &FastHistogram| summarize(&recorded.to_hdr_fitted(), pcts);
        let histos = &self.tally.histos;
        let mut event = summary_of(&histos.event);
        if self.tally.counts.events > 0 {
            // Exact figures from the counters, as the measured report keeps.
            event.min_ms = self.tally.event_min as f64 / 1e6;
            event.max_ms = self.tally.event_max as f64 / 1e6;
            event.sum_ms = self.tally.event_sum as f64 * scale / 1e6;
            event.mean_ms = self.tally.event_sum as f64 / self.tally.counts.events as f64 / 1e6;
            clamp_percentiles(&mut event);
        }
        let fsync = if self.tally.counts.fsyncs > 0 {
            summary_of(&histos.fsync)
        } else {
            summary_of(&FastHistogram::default())
        };
        let read = summary_of(&histos.read);
        let write = summary_of(&histos.write);
        let link = self
            .sys
            .link
            .filter(|_| self.sys.protocol != Protocol::Local)
            .map_or_else(|| "local".to_string(), |l| l.name());
        let mut workload = spec.summary("simulated");
        workload.directory = String::new();
        RunResult::new(ResultKind::Predicted, workload)
            .with_label("system", self.sys.name.clone())
            .with_label("layout", self.sys.shape.name())
            .with_label("link", link)
            .with_label("client", self.sys.protocol.name())
            .with_label("slog", if self.sys.log.is_some() { "yes" } else { "no" })
            .with_figures(counts, seconds, seconds)
            .with_latency(LatencyKey::Event, event)
            .with_latency(LatencyKey::Read, read)
            .with_latency(LatencyKey::Write, write)
            .with_latency(LatencyKey::Fsync, fsync)
            .with_threads(self.workers.iter().map(|w| {
                (
                    crate::convergence::scale(w.events, scale),
                    w.busy_ns as f64 * scale / 1e9,
                )
            }))
            .with_environment(Environment {
                hostname: self.sys.name.clone(),
                fs_type: "zfs (simulated)".to_string(),
                ..Environment::default()
            })
            .with_warnings(self.notes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A guest on an ESXi NFS datastore, every time fixed.
    fn esxi() -> System {
        SystemModel::from_toml(
            "name = \"t\"\n[client]\nprotocol = \"esxi-nfs\"\ncpu_service = \"fixed\"\n[link]\nlink = \"10G\"\nrtt_spread = 0.0\n[server]\ncpu_service = \"fixed\"\n[pool]\nlayout = \"1xmirror-2\"\ndisk = \"ssd-sata\"\n",
        )
        .unwrap()
        .resolve()
        .unwrap()
    }

    /// The guest journal's commits and the counts of a run of `words`.
    fn commits_and_counts(words: &[&str]) -> (u64, Counts) {
        let mut all = vec!["--file-total-size=16M", "--file-num=4", "--rand-seed=3"];
        all.extend_from_slice(words);
        let spec = RunSpec::from_words(&all).unwrap();
        let sys = esxi();
        let mut sim = Sim::new(&spec, &sys, 0, Budget::default()).unwrap();
        sim.run().unwrap();
        let commits = sim.journal.as_ref().map(|j| j.commits).unwrap();
        (commits, sim.tally.counts)
    }

    #[test]
    fn one_writer_commits_the_journal_once_per_fsync() {
        let (commits, c) = commits_and_counts(&[
            "--file-test-mode=rndwr",
            "--threads=1",
            "--file-fsync-all",
            "--events=200",
        ]);
        assert_eq!(c.fsyncs, 200);
        assert_eq!(commits, 200);
    }

    #[test]
    fn concurrent_fsyncs_share_the_guest_journals_commits() {
        let (commits, c) = commits_and_counts(&[
            "--file-test-mode=rndwr",
            "--threads=4",
            "--file-fsync-all",
            "--events=400",
        ]);
        assert_eq!(c.fsyncs, 400);
        assert!(2 * commits <= c.fsyncs, "{commits} commits");
    }

    #[test]
    fn an_fsync_of_a_committed_file_writes_no_journal_block() {
        // Every 10 writes an fsync of each of the 4 files: the first fsync
        // of a dirty file commits the transaction holding all of them, the
        // others find their file's transaction committed.
        let (commits, c) = commits_and_counts(&[
            "--file-test-mode=rndwr",
            "--threads=1",
            "--file-fsync-freq=10",
            "--events=140",
        ]);
        assert_eq!((c.writes, c.fsyncs), (100, 40));
        assert_eq!(commits, 10);
    }
}
