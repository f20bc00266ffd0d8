//! The parts a request passes through, each a small state machine that is
//! told "this starts at `now`" and answers when it ends: the link, the
//! server's CPUs, the ARC, and the pool's disks. None of them schedules
//! events; the engine does, so each part can be checked on its own.

use zfs_model::diskmodel::{Disk, DiskRequest, ModelParams, Op};
use zfs_model::layout::{Shape, VdevKind};
use zfs_model::network::{Link, TCP_GOODPUT_FRACTION};

use fileio::rng::SeededStream;

use crate::queue::Nanos;

/// Allocation unit of the pool and the log device: ashift 12, what current
/// OpenZFS picks for 4Kn and 512e disks.
pub const SECTOR: u64 = 4096;

/// Bytes a write's log record adds to the data it carries: sizeof(lr_write_t)
/// in sys/zil.h (a 24-byte lr_t, four 64-bit fields and a 128-byte block
/// pointer).
pub(crate) const LR_WRITE_BYTES: u64 = 184;

/// NFSv3 call or reply header with its RPC header (RFC 1813, RFC 5531): about
/// 134 bytes, which with the TCP/IP and Ethernet overhead of three frames
/// puts a 4 KiB WRITE at the 4,500 bytes on the wire zfs-model's link model
/// uses (`WIRE_BYTES_4K_WRITE`).
pub const RPC_HEADER_BYTES: u64 = 134;

/// TCP payload per 1500-byte frame (1448 with timestamps) and what each
/// frame adds on the wire: Ethernet preamble, header, FCS and gap (38) plus
/// IP and TCP headers (52), IEEE 802.3 and RFC 7323.
pub(crate) const FRAME_PAYLOAD: u64 = 1448;
pub(crate) const FRAME_OVERHEAD: u64 = 90;

/// `metaslab_aliquot`: bytes the allocator places on one top-level vdev
/// before its rotor moves to the next, per child of the vdev
/// (`metaslab_group_activate` in metaslab.c sets `mg_aliquot =
/// metaslab_aliquot * MAX(1, vdev_children)`; 512 KiB from OpenSolaris
/// through OpenZFS 2.1; later releases count only the data disks and raise
/// it to 1 MiB, which keeps log blocks on one vdev even longer).
pub const METASLAB_ALIQUOT: u64 = 512 << 10;

/// Where a part's disk requests are recorded when a trace is asked for
/// ([`crate::Simulation::disk_trace`]): the pool's children in order, then
/// the log device's members.
#[derive(Debug, Clone, Default)]
pub(crate) struct DiskTrace {
    requests: Option<Vec<DiskRequest>>,
}

impl DiskTrace {
    fn start(&mut self) {
        self.requests = Some(Vec::new());
    }

    fn record(&mut self, at: Nanos, disk: usize, op: Op, done: Nanos) {
        if let Some(r) = &mut self.requests {
            r.push(DiskRequest { at, disk, op, done });
        }
    }

    fn take(&mut self) -> Vec<DiskRequest> {
        self.requests.take().unwrap_or_default()
    }
}

fn round_up(v: u64, unit: u64) -> u64 {
    v.div_ceil(unit) * unit
}

/// Bytes on the wire for an NFS message carrying `payload` bytes of data.
pub fn wire_bytes(payload: u64) -> u64 {
    wire_bytes_with_header(payload, RPC_HEADER_BYTES)
}

/// Bytes on the wire for a message of `header` protocol bytes carrying
/// `payload` bytes of data.
pub(crate) fn wire_bytes_with_header(payload: u64, header: u64) -> u64 {
    let tcp = payload + header;
    tcp + tcp.div_ceil(FRAME_PAYLOAD) * FRAME_OVERHEAD
}

/// The simulator's own draws (link, CPU and client jitter, the disks'
/// seeds) come from [`SeededStream`]: deterministic for a seed, independent
/// of fileio's request streams. These are its draws in whole nanoseconds.
pub(crate) trait NanosDraws {
    /// An exponentially distributed time of mean `mean`, rounded.
    fn exponential_ns(&mut self, mean: Nanos) -> Nanos;
    /// `mean` scaled by a uniform factor in [1 - spread, 1 + spread]: the
    /// mean is kept, so closed forms of one request at a time still hold.
    fn around(&mut self, mean: Nanos, spread: f64) -> Nanos;
}

impl NanosDraws for SeededStream {
    fn exponential_ns(&mut self, mean: Nanos) -> Nanos {
        if mean == 0 {
            return 0;
        }
        // -ln(1 - u) for u in [0, 1) is finite and non-negative (at most
        // 37 for 53-bit u), so the product fits comfortably.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        // + 0.5 and truncation: rounding without a libm call per request.
        let t = (self.exponential(mean as f64) + 0.5) as Nanos;
        t
    }

    fn around(&mut self, mean: Nanos, spread: f64) -> Nanos {
        if spread <= 0.0 || mean == 0 {
            return mean;
        }
        let f = 1.0 + spread * (2.0 * self.unit() - 1.0);
        // f is in [0, 2) for spread <= 1 (checked by the system model), so
        // the product is a non-negative time below 2 * mean.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let t = (mean as f64 * f + 0.5) as Nanos;
        t
    }
}

/// Time a device had at least one operation outstanding: the union of
/// the intervals from each submission to its completion.
#[derive(Debug, Clone, Copy, Default)]
pub struct Busy {
    pub ns: Nanos,
    until: Nanos,
}

impl Busy {
    /// An operation submitted at `now` completes at `done`.
    pub fn add(&mut self, now: Nanos, done: Nanos) {
        let from = now.max(self.until);
        if done > from {
            self.ns += done - from;
            self.until = done;
        }
    }
}

/// One client's TCP connection over the link. A LACP hash pins a flow to one
/// member link (IEEE 802.1AX), so the connection gets one member's rate
/// whatever the member count; each direction is a FIFO queue, and TCP
/// delivers in order, so a message never overtakes the one before it.
/// Each message's propagation (half the round trip) varies uniformly by
/// `rtt_spread` around its mean, the spread of the measured round trips
/// the link class's figure comes from.
pub struct LinkPath {
    ps_per_byte: u64,
    header: u64,
    half_rtt: Nanos,
    rtt_spread: f64,
    jitter: SeededStream,
    up_free: Nanos,
    down_free: Nanos,
    up_last: Nanos,
    down_last: Nanos,
    /// Time spent serialising each way.
    pub up_busy: Nanos,
    pub down_busy: Nanos,
}

