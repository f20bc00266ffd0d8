//! The lab's experiments: what is done with a lab once [`crate::lab::Lab`]
//! has built it.
//!
//! - [`run`]: one fileio workload (prepare, run, cleanup) in a lab, with
//!   [`server`]'s account of what the server's ARC and disks did meanwhile;
//! - [`workload`]: the fileio options of a workload, checked and read before
//!   anything is built;
//! - [`matrix`]: a run for every combination of a matrix file, one lab each;
//! - [`crash`]: a power cut of a lab's server and the pool brought back;
//! - [`durability`]: the durability matrix (writer, recorder, crashes,
//!   verify) over such crashes;
//! - [`predict`]: a matrix's cells as simulator systems, beside what they
//!   measured;
//! - [`pairs`]: pairs of measured cells that differ in one thing, the
//!   second predicted from the first's measurement.
//!
//! What may call what: an experiment uses [`crate::lab`], [`crate::spec`],
//! [`crate::state`] and the parts ([`crate::parts`]), and other experiments;
//! nothing outside this folder calls an experiment (the `tankbench` binary
//! does). A new thing to do with a lab is a new experiment.

pub mod crash;
pub mod durability;
pub mod matrix;
pub mod pairs;
pub mod predict;
pub mod run;
pub mod server;
pub mod workload;
