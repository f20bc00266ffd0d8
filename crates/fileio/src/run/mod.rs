//! One process's run of a validated workload: its files, its requests, its
//! worker threads and what they measure.

pub mod clock;
pub mod fileset;
pub mod generator;
pub mod histograms;
pub mod pattern;
pub mod runner;
