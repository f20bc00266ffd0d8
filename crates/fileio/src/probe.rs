//! The round-trip probe (`tankbench probe`): in well under a minute, the
//! latency of the few calls that decide how a NAS answers a client, each
//! repeated and summarised with percentiles. They are the numbers the
//! simulator's uncertain parameters need (network round trip, server
//! per-call cost, sync write and commit cost).
//!
//! Against `nfs://HOST/EXPORT`, through tankbench's own NFSv3 client: NULL
//! (the network and RPC layer alone), GETATTR, a 4 KiB READ, a 4 KiB WRITE
//! FILE_SYNC, a 4 KiB WRITE UNSTABLE, a COMMIT after one such write, and a
//! COMMIT with nothing to commit. On a local directory the same shape with
//! stat, pread, pwrite + fdatasync, pwrite, fdatasync after a pwrite and an
//! fsync of a clean file (there is no NULL).
//!
//! The probe makes one scratch file, `tankbench-probe.<pid>` (created
//! exclusively, 1 MiB), and removes it at the end, also after a first stop
//! signal or a failed call (through a new connection when the failure broke
//! the first one); when it cannot, the error line names the file. A second
//! stop signal removes a local file and ends the process at once (an NFS
//! export's file needs the probe's own call: it waits for that, and every
//! call has a deadline).
//!
//! The whole probe takes at most [`ProbeSpec::bound`]: ten times
//! `time_per_op` (50 s by default). Against NFS every call is cut short at
//! that: connecting, mounting, creating and filling the scratch file and
//! the seven operations get eight times `time_per_op` together, and
//! removing the file (with a new connection if needed) two more.

use crate::result::{LatencySummary, ToolInfo};
use crate::slog::{check_kind, ResultDocError};
use crate::summary::{summarize, ExactEvents};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `kind` of a probe result document.
pub(crate) const PROBE_KIND: &str = "tankbench.probe";
/// Version of the probe result's fields.
pub(crate) const PROBE_SCHEMA_VERSION: u32 = 1;
/// The percentiles every operation reports.
pub(crate) const PROBE_PERCENTILES: [f64; 4] = [50.0, 95.0, 99.0, 99.9];
/// The size of each read and write.
pub(crate) const PROBE_BLOCK: usize = 4096;
/// The scratch file's size: the reads and writes cycle through its blocks.
const SCRATCH_BYTES: usize = 1 << 20;

/// One timed operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum ProbeOp {
    /// NFS NULL: the round trip with no file system work (NFS only).
    #[serde(rename = "null")]
    Null,
    /// GETATTR / stat(2).
    #[serde(rename = "getattr")]
    Getattr,
    /// READ of 4 KiB / pread(2) (from the server's or page cache: the round
    /// trip, not the disk).
    #[serde(rename = "read_4k")]
    Read4k,
    /// WRITE 4 KiB FILE_SYNC / pwrite + fdatasync: one durable small write.
    #[serde(rename = "stable_write_4k")]
    StableWrite4k,
    /// WRITE 4 KiB UNSTABLE / pwrite: the write without durability.
    #[serde(rename = "unstable_write_4k")]
    UnstableWrite4k,
    /// COMMIT / fdatasync after one 4 KiB unstable write (only the commit
    /// is timed).
    #[serde(rename = "commit")]
    Commit,
    /// COMMIT / fsync with nothing written since the last one.
    #[serde(rename = "commit_clean")]
    CommitClean,
}

impl ProbeOp {
    pub const ALL: [ProbeOp; 7] = [
        ProbeOp::Null,
        ProbeOp::Getattr,
        ProbeOp::Read4k,
        ProbeOp::StableWrite4k,
        ProbeOp::UnstableWrite4k,
        ProbeOp::Commit,
        ProbeOp::CommitClean,
    ];

