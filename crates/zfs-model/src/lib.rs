//! ZFS layout model for `tankbench plan`: for a set of disks, every sensible
//! pool layout with the capacity ZFS will report (to the byte), the failures it
//! survives and its risk of losing data, and analytic performance estimates
//! with their ranges and assumptions.
//!
//! Facts, formulas and test vectors come from the project's ZFS model
//! specification (`spec/zfs-model.md`); section numbers in comments (§1.4 …)
//! point there. `docs/planning.md` explains every figure for users.

pub mod capacity;
pub mod disk;
pub mod error;
pub mod estimate;
pub mod explain;
pub mod layout;
pub mod network;
pub mod perf;
pub mod plan;
pub mod present;
pub mod reliability;
pub mod rules;
pub mod units;
pub mod workload;

pub use error::{ModelError, Result};