impl LinkPath {
    /// `header`: the protocol's bytes beside the payload of each message.
    pub fn new(link: Link, rtt: Nanos, header: u64) -> LinkPath {
        // Line rate of one member: 8 bits per byte; picoseconds keep 100G
        // exact enough (0.08 ns a byte).
        let ps = 8e12 / (link.gbit_per_s * 1e9);
        // A rate from Link::parse is 100 Mbit/s to 800 Gbit/s: 10..80,000 ps.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ps_per_byte = ps.round().max(1.0) as u64;
        LinkPath {
            ps_per_byte,
            header,
            half_rtt: rtt / 2,
            rtt_spread: 0.0,
            jitter: SeededStream::new(0, 0),
            up_free: 0,
            down_free: 0,
            up_last: 0,
            down_last: 0,
            up_busy: 0,
            down_busy: 0,
        }
    }

    /// Vary each message's propagation by `spread` (a fraction of the mean,
    /// 0 to 1), drawn from `jitter`.
    pub(crate) fn with_jitter(mut self, spread: f64, jitter: SeededStream) -> LinkPath {
        self.rtt_spread = spread.clamp(0.0, 1.0);
        self.jitter = jitter;
        self
    }

    /// Goodput one flow can reach, MB/s (for reports and checks).
    pub fn flow_goodput_mb_s(link: Link) -> f64 {
        link.gbit_per_s * 1e3 / 8.0 * TCP_GOODPUT_FRACTION
    }

    fn serialise(&self, payload: u64) -> Nanos {
        wire_bytes_with_header(payload, self.header) * self.ps_per_byte / 1000
    }

    /// Client to server: queue behind earlier messages, serialise, cross.
    pub(crate) fn send_up(&mut self, now: Nanos, payload: u64) -> Nanos {
        let start = now.max(self.up_free);
        let wire = self.serialise(payload);
        self.up_busy += wire;
        self.up_free = start + wire;
        let at =
            (self.up_free + self.jitter.around(self.half_rtt, self.rtt_spread)).max(self.up_last);
        self.up_last = at;
        at
    }

    /// Server to client.
    pub(crate) fn send_down(&mut self, now: Nanos, payload: u64) -> Nanos {
        let start = now.max(self.down_free);
        let wire = self.serialise(payload);
        self.down_busy += wire;
        self.down_free = start + wire;
        let at = (self.down_free + self.jitter.around(self.half_rtt, self.rtt_spread))
            .max(self.down_last);
        self.down_last = at;
        at
    }
}

/// The server's cores: each request takes the core that frees first.
pub(crate) struct Cpu {
    free_at: Vec<Nanos>,
    /// `server.cpu_contention`: the share by which a piece of work takes
    /// longer for each other core busy when it starts.
    contention: f64,
    /// CPU time used, all cores together.
    pub used: Nanos,
}

impl Cpu {
    pub fn new(cores: u32, contention: f64) -> Cpu {
        Cpu {
            free_at: vec![0; cores.max(1) as usize],
            contention,
            used: 0,
        }
    }

    /// Run `cost` of work arriving at `now` on the core free first; the
    /// time it is done. The work takes `cost` alone on the machine and
    /// longer by the contention share for each other core busy when it
    /// starts: shared locks and cache lines cost more the more cores touch
    /// them, which a fixed time per request cannot say (docs/model-reference.md,
    /// "CPU contention").
    pub fn run(&mut self, now: Nanos, cost: Nanos) -> Nanos {
        let (i, free) = self
            .free_at
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, t)| t)
            .unwrap_or((0, 0));
        let start = now.max(free);
        let cost = if self.contention > 0.0 {
            let others = self
                .free_at
                .iter()
                .enumerate()
                .filter(|&(j, &t)| j != i && t > start)
                .count();
            #[allow(clippy::cast_precision_loss)]
            let stretched = cost as f64 * (1.0 + self.contention * others as f64);
            zfs_model::diskmodel::round_to_nanos(stretched)
        } else {
            cost
        };
        let done = start + cost;
        self.used += cost;
        if let Some(slot) = self.free_at.get_mut(i) {
            *slot = done;
        }
        done
    }
}

const ABSENT: u32 = u32::MAX;

/// A page cache: CLOCK over blocks with nothing dirty to keep, so the
/// reference bit lives in the slot itself (the top bit) and the hand sweeps
/// one array.
pub struct PageCache {
    slot_of: Vec<u32>,
    slots: Vec<u32>,
    hand: usize,
    capacity: usize,
}

const REFERENCED: u32 = 1 << 31;

impl PageCache {
    /// A cache of `capacity` blocks over `blocks` blocks (below 2^31).
    pub fn new(blocks: u32, capacity: u32) -> PageCache {
        let blocks = blocks.min(REFERENCED - 1);
        let capacity = capacity.clamp(1, blocks.max(1)) as usize;
        PageCache {
            slot_of: vec![ABSENT; blocks as usize],
            slots: Vec::with_capacity(capacity),
            hand: 0,
            capacity,
        }
    }

    /// Whether `block` is cached; a hit marks it recently used.
    pub fn lookup(&mut self, block: u32) -> bool {
        match self.slot_of.get(block as usize) {
            Some(&slot) if slot != ABSENT => {
                self.slots[slot as usize] |= REFERENCED;
                true
            }
            _ => false,
        }
    }

    /// Cache `block`, evicting one not used since the hand last passed.
    pub fn insert(&mut self, block: u32) {
        if block as usize >= self.slot_of.len() || self.lookup(block) {
            return;
        }
        // Slot indices are below capacity <= blocks < 2^31.
        #[allow(clippy::cast_possible_truncation)]
        let slot = if self.slots.len() < self.capacity {
            self.slots.push(block);
            (self.slots.len() - 1) as u32
        } else {
            // Every pass clears reference bits, so within one sweep plus
            // one step the hand finds a victim.
            let n = self.slots.len();
            loop {
                let i = self.hand;
                self.hand = if i + 1 == n { 0 } else { i + 1 };
                let s = self.slots[i];
                if s & REFERENCED == 0 {
                    self.slot_of[s as usize] = ABSENT;
                    self.slots[i] = block;
                    break i as u32;
                }
                self.slots[i] = s & !REFERENCED;
            }
        };
        self.slot_of[block as usize] = slot;
    }