    /// The name in the result document.
    pub fn name(self) -> &'static str {
        match self {
            ProbeOp::Null => "null",
            ProbeOp::Getattr => "getattr",
            ProbeOp::Read4k => "read_4k",
            ProbeOp::StableWrite4k => "stable_write_4k",
            ProbeOp::UnstableWrite4k => "unstable_write_4k",
            ProbeOp::Commit => "commit",
            ProbeOp::CommitClean => "commit_clean",
        }
    }

    /// The call that was timed, for a transport; None when the transport has
    /// no such call.
    pub fn call(self, transport: Transport) -> Option<&'static str> {
        Some(match (transport, self) {
            (Transport::Nfs3, ProbeOp::Null) => "NULL",
            (Transport::Nfs3, ProbeOp::Getattr) => "GETATTR",
            (Transport::Nfs3, ProbeOp::Read4k) => "READ 4 KiB",
            (Transport::Nfs3, ProbeOp::StableWrite4k) => "WRITE 4 KiB FILE_SYNC",
            (Transport::Nfs3, ProbeOp::UnstableWrite4k) => "WRITE 4 KiB UNSTABLE",
            (Transport::Nfs3, ProbeOp::Commit) => "COMMIT after a 4 KiB UNSTABLE WRITE",
            (Transport::Nfs3, ProbeOp::CommitClean) => "COMMIT, nothing to commit",
            (Transport::Local, ProbeOp::Null) => return None,
            (Transport::Local, ProbeOp::Getattr) => "stat",
            (Transport::Local, ProbeOp::Read4k) => "pread 4 KiB",
            (Transport::Local, ProbeOp::StableWrite4k) => "pwrite 4 KiB + fdatasync",
            (Transport::Local, ProbeOp::UnstableWrite4k) => "pwrite 4 KiB",
            (Transport::Local, ProbeOp::Commit) => "fdatasync after a 4 KiB pwrite",
            (Transport::Local, ProbeOp::CommitClean) => "fsync of a clean file",
        })
    }
}

/// How the target was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// tankbench's NFSv3 client over TCP.
    Nfs3,
    /// System calls on a local (or kernel-mounted) directory.
    Local,
}

/// What to probe.
#[derive(Debug, Clone)]
pub enum ProbeTarget {
    Nfs(nfs::Target),
    Directory(PathBuf),
}

impl ProbeTarget {
    /// `nfs://HOST/EXPORT` or a directory; any other `scheme://` is refused
    /// (a typo of the scheme must not become a directory name).
    pub fn from_path(path: &Path) -> Result<ProbeTarget, ProbeError> {
        let text = path.to_string_lossy();
        // `HOST:/EXPORT`, as mount(8) and /etc/fstab write it, when no local
        // path has that name.
        if let Some((host, export)) = text.split_once(":/") {
            let host_like = !host.is_empty()
                && !host.contains('/')
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
            if host_like && !export.starts_with('/') && !path.exists() {
                return nfs::Target::parse(&format!("nfs://{host}/{export}"))
                    .map(ProbeTarget::Nfs)
                    .map_err(ProbeError::Nfs);
            }
        }
        if nfs::Target::is_nfs_url(&text) {
            return nfs::Target::parse(&text)
                .map(ProbeTarget::Nfs)
                .map_err(ProbeError::Nfs);
        }
        if let Some((scheme, _)) = text.split_once("://") {
            if !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '+')
            {
                return Err(ProbeError::UnknownScheme {
                    scheme: scheme.to_string(),
                });
            }
        }
        Ok(ProbeTarget::Directory(path.to_path_buf()))
    }

    fn transport(&self) -> Transport {
        match self {
            ProbeTarget::Nfs(_) => Transport::Nfs3,
            ProbeTarget::Directory(_) => Transport::Local,
        }
    }
}

impl std::fmt::Display for ProbeTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeTarget::Nfs(t) => write!(f, "{t}"),
            ProbeTarget::Directory(d) => write!(f, "{}", d.display()),
        }
    }
}

/// The probe's settings.
#[derive(Debug, Clone)]
pub struct ProbeSpec {
    pub target: ProbeTarget,
    /// Samples per operation (at most; see `time_per_op`).
    pub samples: u64,
    /// The longest one operation's samples may take.
    pub time_per_op: Duration,
}

impl ProbeSpec {
    /// 200 samples or 5 s per operation (the whole probe: at most 50 s,
    /// see [`ProbeSpec::bound`]).
    pub fn new(target: ProbeTarget) -> ProbeSpec {
        ProbeSpec {
            target,
            samples: 200,
            time_per_op: Duration::from_secs(5),
        }
    }

    /// The longest the whole probe takes against NFS: setup, fill and the
    /// seven operations within [`ProbeSpec::work_allowance`], the removal of
    /// the scratch file within [`ProbeSpec::cleanup_allowance`]. (A local
    /// directory's system calls cannot be cut short; it has no such bound.)
    pub fn bound(&self) -> Duration {
        self.work_allowance() + self.cleanup_allowance()
    }

