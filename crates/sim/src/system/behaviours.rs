//! The server and client behaviours a system chooses between that are not
//! presets of their own: the dataset's `sync` and `logbias`, the ZIL's
//! write rule and batching (which `server.platform` sets by default), and
//! how a CPU cost varies per request.

use fileio::rng::SeededStream;
use serde::{Deserialize, Serialize};

use crate::components::NanosDraws;
use crate::queue::Nanos;

pub use zfs_model::dataset::SyncProperty;

/// The dataset's `logbias` property (zfsprops(7)): whether a sync write's
/// data goes into the log (`latency`) or is written to its place in the
/// pool with only a pointer in the log (`throughput`: WR_INDIRECT records,
/// `zfs_log_write` in zfs_log.c; [`LogWriteRule`] says when each code base
/// does which).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Logbias {
    #[default]
    Latency,
    Throughput,
}

impl Logbias {
    pub const ACCEPTED: &'static str = "latency, throughput";

    /// The value as the system file spells it (`ACCEPTED`).
    pub fn parse(word: &str) -> Option<Logbias> {
        match word.trim().to_ascii_lowercase().as_str() {
            "latency" => Some(Logbias::Latency),
            "throughput" => Some(Logbias::Throughput),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Logbias::Latency => "latency",
            Logbias::Throughput => "throughput",
        }
    }
}

/// How `zfs_log_write` chooses a write record's state and where
/// `zio_alloc_zil` puts a log block; OpenZFS 7578 ("Fix/improve some
/// aspects of ZIL writing", openzfs/openzfs PR #219; ZoL 0.7.0, PR #6191)
/// changed both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogWriteRule {
    /// Before 7578 (OpenSolaris through ZoL 0.6.5): a write is WR_INDIRECT
    /// when `resid > immediate_write_sz && !slogging && resid <= z_blksz`,
    /// with `immediate_write_sz` 0 under `logbias=throughput` and
    /// `zfs_immediate_write_sz` (32 KiB) under latency, `slogging` = a log
    /// device and latency; a log block goes to the log device only under
    /// latency (`zio_alloc_zil(..., use_slog)` with `USE_SLOG`, whose
    /// `zil_slog_limit` bypass of a busy log device is not modelled).
    Before7578,
    /// Since 7578: `logbias=throughput` makes every write WR_INDIRECT, and
    /// latency on a pool without a log device does so from
    /// `zfs_immediate_write_sz` up (`resid >=`), split at block boundaries;
    /// `zio_alloc_zil` tries the log class first whatever the logbias, so a
    /// log device still takes the (pointer-only) log blocks.
    #[default]
    Since7578,
}

/// How concurrent `zil_commit` callers share log writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ZilBatching {
    /// OpenZFS since illumos 8585 (Dec 2017): a commit issues a log block
    /// at once with every record queued so far, even while earlier blocks are
    /// in flight; blocks complete in order.
    #[default]
    Pipelined,
    /// Before 8585: one batch in flight; committers arriving meanwhile join
    /// the next batch, which starts when the current one completes.
    OneInFlight,
}

/// How the server's CPU time per request varies around `server.cpu_us`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CpuService {
    /// Exponentially distributed: the usual queueing-model assumption for a
    /// service made of many steps of varying length (RPC decode, ZPL, DMU,
    /// locks, interrupts), as in M/M/c.
    #[default]
    Exponential,
    /// Every request takes exactly `server.cpu_us` (for closed forms).
    Fixed,
}

/// A CPU cost of mean `mean` as `service` has it vary.
pub(crate) fn service_time(jitter: &mut SeededStream, service: CpuService, mean: Nanos) -> Nanos {
    match service {
        CpuService::Exponential => jitter.exponential_ns(mean),
        CpuService::Fixed => mean,
    }
}
