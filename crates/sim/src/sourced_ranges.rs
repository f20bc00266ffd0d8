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
