//! A dataset's properties as ZFS spells them (zfsprops(7)), one type each,
//! shared by the lab (which sets them on a real pool), the simulator (which
//! models them) and the facts a run records.

use serde::{Deserialize, Serialize};

/// The dataset's `sync` property (zfsprops(7)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SyncProperty {
    /// Synchronous requests (fsync, O_SYNC, NFS stable writes) commit the
    /// ZIL; others are buffered.
    #[default]
    Standard,
    /// Every write commits the ZIL before it returns.
    Always,
    /// Nothing commits the ZIL: synchronous requests return at once.
    Disabled,
}

impl SyncProperty {
    pub const ALL: [SyncProperty; 3] = [
        SyncProperty::Standard,
        SyncProperty::Always,
        SyncProperty::Disabled,
    ];

    pub const ACCEPTED: &'static str = "standard, always, disabled";

    /// The value as `zfs get sync` prints it and `zfs set` takes it.
    pub fn name(self) -> &'static str {
        match self {
            SyncProperty::Standard => "standard",
            SyncProperty::Always => "always",
            SyncProperty::Disabled => "disabled",
        }
    }

    /// The property of a value as ZFS spells it (exactly: ZFS's values are
    /// lower case).
    pub fn parse(value: &str) -> Option<SyncProperty> {
        SyncProperty::ALL.into_iter().find(|s| s.name() == value)
    }
}

impl std::fmt::Display for SyncProperty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_others_are_refused() {
        for s in SyncProperty::ALL {
            assert_eq!(SyncProperty::parse(s.name()), Some(s));
            assert!(SyncProperty::ACCEPTED.contains(s.name()));
        }
        assert_eq!(SyncProperty::parse("sometimes"), None);
        assert_eq!(SyncProperty::parse("Always"), None);
    }
}