    pub fn cached(&self) -> usize {
        self.slots.len()
    }
}

/// The ARC as a CLOCK cache of whole records (a second-chance
/// approximation of LRU; the real ARC also keeps a frequency list, which a
/// uniform random workload does not reward). Dirty records are kept until
/// the txg that writes them has synced.
pub struct Arc {
    slot_of: Vec<u32>,
    slots: Vec<u32>,
    referenced: Vec<bool>,
    dirty: Vec<bool>,
    dirty_list: Vec<u32>,
    hand: usize,
    capacity: usize,
}

impl Arc {
    /// A cache of `capacity` records over `records` records. Both were
    /// bounded by the caller, so the vectors are allocated once, here.
    pub fn new(records: u32, capacity: u32) -> Arc {
        let capacity = capacity.clamp(1, records.max(1)) as usize;
        Arc {
            slot_of: vec![ABSENT; records as usize],
            slots: Vec::with_capacity(capacity),
            referenced: Vec::with_capacity(capacity),
            dirty: vec![false; records as usize],
            dirty_list: Vec::with_capacity(records as usize),
            hand: 0,
            capacity,
        }
    }

    /// The cache of [`Arc::new`] holding records `first..records` as
    /// inserting them in order would leave it (a slot each, in order, none
    /// referenced yet), when they fit; set in one pass, not one insert per
    /// record (a plan fills the ARC of each layout it simulates, 32,768
    /// records for its 4 GiB file set).
    pub fn holding(records: u32, capacity: u32, first: u32) -> Arc {
        let mut arc = Arc::new(records, capacity);
        let held = first.min(records)..records;
        if held.len() > arc.capacity {
            for r in held {
                arc.insert(r);
            }
            return arc;
        }
        arc.slots.extend(held.clone());
        arc.referenced.resize(arc.slots.len(), false);
        for (slot, r) in (0u32..).zip(held) {
            arc.slot_of[r as usize] = slot;
        }
        arc
    }

    /// Whether `record` is cached; a hit marks it recently used.
    pub fn lookup(&mut self, record: u32) -> bool {
        match self.slot_of.get(record as usize) {
            Some(&slot) if slot != ABSENT => {
                self.referenced[slot as usize] = true;
                true
            }
            _ => false,
        }
    }

    /// Cache `record`, evicting a record not used since the hand last passed.
    pub fn insert(&mut self, record: u32) {
        if self.lookup(record) {
            return;
        }
        if self.slots.len() < self.capacity {
            // Below capacity: the slot count fits u32 as capacity <= records.
            #[allow(clippy::cast_possible_truncation)]
            let slot = self.slots.len() as u32;
            self.slots.push(record);
            self.referenced.push(false);
            self.slot_of[record as usize] = slot;
            return;
        }
        // Two sweeps at most: the first clears every reference bit, so the
        // second finds a victim; dirty records are passed over while a clean
        // one exists.
        let n = self.slots.len();
        let mut victim = None;
        for _ in 0..2 * n {
            let i = self.hand;
            self.hand = (self.hand + 1) % n;
            if self.dirty[self.slots[i] as usize] {
                continue;
            }
            if self.referenced[i] {
                self.referenced[i] = false;
            } else {
                victim = Some(i);
                break;
            }
        }
        // Everything dirty: the ARC would throttle writers; here the record
        // under the hand goes.
        let i = victim.unwrap_or(self.hand);
        self.slot_of[self.slots[i] as usize] = ABSENT;
        self.slots[i] = record;
        self.referenced[i] = false;
        // i < n <= capacity <= records, which is a u32.
        #[allow(clippy::cast_possible_truncation)]
        let slot = i as u32;
        self.slot_of[record as usize] = slot;
    }

    /// Mark `record` dirty in the open txg; true if it was not already.
    pub(crate) fn mark_dirty(&mut self, record: u32) -> bool {
        match self.dirty.get_mut(record as usize) {
            Some(d) if !*d => {
                *d = true;
                self.dirty_list.push(record);
                true
            }
            _ => false,
        }
    }

    /// Hand the dirty records to a txg sync and mark them clean.
    pub(crate) fn take_dirty(&mut self, mut each: impl FnMut(u32)) {
        for &r in &self.dirty_list {
            self.dirty[r as usize] = false;
            each(r);
        }
        self.dirty_list.clear();
    }

    pub fn cached(&self) -> usize {
        self.slots.len()
    }
}

/// The pool: top-level vdevs of one shape, each disk its own model.
/// Records are striped over the vdevs in turn (dynamic striping); within a
/// vdev a record's columns sit at the same row on each disk.
pub struct Pool {
    shape: Shape,
    recordsize: u64,
    disks: Vec<Disk>,
    /// Where the next txg's writes go on each vdev (copy-on-write allocates
    /// new space, so a txg writes each disk nearly sequentially).
    alloc: Vec<u64>,
    /// Where the next in-pool log block goes on each vdev.
    zil_at: Vec<u64>,
    /// The normal class's allocation rotor: the vdev the next allocation
    /// goes to, and the bytes allocated there since it arrived. Log blocks
    /// and txg writes share it (one metaslab class without a log device).
    rotor: usize,
    rotor_bytes: u64,
    written: Vec<bool>,
    /// Per disk: the txg writes not yet given to it (offset, bytes left).
    backlog: Vec<(u64, u64)>,
    /// Per disk: when each txg write given to it and not yet retired
    /// completes.
    in_flight: Vec<Vec<Nanos>>,
    busy: Vec<Busy>,
    /// A commit flushes the children of the vdevs it wrote one at a time,
    /// each after the one before is done, once its writes are done
    /// (zfs-fuse); otherwise all at once, beside the writes.
    flush_in_turn: bool,
    trace: DiskTrace,
}