    /// Mounting, creating and filling the scratch file, and the operations:
    /// eight times `time_per_op`.
    pub fn work_allowance(&self) -> Duration {
        self.time_per_op.saturating_mul(8)
    }

    /// Removing the scratch file, a new connection included.
    pub fn cleanup_allowance(&self) -> Duration {
        self.time_per_op.saturating_mul(2)
    }

    pub fn check(&self) -> Result<(), ProbeError> {
        if !(1..=1_000_000).contains(&self.samples) {
            return Err(ProbeError::Setting {
                option: "--samples",
                value: self.samples,
                accepted: "1 to 1000000",
            });
        }
        if self.time_per_op.is_zero() || self.time_per_op > Duration::from_secs(600) {
            return Err(ProbeError::Setting {
                option: "--time-per-op",
                value: self.time_per_op.as_millis().try_into().unwrap_or(u64::MAX),
                accepted: "more than 0 and at most 600 seconds (value in ms)",
            });
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("{option}={value}: accepted: {accepted}")]
    Setting {
        option: &'static str,
        value: u64,
        accepted: &'static str,
    },
    #[error(
        "{scheme}:// is not a target probe knows; accepted: nfs://HOST[:PORT]/EXPORT or a local directory"
    )]
    UnknownScheme { scheme: String },
    #[error("{path}: not a directory (probe makes its scratch file in a directory)")]
    NotADirectory { path: PathBuf },
    #[error("{0}")]
    Nfs(nfs::Error),
    /// The scratch file stays on the export: REMOVE failed or could not be
    /// sent.
    #[error("the scratch file {name} is left in {export}: {source}")]
    ScratchLeft {
        name: String,
        export: String,
        source: Box<nfs::Error>,
    },
    /// CREATE of the scratch file got no answer: the server may have made
    /// it, and the probe cannot tell whether it is its own to remove.
    #[error("{source} (the scratch file {name} may be left in {export})")]
    ScratchUnknown {
        name: String,
        export: String,
        source: Box<nfs::Error>,
    },
    /// The probe failed, and so did removing its scratch file.
    #[error("{error}; {left}")]
    AndScratchLeft {
        error: Box<ProbeError>,
        left: Box<ProbeError>,
    },
    #[error("{path}: {action}: {source}")]
    Io {
        path: PathBuf,
        action: &'static str,
        source: io::Error,
    },
}

/// One operation's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeOpResult {
    pub op: ProbeOp,
    /// The call timed (e.g. "WRITE 4 KiB FILE_SYNC", "pwrite 4 KiB + fdatasync").
    pub call: String,
    pub samples: u64,
    /// Wall time of this operation's samples, including untimed set-up
    /// calls (the write before each commit).
    pub seconds: f64,
    /// count, min/mean/max (ms), percentiles [`PROBE_PERCENTILES`], histogram.
    pub latency: LatencySummary,
}

/// `tankbench probe`'s result document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeResult {
    /// Always [`PROBE_KIND`].
    pub kind: String,
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub started_at: String,
    /// `nfs://HOST/EXPORT` or the directory.
    pub target: String,
    pub transport: Transport,
    pub interrupted: bool,
    pub operations: Vec<ProbeOpResult>,
}

impl ProbeResult {
    pub fn from_json(text: &str) -> Result<ProbeResult, ResultDocError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(ResultDocError::Json)?;
        check_kind(&value, PROBE_KIND, PROBE_SCHEMA_VERSION)?;
        serde_json::from_value(value).map_err(ResultDocError::Json)
    }

    /// One operation's figures, when it was probed.
    pub fn operation(&self, op: ProbeOp) -> Option<&ProbeOpResult> {
        self.operations.iter().find(|o| o.op == op)
    }
}

/// The calls behind the operations, one implementation per transport.
trait Backend {
    /// Do `op` on block `block` of the scratch file; the time of the part
    /// that is the operation (a commit's preceding write is not).
    fn timed(&mut self, op: ProbeOp, block: usize) -> Result<Duration, ProbeError>;
    /// Remove the scratch file.
    fn remove_scratch(&mut self) -> Result<(), ProbeError>;
}

fn timed(f: impl FnOnce() -> Result<(), ProbeError>) -> Result<Duration, ProbeError> {
    let t0 = Instant::now();
    f()?;
    Ok(t0.elapsed())
}

fn scratch_name() -> String {
    format!("tankbench-probe.{}", std::process::id())
}

