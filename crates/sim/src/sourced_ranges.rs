//! Parameter ranges taken from sources, written once: a default is a
//! range's `typical`, and an interval samples from `low` to `high`. Kept
//! apart from [`crate::params`] because the system's defaults
//! ([`crate::system`]) read them too, and [`crate::params`] reads the system.

/// A parameter's documented range from its sources: the default is
/// `typical`, and an interval samples `low` to `high`, so the three are
/// written once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SourcedRange {
    pub low: f64,
    pub typical: f64,
    pub high: f64,
}

impl SourcedRange {
    /// `low` and `high` as multiples of `typical`.
    pub fn relative(self) -> (f64, f64) {
        (self.low / self.typical, self.high / self.typical)
    }
}

/// `server.cpu_us`, µs, as sourced for local access (the default; over
/// NFS, iSCSI or SMB the interval samples a wider range around it, since
/// no source gives those servers' figure).
pub const SERVER_CPU_US_LOCAL: SourcedRange = SourcedRange {
    low: 6.9,
    typical: 11.0,
    high: 19.0,
};

/// `server.cpu_us_per_mib`, µs.
pub const CPU_US_PER_MIB: SourcedRange = SourcedRange {
    low: 700.0,
    typical: 780.0,
    high: 1430.0,
};

/// `server.cpu_contention`, a share per other busy core.
pub const CPU_CONTENTION: SourcedRange = SourcedRange {
    low: 0.08,
    typical: 0.17,
    high: 0.26,
};

/// `server.commit_cpu_us`, µs: the ZFS software of one `zil_commit` with
/// work to do, beyond the request's own CPU and the device's write. The two
/// published measurements of it are its ends, and the default is their
/// geometric middle (neither box is more typical than the other):
/// - low 49: a 4 KiB O_SYNC write at one thread takes 56.6 µs on ZFS with a
///   persistent-memory log device (PS-101, Linux 5.9, Xeon Silver 4215 at
///   2.5 GHz), less 4.7 µs for the whole write with sync=disabled (PS-101's
///   control) and 2.9 µs for the raw device (PS-103);
/// - high 107: the same Optane M10 and fio command as a ZFS pool and as a
///   raw device (PS-005 less PS-043, TrueNAS SCALE 2023): 107-117 µs a
///   write + fdatasync, less the fsync request's own `server.cpu_us` (11).
pub const COMMIT_CPU_US: SourcedRange = SourcedRange {
    low: 49.0,
    typical: 72.0,
    high: 107.0,
};