/// Which part of a vdev a block is allocated in: the log blocks' area or
/// the data area the txg writes go to (each with its own next offset).
#[derive(Debug, Clone, Copy)]
enum Area {
    Log,
    Data,
}

impl Pool {
    /// `seed`: the run's seed; each disk draws its rotational positions
    /// from its own stream of it, so a run is the same for the same seed.
    pub fn new(
        shape: Shape,
        disk: &ModelParams,
        disk_bytes: u64,
        recordsize: u64,
        seed: u64,
    ) -> Pool {
        let n = shape.disks() as usize;
        let disks = (0..n)
            .map(|i| {
                let mut params = disk.clone();
                if let ModelParams::Hdd(p) = &mut params {
                    p.seed = SeededStream::new(seed ^ p.seed, i as u64).next_u64();
                }
                params.instantiate(disk_bytes)
            })
            .collect();
        let count = shape.count as usize;
        Pool {
            shape,
            recordsize,
            disks,
            // New data after the prepared files, the log area in the middle of
            // each disk: the heads travel between them, as they do on a pool
            // whose free space lies past the files.
            alloc: vec![disk_bytes / 4; count],
            zil_at: vec![disk_bytes / 2; count],
            rotor: 0,
            rotor_bytes: 0,
            written: vec![false; n],
            backlog: vec![(0, 0); n],
            in_flight: vec![Vec::new(); n],
            busy: vec![Busy::default(); n],
            flush_in_turn: false,
            trace: DiskTrace::default(),
        }
    }

    /// Record every disk request from now on ([`Pool::take_trace`]).
    pub(crate) fn start_trace(&mut self) {
        self.trace.start();
    }

    /// The requests recorded since [`Pool::start_trace`], in the order
    /// the pool handed them to its disks (a flush in turn arrives later
    /// than the next commit's writes may).
    pub(crate) fn take_trace(&mut self) -> Vec<DiskRequest> {
        self.trace.take()
    }

    /// A commit's flushes one child at a time ([`Pool::flush_vdevs`]).
    #[must_use]
    pub fn flushing_in_turn(mut self, in_turn: bool) -> Pool {
        self.flush_in_turn = in_turn;
        self
    }

    pub fn vdevs(&self) -> usize {
        self.shape.count as usize
    }

    /// Give `op` to disk `i` at `now`, keeping its busy time.
    fn submit(&mut self, i: usize, now: Nanos, op: Op) -> Nanos {
        let done = self.disks[i].submit(now, op);
        self.busy[i].add(now, done);
        self.trace.record(now, i, op, done);
        done
    }

    /// The busy time of the busiest disk.
    pub(crate) fn busiest_disk_ns(&self) -> Nanos {
        self.busy.iter().map(|b| b.ns).max().unwrap_or(0)
    }

    fn parity(&self) -> u32 {
        match self.shape.kind {
            VdevKind::Raidz { parity } => parity,
            _ => 0,
        }
    }

    /// Data disks a block of `bytes` spreads over, and the sectors each holds.
    fn columns(&self, bytes: u64) -> (u32, u64) {
        match self.shape.kind {
            VdevKind::Raidz { parity } => {
                let data = u64::from(self.shape.width - parity);
                let d = data.min(bytes.div_ceil(SECTOR)).max(1);
                // d <= width, a u32.
                #[allow(clippy::cast_possible_truncation)]
                let cols = d as u32;
                (cols, round_up(bytes.div_ceil(d), SECTOR))
            }
            _ => (1, round_up(bytes, SECTOR)),
        }
    }

    fn disk_index(&self, vdev: usize, column: u64) -> usize {
        let w = self.shape.width as usize;
        // column < width after the modulo.
        #[allow(clippy::cast_possible_truncation)]
        let c = (column % w as u64) as usize;
        vdev * w + c
    }

    /// Read one record from the disks holding it.
    pub fn read_record(&mut self, now: Nanos, record: u32) -> Nanos {
        let vdev = record as usize % self.vdevs();
        let row = u64::from(record) / self.vdevs() as u64;
        let (cols, per_disk) = self.columns(self.recordsize);
        let offset = row * per_disk;
        let mut done = now;
        match self.shape.kind {
            // A mirror reads one copy: the children take turns.
            VdevKind::Mirror => {
                let i = self.disk_index(vdev, row);
                done = self.submit(
                    i,
                    now,
                    Op::Read {
                        offset,
                        len: per_disk,
                    },
                );
            }
            // Healthy raidz reads the data columns only, starting where the
            // row's rotation puts them.
            _ => {
                for c in 0..u64::from(cols) {
                    let i = self.disk_index(vdev, row + c);
                    done = done.max(self.submit(
                        i,
                        now,
                        Op::Read {
                            offset,
                            len: per_disk,
                        },
                    ));
                }
            }
        }
        done
    }

    /// Write `per_disk` bytes at `offset` to the disks a block of `cols`
    /// data columns occupies on `vdev` (all children of a mirror, data plus
    /// parity columns of raidz), then flush every child of the vdev: the
    /// ZIL flushes the top-level vdev it wrote, and a flush of an interior
    /// vdev is sent to each of its children, written to or not (`zio_ioctl`
    /// / `zio_flush` in zio.c, OpenSolaris through OpenZFS 2.2). Returns
    /// when all are done.
    fn write_and_flush(
        &mut self,
        now: Nanos,
        vdev: usize,
        cols: u32,
        offset: u64,
        len: u64,
    ) -> Nanos {
        let written = self.write_columns(now, vdev, cols, offset, len);
        self.flush_vdevs(now, written, [vdev])
    }