fn pattern() -> Vec<u8> {
    (0..SCRATCH_BYTES / 8)
        .flat_map(|i| crate::rng::splitmix64(i as u64 ^ 0x7072_6f62).to_le_bytes())
        .collect()
}

struct NfsBackend {
    client: nfs::Client,
    file: nfs::Fh,
    name: String,
    /// The export, for messages.
    export: String,
    data: Vec<u8>,
    /// How long removing the scratch file may take.
    cleanup: Duration,
}

impl NfsBackend {
    fn open(target: &nfs::Target, spec: &ProbeSpec) -> Result<NfsBackend, ProbeError> {
        let deadline = nfs::Deadline::after(spec.work_allowance());
        let mut client = nfs::Client::mount_by(target, Some(deadline)).map_err(ProbeError::Nfs)?;
        let name = scratch_name();
        let export = target.to_string();
        let root = client.root().clone();
        // From the moment the file may exist until it is removed, only the
        // probe's own call over the network can remove it: a second stop
        // signal waits for that (every call has a deadline).
        crate::signals::second_signal_waits(true);
        let file = match client.create(&root, &name, true) {
            Ok(f) => f,
            // A refusal (the name taken, no permission) made nothing.
            Err(e) if matches!(e.call_error(), Some(nfs::CallError::Status(_))) => {
                crate::signals::second_signal_waits(false);
                return Err(ProbeError::Nfs(e));
            }
            Err(source) => {
                crate::signals::second_signal_waits(false);
                return Err(ProbeError::ScratchUnknown {
                    name,
                    export,
                    source: Box::new(source),
                });
            }
        };
        let mut b = NfsBackend {
            client,
            file,
            name,
            export,
            data: pattern(),
            cleanup: spec.cleanup_allowance(),
        };
        let data = std::mem::take(&mut b.data);
        let filled = b
            .client
            .write_all(&b.file, 0, &data, nfs::Stable::FileSync)
            .map_err(ProbeError::Nfs);
        b.data = data;
        if let Err(e) = filled {
            return Err(with_removal(e, b.remove_scratch()));
        }
        Ok(b)
    }
}

/// `error`, and that the scratch file is left when `removed` failed.
fn with_removal(error: ProbeError, removed: Result<(), ProbeError>) -> ProbeError {
    match removed {
        Ok(()) => error,
        Err(left) => ProbeError::AndScratchLeft {
            error: Box::new(error),
            left: Box::new(left),
        },
    }
}

impl Backend for NfsBackend {
    fn timed(&mut self, op: ProbeOp, block: usize) -> Result<Duration, ProbeError> {
        let range = block * PROBE_BLOCK..(block + 1) * PROBE_BLOCK;
        let at = range.start as u64;
        let c = &mut self.client;
        let f = &self.file;
        let err = ProbeError::Nfs;
        match op {
            ProbeOp::Null => timed(|| c.null().map_err(err)),
            ProbeOp::Getattr => timed(|| c.getattr(f).map(|_| ()).map_err(err)),
            ProbeOp::Read4k => {
                let mut buf = [0u8; PROBE_BLOCK];
                timed(|| c.read(f, at, &mut buf).map(|_| ()).map_err(err))
            }
            ProbeOp::StableWrite4k => timed(|| {
                c.write_all(f, at, &self.data[range], nfs::Stable::FileSync)
                    .map(|_| ())
                    .map_err(err)
            }),
            ProbeOp::UnstableWrite4k => timed(|| {
                c.write_all(f, at, &self.data[range], nfs::Stable::Unstable)
                    .map(|_| ())
                    .map_err(err)
            }),
            ProbeOp::Commit => {
                c.write_all(f, at, &self.data[range], nfs::Stable::Unstable)
                    .map_err(err)?;
                timed(|| c.commit(f).map_err(err))
            }
            ProbeOp::CommitClean => timed(|| c.commit(f).map_err(err)),
        }
    }

    /// REMOVE within the cleanup allowance; when the connection is what
    /// failed (a call past its deadline leaves it unusable), once more on a
    /// new one. A REMOVE the server refuses is not repeated.
    fn remove_scratch(&mut self) -> Result<(), ProbeError> {
        self.client
            .set_deadline(Some(nfs::Deadline::after(self.cleanup)));
        let root = self.client.root().clone();
        let first = self.client.remove(&root, &self.name);
        let result = match first {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.call_error(), Some(nfs::CallError::Status(_))) => Err(e),
            Err(_) => self
                .client
                .another()
                .and_then(|mut fresh| fresh.remove(&root, &self.name))
                .map(|_| ()),
        };
        crate::signals::second_signal_waits(false);
        result.map_err(|source| ProbeError::ScratchLeft {
            name: self.name.clone(),
            export: self.export.clone(),
            source: Box::new(source),
        })
    }
}

