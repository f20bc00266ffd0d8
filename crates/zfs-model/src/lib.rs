//! ZFS layout model for `tankbench plan`: for a set of disks, every sensible
//! pool layout with the capacity ZFS will report (to the byte), the failures it
//! survives and its risk of losing data, and analytic performance estimates
//! with their ranges and assumptions.
//!
//! Formulas follow the OpenZFS sources they name (file and function, e.g.
//! `vdev_raidz_psize_to_asize()` in `module/zfs/vdev_raidz.c`); device figures
//! cite vendor data sheets and published measurements; the byte-exact test
//! vectors were checked against zfs-fuse 0.7.0 pools. `docs/planning.md`
//! explains every figure for users.

pub mod capacity;
pub mod config_file;
pub mod dataset;
pub mod disk;
pub mod diskmodel;
pub mod error;
pub mod estimate;
pub mod explain;
mod extents;
pub mod layout;
pub mod network;
pub mod perf;
pub mod plan;
pub mod reliability;
pub mod rules;
pub mod units;
pub mod workload;

pub use error::{ModelError, Result};