    /// Flush every child of each of `vdevs` for a commit whose writes were
    /// issued at `now` and are done at `written`; returns when all are
    /// flushed. Kernel ZFS issues the flushes at once (each disk takes its
    /// flush after its write). zfs-fuse flushes a child with an `fsync(2)`
    /// of its file, and its vdev ioctls run on one taskq thread, so the
    /// children are flushed one after another once the writes are done: a
    /// lab disk trace (24-wide raidz3, rndrw with an fsync a write) has
    /// each flush arrive as the one before it completes, 0.08 ms apart when
    /// the disk has nothing cached and 2-6 ms after one that destages, the
    /// first after the block's last write completes.
    pub(crate) fn flush_vdevs(
        &mut self,
        now: Nanos,
        written: Nanos,
        vdevs: impl IntoIterator<Item = usize>,
    ) -> Nanos {
        let mut done = written;
        for vdev in vdevs {
            done = if self.flush_in_turn {
                self.flush_vdev_in_turn(done, vdev)
            } else {
                done.max(self.flush_vdev(now, vdev))
            };
        }
        done
    }

    /// Flush the children of `vdev` one after another from `now`; returns
    /// when the last is done.
    fn flush_vdev_in_turn(&mut self, now: Nanos, vdev: usize) -> Nanos {
        let w = self.shape.width as usize;
        let mut at = now;
        for i in vdev * w..(vdev + 1) * w {
            at = self.submit(i, at, Op::Flush);
        }
        at
    }

    /// Write `len` bytes at `offset` to the disks a block of `cols` data
    /// columns occupies on `vdev` (all children of a mirror, data plus
    /// parity columns of raidz); returns when all are written.
    fn write_columns(
        &mut self,
        now: Nanos,
        vdev: usize,
        cols: u32,
        offset: u64,
        len: u64,
    ) -> Nanos {
        let targets = self.write_targets(cols) as usize;
        // The first `targets` children (fewer than the width: no modulo).
        let first = vdev * self.shape.width as usize;
        let mut done = now;
        for i in first..first + targets {
            done = done.max(self.submit(i, now, Op::Write { offset, len }));
        }
        done
    }

    /// Children a block of `cols` data columns is written to: every child
    /// of a mirror, the data and parity columns of raidz.
    fn write_targets(&self, cols: u32) -> u32 {
        match self.shape.kind {
            VdevKind::Mirror => self.shape.width,
            _ => cols + self.parity(),
        }
        .min(self.shape.width)
    }

    /// Device requests an in-pool log block of `bytes` makes
    /// ([`Pool::write_log_block`]): a write to each child it occupies and a
    /// flush of every child of its vdev.
    pub(crate) fn log_block_requests(&self, bytes: u64) -> u64 {
        let (cols, _) = self.columns(bytes);
        u64::from(self.write_targets(cols) + self.shape.width)
    }

    /// Device requests a data block of `bytes` written by `dmu_sync` makes
    /// (its flush is counted with the log block's vdev flushes).
    pub(crate) fn data_block_requests(&self, bytes: u64) -> u64 {
        let (cols, _) = self.columns(bytes);
        u64::from(self.write_targets(cols))
    }

    /// Flush every child of top-level vdev `vdev` (a flush of an interior
    /// vdev reaches each child, written to or not: `zio_flush` in zio.c);
    /// returns when all are done.
    pub(crate) fn flush_vdev(&mut self, now: Nanos, vdev: usize) -> Nanos {
        // The children are disks vdev * width .. (vdev + 1) * width: walked
        // as slices, not through `disk_index`'s modulo (a division per
        // child, and a commit on a 200-wide raidz flushes 200).
        let w = self.shape.width as usize;
        let children = vdev * w..(vdev + 1) * w;
        let mut done = now;
        let first = children.start;
        for (i, (disk, busy)) in self.disks[children.clone()]
            .iter_mut()
            .zip(&mut self.busy[children])
            .enumerate()
        {
            let flushed = disk.submit(now, Op::Flush);
            busy.add(now, flushed);
            self.trace.record(now, first + i, Op::Flush, flushed);
            done = done.max(flushed);
        }
        done
    }

    /// Bytes an allocation of `cols` data columns of `per_disk` bytes
    /// takes on its vdev (its asize): a mirror's block once, a raidz
    /// block with its parity columns.
    fn asize(&self, cols: u32, per_disk: u64) -> u64 {
        match self.shape.kind {
            VdevKind::Mirror => per_disk,
            _ => per_disk * u64::from((cols + self.parity()).min(self.shape.width)),
        }
    }

    /// `mg_aliquot` of this pool's vdevs.
    fn aliquot(&self) -> u64 {
        METASLAB_ALIQUOT * u64::from(self.shape.width.max(1))
    }

    /// `bytes` allocated at the rotor's vdev: past the vdev's aliquot the
    /// rotor moves on (metaslab_alloc_dva: `mca_aliquot >= mg_aliquot`),
    /// as many vdevs as whole aliquots were allocated.
    fn advance_rotor(&mut self, bytes: u64) {
        self.rotor_bytes += bytes;
        let aliquot = self.aliquot();
        if self.rotor_bytes >= aliquot {
            let steps = self.rotor_bytes / aliquot;
            self.rotor_bytes %= aliquot;
            // steps % vdevs < vdevs, a usize.
            #[allow(clippy::cast_possible_truncation)]
            let steps = (steps % self.vdevs() as u64) as usize;
            self.rotor = (self.rotor + steps) % self.vdevs();
        }
    }

    /// One log block of `bytes` written into the pool (no log device) and
    /// flushed before the commit returns (zil_commit flushes every vdev
    /// the lwb wrote). The block goes where the allocator's rotor is
    /// (zio_alloc_zil -> metaslab_alloc in the normal class): one vdev
    /// takes a dataset's log blocks until its aliquot (`METASLAB_ALIQUOT`
    /// per child, 12 MiB on a 24-wide raidz) is allocated, so the commits
    /// of one dataset do not spread over the vdevs block by block; the txg
    /// writes' allocations move the rotor too ([`Pool::queue_txg`]).
    pub(crate) fn write_log_block(&mut self, now: Nanos, bytes: u64) -> Nanos {
        let (vdev, cols, offset, per_disk) = self.allocate(bytes, Area::Log);
        self.write_and_flush(now, vdev, cols, offset, per_disk)
    }

    /// Where the allocator's rotor puts a block of `bytes`: its vdev, its
    /// columns, its offset in `area` and its bytes per disk. The rotor and
    /// the area's next offset move past it.
    fn allocate(&mut self, bytes: u64, area: Area) -> (usize, u32, u64, u64) {
        let vdev = self.rotor;
        let (cols, per_disk) = self.columns(bytes);
        self.advance_rotor(self.asize(cols, per_disk));
        let next = match area {
            Area::Log => &mut self.zil_at[vdev],
            Area::Data => &mut self.alloc[vdev],
        };
        let offset = *next;
        *next += per_disk;
        (vdev, cols, offset, per_disk)
    }