struct LocalBackend {
    path: PathBuf,
    file: File,
    data: Vec<u8>,
}

impl LocalBackend {
    fn open(dir: &Path) -> Result<LocalBackend, ProbeError> {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(ProbeError::NotADirectory {
                    path: dir.to_path_buf(),
                })
            }
            Err(source) => {
                return Err(ProbeError::Io {
                    path: dir.to_path_buf(),
                    action: "stat",
                    source,
                })
            }
        }
        let path = dir.join(scratch_name());
        let file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|source| ProbeError::Io {
                path: path.clone(),
                action: "create the scratch file",
                source,
            })?;
        crate::signals::register_scratch_file(&path);
        let b = LocalBackend {
            path,
            file,
            data: pattern(),
        };
        if let Err(source) = b
            .file
            .write_all_at(&b.data, 0)
            .and_then(|_| b.file.sync_all())
        {
            let _ = std::fs::remove_file(&b.path);
            crate::signals::forget_scratch_file();
            return Err(ProbeError::Io {
                path: b.path,
                action: "fill the scratch file",
                source,
            });
        }
        Ok(b)
    }

    fn io(&self, action: &'static str) -> impl FnOnce(io::Error) -> ProbeError + '_ {
        move |source| ProbeError::Io {
            path: self.path.clone(),
            action,
            source,
        }
    }
}

impl Backend for LocalBackend {
    fn timed(&mut self, op: ProbeOp, block: usize) -> Result<Duration, ProbeError> {
        let range = block * PROBE_BLOCK..(block + 1) * PROBE_BLOCK;
        let at = range.start as u64;
        let data = &self.data[range];
        let f = &self.file;
        match op {
            // A local directory has no round trip without a file system call.
            ProbeOp::Null => Ok(Duration::ZERO),
            ProbeOp::Getattr => timed(|| {
                std::fs::metadata(&self.path)
                    .map(|_| ())
                    .map_err(self.io("stat"))
            }),
            ProbeOp::Read4k => {
                let mut buf = [0u8; PROBE_BLOCK];
                timed(|| f.read_exact_at(&mut buf, at).map_err(self.io("pread")))
            }
            ProbeOp::StableWrite4k => timed(|| {
                f.write_all_at(data, at)
                    .and_then(|_| f.sync_data())
                    .map_err(self.io("pwrite + fdatasync"))
            }),
            ProbeOp::UnstableWrite4k => {
                timed(|| f.write_all_at(data, at).map_err(self.io("pwrite")))
            }
            ProbeOp::Commit => {
                f.write_all_at(data, at).map_err(self.io("pwrite"))?;
                timed(|| f.sync_data().map_err(self.io("fdatasync")))
            }
            ProbeOp::CommitClean => timed(|| f.sync_all().map_err(self.io("fsync"))),
        }
    }

    fn remove_scratch(&mut self) -> Result<(), ProbeError> {
        let removed = std::fs::remove_file(&self.path).map_err(self.io("remove the scratch file"));
        crate::signals::forget_scratch_file();
        removed
    }
}

/// Route stop signals: the first ends the probe after the current call and
/// removes the scratch file; a second removes a local scratch file and ends
/// the process at once (128 + the signal), or, on an NFS export, waits for
/// the removal the first started.
pub fn install_stop_handlers() {
    crate::signals::StopHandlers::new()
        .on_second(crate::signals::remove_scratch_file_and_exit)
        .install();
}

