//! What the pool will be used for. The workload decides which block size the
//! capacity and IOPS figures use and how the criteria are weighted when the
//! layouts are ranked.

use serde::Serialize;

use crate::error::{ModelError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// 4 KiB random reads and writes, every write followed by fsync, a few
    /// threads: the reference user's `sysbench fileio rndrw --file-fsync-all`
    /// on an ESXi NFS datastore. Files, so blocks are records.
    Sync4k,
    /// Streaming reads and writes of whole records (backups, media).
    Sequential,
    /// VM disks or databases on zvols: random I/O at volblocksize.
    SmallBlock,
}

/// Weight of each ranking criterion (0 = ignored).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Weights {
    pub usable: f64,
    pub reliability: f64,
    pub random_read: f64,
    pub random_write: f64,
    pub sequential: f64,
    pub sync_write: f64,
}

impl Workload {
    /// Every workload, by [`Workload::name`] the one list `--workload`
    /// offers; [`Workload::ACCEPTED`] is the same names for a refusal.
    pub const ALL: [Workload; 3] = [Workload::Sync4k, Workload::Sequential, Workload::SmallBlock];
    pub const ACCEPTED: &'static str = "sync-4k, sequential, vm";

    pub fn parse(input: &str) -> Result<Workload> {
        match input.trim().to_ascii_lowercase().as_str() {
            "sync-4k" | "sync4k" | "sysbench" => Ok(Workload::Sync4k),
            "sequential" | "seq" => Ok(Workload::Sequential),
            "vm" | "database" | "db" | "small-block" => Ok(Workload::SmallBlock),
            _ => Err(ModelError::UnknownChoice {
                what: "workload",
                input: input.to_string(),
                accepted: Workload::ACCEPTED.into(),
            }),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Workload::Sync4k => "sync-4k",
            Workload::Sequential => "sequential",
            Workload::SmallBlock => "vm",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Workload::Sync4k => "4 KiB random read/write with a commit after every write (sysbench fileio rndrw --file-fsync-all), files with the given recordsize",
            Workload::Sequential => "streaming reads and writes of whole records",
            Workload::SmallBlock => "VM disks / databases on zvols: random I/O at volblocksize",
        }
    }

    /// Block size the disks see: a random 4 KiB access to a file reads (and
    /// eventually rewrites) its whole record; a zvol block is volblocksize.
    pub fn disk_block(self, recordsize: u64, volblocksize: u64) -> u64 {
        match self {
            Workload::Sync4k | Workload::Sequential => recordsize,
            Workload::SmallBlock => volblocksize,
        }
    }

    /// Why these weights: a sync-heavy small-I/O workload lives on read IOPS
    /// (ARC misses) and commit latency; streaming lives on bandwidth and space;
    /// VMs need IOPS and pay the small-block space penalty.
    pub fn weights(self) -> Weights {
        match self {
            Workload::Sync4k => Weights {
                usable: 1.0,
                reliability: 1.0,
                random_read: 2.0,
                random_write: 1.0,
                sequential: 0.0,
                sync_write: 2.0,
            },
            Workload::Sequential => Weights {
                usable: 2.0,
                reliability: 1.0,
                random_read: 0.0,
                random_write: 0.0,
                sequential: 2.0,
                sync_write: 0.0,
            },
            Workload::SmallBlock => Weights {
                usable: 2.0,
                reliability: 1.0,
                random_read: 2.0,
                random_write: 2.0,
                sequential: 0.0,
                sync_write: 1.0,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accepted_names_are_those_of_every_workload() {
        let names: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
        assert_eq!(names.join(", "), Workload::ACCEPTED);
        for w in Workload::ALL {
            assert_eq!(Workload::parse(w.name()).unwrap(), w);
        }
    }
}