    /// A log block of `bytes` in the pool, placed as [`Pool::write_log_block`]
    /// places it, written but not flushed: a commit with WR_INDIRECT records
    /// flushes every vdev its log block and its data blocks touched once all
    /// are written ([`Pool::flush_vdev`]). Returns when it is written, and
    /// its vdev.
    pub(crate) fn write_log_block_unflushed(&mut self, now: Nanos, bytes: u64) -> (Nanos, usize) {
        let (vdev, cols, offset, per_disk) = self.allocate(bytes, Area::Log);
        (self.write_columns(now, vdev, cols, offset, per_disk), vdev)
    }

    /// A data block of `bytes` written now, not flushed: `dmu_sync`'s write
    /// of a WR_INDIRECT record's block (dmu.c). It is allocated as any data
    /// block is (`arc_write` -> `zio_write` -> `metaslab_alloc` in the
    /// normal class: the rotor, in the vdev's data area, where the txg's
    /// writes go) and issued at `ZIO_PRIORITY_SYNC_WRITE`, so it goes to
    /// the disks at once, ahead of queued txg writes, as log blocks do.
    /// Returns when it is written, and its vdev.
    pub(crate) fn write_data_block(&mut self, now: Nanos, bytes: u64) -> (Nanos, usize) {
        let (vdev, cols, offset, per_disk) = self.allocate(bytes, Area::Data);
        (self.write_columns(now, vdev, cols, offset, per_disk), vdev)
    }

    /// Queue a txg's writes: `records[v]` dirty records (plus `extra_bytes`
    /// spread over the vdevs) for each vdev, one sequential extent per disk
    /// (copy-on-write allocates new space). Nothing is submitted yet: the
    /// vdev queue feeds them to the disks a few at a time
    /// ([`Pool::issue_async`]) so synchronous I/O overtakes them. Returns
    /// whether there is anything to write.
    pub(crate) fn queue_txg(&mut self, records: &[u64], extra_bytes: u64) -> bool {
        let (cols, per_disk) = self.columns(self.recordsize);
        let extra_per_vdev = extra_bytes.div_ceil(self.vdevs() as u64);
        self.written.iter_mut().for_each(|w| *w = false);
        let w = self.shape.width as usize;
        // Every disk a record touches: each mirror child holds a copy; a
        // raidz record's data and parity columns (all of a wide record's
        // row, as the columns rotate from row to row).
        let disks = match self.shape.kind {
            VdevKind::Mirror => self.shape.width,
            _ => (cols + self.parity()).min(self.shape.width),
        } as usize;
        let mut any = false;
        for vdev in 0..self.vdevs() {
            let n = records.get(vdev).copied().unwrap_or(0);
            let mut len = n * per_disk;
            if extra_per_vdev > 0 {
                len += self.columns(extra_per_vdev).1;
            }
            if len == 0 {
                continue;
            }
            let offset = self.alloc[vdev];
            self.alloc[vdev] += len;
            // The txg's data allocations go through the same rotor.
            self.advance_rotor(self.asize(cols, len));
            for i in vdev * w..vdev * w + disks {
                self.backlog[i] = (offset, len);
                self.written[i] = true;
                any = true;
            }
        }
        any
    }

    pub fn disks(&self) -> usize {
        self.disks.len()
    }

    /// vdev_queue: give `disk` queued txg writes, aggregated up to
    /// `aggregate` bytes each, until `max_active` are in flight.
    pub(crate) fn issue_async(&mut self, now: Nanos, disk: usize, max_active: u32, aggregate: u64) {
        while self.in_flight[disk].len() < max_active as usize && self.backlog[disk].1 > 0 {
            let (offset, left) = self.backlog[disk];
            let len = left.min(aggregate.max(SECTOR));
            self.backlog[disk] = (offset + len, left - len);
            let done = self.submit(disk, now, Op::Write { offset, len });
            self.in_flight[disk].push(done);
        }
    }

    /// Retire the txg writes complete by `now` and give each disk that
    /// completed one more, up to `max_active` in flight.
    pub(crate) fn retire_async(&mut self, now: Nanos, max_active: u32, aggregate: u64) {
        for disk in 0..self.disks.len() {
            let before = self.in_flight[disk].len();
            self.in_flight[disk].retain(|&t| t > now);
            if self.in_flight[disk].len() < before {
                self.issue_async(now, disk, max_active, aggregate);
            }
        }
    }

    /// When the next txg write in flight completes.
    pub(crate) fn next_async_done(&self) -> Option<Nanos> {
        self.in_flight.iter().flatten().copied().min()
    }

    /// Whether every queued txg write has been written.
    pub(crate) fn txg_written(&self) -> bool {
        self.in_flight.iter().all(Vec::is_empty) && self.backlog.iter().all(|b| b.1 == 0)
    }

    /// Flush every disk the txg wrote (the txg's uberblock is written only
    /// after its data is stable); returns when all are done.
    pub(crate) fn flush_written(&mut self, now: Nanos) -> Nanos {
        let mut done = now;
        for i in 0..self.disks.len() {
            if self.written[i] {
                done = done.max(self.submit(i, now, Op::Flush));
            }
        }
        done
    }
}

/// A separate intent-log device (SLOG): log blocks are written one after
/// another and flushed. A mirrored one writes and flushes each block on
/// every member and is done when the slowest member is: a mirror's write
/// zio completes when all its children have (vdev_mirror.c), and the lwb's
/// flush reaches every leaf of the log vdev (zio_flush).
pub struct LogDevice {
    members: Vec<Disk>,
    at: u64,
    pub busy: Busy,
    trace: DiskTrace,
    /// The trace's number of the first member (after the pool's disks).
    first_disk: usize,
}