/// Run the probe. `progress` gets a line per operation (for stderr). The
/// scratch file is removed whether the operations succeed or not.
pub fn run(spec: &ProbeSpec, progress: &mut dyn FnMut(&str)) -> Result<ProbeResult, ProbeError> {
    spec.check()?;
    let started_at = crate::clock::utc_now_rfc3339();
    let transport = spec.target.transport();
    let mut backend: Box<dyn Backend> = match &spec.target {
        ProbeTarget::Nfs(t) => Box::new(NfsBackend::open(t, spec)?),
        ProbeTarget::Directory(d) => Box::new(LocalBackend::open(d)?),
    };
    // Once the export answered (a refusal before stays one line).
    if let ProbeTarget::Nfs(_) = spec.target {
        progress(&format!(
            "probe: at most {} s in all (10 x --time-per-op), the scratch file included",
            spec.bound().as_secs_f64()
        ));
    }
    let measured = measure_all(spec, transport, backend.as_mut(), progress);
    let removed = backend.remove_scratch();
    let operations = match measured {
        Ok(operations) => {
            removed?;
            operations
        }
        Err(e) => return Err(with_removal(e, removed)),
    };
    Ok(ProbeResult {
        kind: PROBE_KIND.into(),
        schema_version: PROBE_SCHEMA_VERSION,
        tool: ToolInfo::tankbench(),
        started_at,
        target: spec.target.to_string(),
        transport,
        interrupted: crate::signals::stop_requested(),
        operations,
    })
}

fn measure_all(
    spec: &ProbeSpec,
    transport: Transport,
    backend: &mut dyn Backend,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<ProbeOpResult>, ProbeError> {
    let blocks = SCRATCH_BYTES / PROBE_BLOCK;
    let mut out = Vec::new();
    let mut block = 0;
    for op in ProbeOp::ALL {
        let Some(call) = op.call(transport) else {
            continue;
        };
        if crate::signals::stop_requested() {
            break;
        }
        if op == ProbeOp::CommitClean {
            // Nothing dirty before the first sample either.
            backend.timed(ProbeOp::CommitClean, 0)?;
        }
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3)
            .expect("valid histogram bounds");
        let mut exact = ExactEvents {
            min_ns: u64::MAX,
            ..ExactEvents::default()
        };
        let began = Instant::now();
        while exact.count < spec.samples
            && began.elapsed() < spec.time_per_op
            && !crate::signals::stop_requested()
        {
            let d = backend.timed(op, block)?;
            block = (block + 1) % blocks;
            let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
            h.saturating_record(ns.max(1));
            exact.count += 1;
            exact.sum_ns = exact.sum_ns.saturating_add(ns);
            exact.min_ns = exact.min_ns.min(ns);
            exact.max_ns = exact.max_ns.max(ns);
        }
        if exact.count == 0 {
            exact.min_ns = 0;
        }
        let latency = summarize(&h, &PROBE_PERCENTILES).with_exact(exact);
        progress(&format!(
            "{call}: {} samples, median {:.1} µs",
            exact.count,
            latency.at(50.0).unwrap_or(0.0) * 1000.0
        ));
        out.push(ProbeOpResult {
            op,
            call: call.to_string(),
            samples: exact.count,
            seconds: began.elapsed().as_secs_f64(),
            latency,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_nfs_urls_or_directories_and_other_schemes_are_refused() {
        assert!(matches!(
            ProbeTarget::from_path(Path::new("nfs://127.0.0.1/export")),
            Ok(ProbeTarget::Nfs(_))
        ));
        assert!(matches!(
            ProbeTarget::from_path(Path::new("/srv/data")),
            Ok(ProbeTarget::Directory(_))
        ));
        let e = ProbeTarget::from_path(Path::new("smb://host/share")).unwrap_err();
        assert!(e.to_string().starts_with("smb:// is not a target"), "{e}");
        assert!(matches!(
            ProbeTarget::from_path(Path::new("nfs://host")),
            Err(ProbeError::Nfs(_))
        ));
        // Issue 37: mount(8)'s HOST:/EXPORT is the nfs:// URL.
        match ProbeTarget::from_path(Path::new("127.0.0.1:/export")) {
            Ok(ProbeTarget::Nfs(t)) => assert_eq!(t.to_string(), "nfs://127.0.0.1/export"),
            other => panic!("{other:?}"),
        }
        match ProbeTarget::from_path(Path::new("nas-1.lan:/tank/vm")) {
            Ok(ProbeTarget::Nfs(t)) => assert_eq!(t.to_string(), "nfs://nas-1.lan/tank/vm"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            ProbeTarget::from_path(Path::new("./dir:/x")),
            Ok(ProbeTarget::Directory(_))
        ));
    }

    #[test]
    fn op_names_match_the_document() {
        for op in ProbeOp::ALL {
            let json = serde_json::to_string(&op).unwrap();
            assert_eq!(json, format!("\"{}\"", op.name()));
        }
    }
}