impl LogDevice {
    /// One log device of `model`. `seed`: the run's seed (a hard disk as
    /// log device draws its rotational positions from it).
    pub fn new(model: &ModelParams, capacity: u64, seed: u64) -> LogDevice {
        LogDevice::mirrored(&[model], capacity, seed)
    }

    /// A log vdev of `members` (one: a plain log device; two or more: a
    /// mirror). Each member draws its own rotational positions.
    pub fn mirrored(members: &[&ModelParams], capacity: u64, seed: u64) -> LogDevice {
        let members = members
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut model = (*m).clone();
                if let ModelParams::Hdd(p) = &mut model {
                    p.seed = SeededStream::new(seed ^ p.seed, u64::MAX - i as u64).next_u64();
                }
                model.instantiate(capacity)
            })
            .collect();
        LogDevice {
            members,
            at: 0,
            busy: Busy::default(),
            trace: DiskTrace::default(),
            first_disk: 0,
        }
    }

    /// Device requests a log block makes: a write and a flush on each
    /// member.
    pub(crate) fn log_block_requests(&self) -> u64 {
        2 * self.members.len() as u64
    }

    pub(crate) fn write_log_block(&mut self, now: Nanos, bytes: u64) -> Nanos {
        let len = round_up(bytes, SECTOR);
        let offset = self.at;
        self.at += len;
        let mut done = now;
        for (i, disk) in self.members.iter_mut().enumerate() {
            let write = Op::Write { offset, len };
            let written = disk.submit(now, write);
            // The flush follows the write's completion (zil_lwb_write_done
            // issues it), so it is submitted then.
            let flushed = disk.submit(written, Op::Flush);
            self.trace.record(now, self.first_disk + i, write, written);
            self.trace
                .record(written, self.first_disk + i, Op::Flush, flushed);
            done = done.max(flushed);
        }
        self.busy.add(now, done);
        done
    }

    /// Record every request from now on, numbering the members from
    /// `first_disk` ([`LogDevice::take_trace`]).
    pub(crate) fn start_trace(&mut self, first_disk: usize) {
        self.first_disk = first_disk;
        self.trace.start();
    }

    /// The requests recorded since [`LogDevice::start_trace`].
    pub(crate) fn take_trace(&mut self) -> Vec<DiskRequest> {
        self.trace.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zfs_model::diskmodel::FlashParams;

    #[test]
    fn a_mirrored_log_block_is_done_when_the_slower_member_is() {
        let fast = ModelParams::Flash(FlashParams {
            flush_ms: 0.5,
            ..FlashParams::sata_plp()
        });
        let slow = ModelParams::Flash(FlashParams {
            flush_ms: 2.0,
            ..FlashParams::sata_plp()
        });
        let one = LogDevice::new(&fast, 1 << 30, 1).write_log_block(0, 4096);
        let pair = LogDevice::mirrored(&[&fast, &slow], 1 << 30, 1).write_log_block(0, 4096);
        let slow_alone = LogDevice::new(&slow, 1 << 30, 1).write_log_block(0, 4096);
        assert!(one < pair, "{one} {pair}");
        assert_eq!(pair, slow_alone);
        // Two of one model take what one takes.
        let twin = LogDevice::mirrored(&[&fast, &fast], 1 << 30, 1).write_log_block(0, 4096);
        assert_eq!(twin, one);
    }

    #[test]
    fn an_in_pool_log_block_flushes_every_child_of_its_vdev() {
        // A 4 KiB log block on a 24-wide raidz3 is written to one data
        // column and three parity columns, and the flush of the top-level
        // vdev reaches all 24 disks (zio_ioctl/zio_flush in zio.c).
        let disk = ModelParams::Flash(FlashParams {
            flush_ms: 1.0,
            ..FlashParams::sata_plp()
        });
        let shape = Shape::parse("1xraidz3-24").unwrap();
        let mut pool = Pool::new(shape, &disk, 1 << 40, 128 << 10, 1);
        pool.write_log_block(0, 4096);
        let busy: Vec<Nanos> = pool.busy.iter().map(|b| b.ns).collect();
        assert!(busy.iter().all(|&ns| ns >= 1_000_000), "{busy:?}");
        let written = busy.iter().filter(|&&ns| ns > 1_000_000).count();
        assert_eq!(written, 4, "written: data + 3 parity: {busy:?}");
    }

    #[test]
    fn flushed_in_turn_a_vdevs_children_take_the_sum_of_their_flushes() {
        // zfs-fuse: one child after another, once the block is written. A
        // flash disk whose flush takes 1 ms: a 24-wide raidz3's in-pool log
        // block waits for 24 flushes in a row instead of one at a time
        // beside the writes.
        let disk = ModelParams::Flash(FlashParams {
            flush_ms: 1.0,
            ..FlashParams::sata_plp()
        });
        let shape = Shape::parse("1xraidz3-24").unwrap();
        let at_once = Pool::new(shape, &disk, 1 << 40, 128 << 10, 1).write_log_block(0, 4096);
        let in_turn = Pool::new(shape, &disk, 1 << 40, 128 << 10, 1)
            .flushing_in_turn(true)
            .write_log_block(0, 4096);
        assert!(at_once < 3_000_000, "{at_once}");
        assert!(in_turn >= 24_000_000, "{in_turn}");
        assert!(in_turn < 24_000_000 + at_once, "{in_turn}");
    }

    #[test]
    fn in_pool_log_blocks_stay_on_one_vdev_until_its_aliquot_is_allocated() {
        // The normal class's rotor moves after mg_aliquot = 512 KiB per
        // child (metaslab.c): on 3xraidz2-8, 4 MiB of log blocks (with
        // parity) go to one vdev before the next takes them.
        let disk = ModelParams::Flash(FlashParams::sata_plp());
        let shape = Shape::parse("3xraidz2-8").unwrap();
        let mut pool = Pool::new(shape, &disk, 1 << 40, 128 << 10, 1);
        let vdev_busy = |pool: &Pool, v: usize| -> Nanos {
            pool.busy[v * 8..v * 8 + 8].iter().map(|b| b.ns).sum()
        };
        // A 4 KiB block: 1 data + 2 parity columns = 12 KiB allocated.
        for i in 0..(4 << 20) / (12 << 10) {
            pool.write_log_block(i * 1_000_000, 4096);
        }
        assert!(vdev_busy(&pool, 0) > 0);
        assert_eq!(
            vdev_busy(&pool, 1),
            0,
            "vdev 1 untouched within vdev 0's aliquot"
        );
        assert_eq!(vdev_busy(&pool, 2), 0);
        for i in 0..4 {
            pool.write_log_block(1_000_000_000 + i * 1_000_000, 4096);
        }
        assert!(vdev_busy(&pool, 1) > 0, "the rotor moved on");
        assert_eq!(vdev_busy(&pool, 2), 0);
    }

    #[test]
    fn a_4k_write_is_4500_bytes_on_the_wire() {
        assert_eq!(wire_bytes(4096), 4500);
    }

    #[test]
    fn one_flow_uses_one_member() {
        let one = Link::parse("1G").unwrap().unwrap();
        let two = Link::parse("2x1G").unwrap().unwrap();
        let mut a = LinkPath::new(one, 100_000, RPC_HEADER_BYTES);
        let mut b = LinkPath::new(two, 100_000, RPC_HEADER_BYTES);
        for _ in 0..10 {
            assert_eq!(a.send_up(0, 4096), b.send_up(0, 4096));
        }
        // 4,500 bytes at 1 Gbit/s: 36 µs each, queued, plus half the RTT.
        let mut c = LinkPath::new(one, 100_000, RPC_HEADER_BYTES);
        assert_eq!(c.send_up(0, 4096), 36_000 + 50_000);
        assert_eq!(c.send_up(0, 4096), 72_000 + 50_000);
    }

    #[test]
    fn cpu_cores_serve_in_parallel_then_queue() {
        let mut cpu = Cpu::new(2, 0.0);
        assert_eq!(cpu.run(0, 10), 10);
        assert_eq!(cpu.run(0, 10), 10);
        assert_eq!(cpu.run(0, 10), 20);
    }

    #[test]
    fn work_takes_longer_for_each_other_busy_core_at_its_start() {
        let mut cpu = Cpu::new(3, 0.5);
        // Alone on the machine: its own cost.
        assert_eq!(cpu.run(0, 10), 10);
        // One other core busy: half as long again.
        assert_eq!(cpu.run(0, 10), 15);
        // Two others busy: twice as long.
        assert_eq!(cpu.run(0, 10), 20);
        // At 10 the first core is free and starts it; the two others are
        // still busy (until 15 and 20).
        assert_eq!(cpu.run(10, 10), 30);
        // At 40 every core is idle again.
        assert_eq!(cpu.run(40, 10), 50);
        assert_eq!(cpu.used, 10 + 15 + 20 + 20 + 10);
    }

    #[test]
    fn page_cache_evicts_the_block_not_used_since_the_hand_passed() {
        let mut c = PageCache::new(10, 2);
        c.insert(1);
        c.insert(2);
        assert!(c.lookup(1));
        c.insert(3);
        assert!(c.lookup(1), "referenced: kept");
        assert!(!c.lookup(2), "unreferenced: evicted");
        assert!(c.lookup(3));
        assert_eq!(c.cached(), 2);
        c.insert(99);
        assert!(!c.lookup(99), "outside the file set: not cached");
    }

    #[test]
    fn arc_evicts_the_unreferenced_and_keeps_dirty_records() {
        let mut arc = Arc::new(10, 2);
        arc.insert(1);
        arc.insert(2);
        arc.mark_dirty(1);
        arc.insert(3);
        assert!(arc.lookup(1), "dirty record stays");
        assert!(!arc.lookup(2));
        assert!(arc.lookup(3));
        let mut synced = Vec::new();
        arc.take_dirty(|r| synced.push(r));
        assert_eq!(synced, vec![1]);
        assert_eq!(arc.cached(), 2);
    }

    /// An ARC's whole state, to compare two built differently.
    fn arc_state(arc: &Arc) -> (Vec<u32>, Vec<u32>, Vec<bool>, usize, usize) {
        (
            arc.slot_of.clone(),
            arc.slots.clone(),
            arc.referenced.clone(),
            arc.hand,
            arc.capacity,
        )
    }

    #[test]
    fn an_arc_filled_at_once_is_the_arc_filled_record_by_record() {
        // Full (the server's case), partly full, empty, and more records
        // than it holds (inserted one by one, evicting).
        for (records, capacity, first) in [(64, 16, 48), (64, 32, 48), (64, 0, 64), (64, 8, 40)] {
            let at_once = Arc::holding(records, capacity, first);
            let mut one_by_one = Arc::new(records, capacity);
            for r in first..records {
                one_by_one.insert(r);
            }
            assert_eq!(
                arc_state(&at_once),
                arc_state(&one_by_one),
                "{records} {capacity} {first}"
            );
            // And they go on alike: hits, misses, evictions.
            let (mut a, mut b) = (at_once, one_by_one);
            for r in [50, 3, 63, 7, 50, 12, 49, 0] {
                assert_eq!(a.lookup(r), b.lookup(r));
                a.insert(r);
                b.insert(r);
            }
            assert_eq!(arc_state(&a), arc_state(&b));
        }
    }

    #[test]
    fn raidz_reads_the_data_columns_mirror_one_child() {
        let flash = ModelParams::Flash(FlashParams::sata_plp());
        let shape = Shape::parse("1xraidz2-8").unwrap();
        let (cols, per) = Pool::new(shape, &flash, 1 << 40, 128 << 10, 1).columns(128 << 10);
        assert_eq!((cols, per), (6, round_up((128 << 10) / 6 + 1, SECTOR)));
        let shape = Shape::parse("2xmirror").unwrap();
        let p = Pool::new(shape, &flash, 1 << 40, 128 << 10, 1);
        assert_eq!(p.columns(4096), (1, 4096));
    }

    #[test]
    fn log_device_costs_write_then_flush() {
        let mut d = LogDevice::new(&ModelParams::Flash(FlashParams::sata_plp()), 1 << 30, 1);
        let done = d.write_log_block(0, 4096);
        // Intel 710 class: about 0.158 ms per 4 KiB write + flush.
        assert!((done as f64 / 1e6 - 0.158).abs() < 0.01, "{done}");
    }
}
