//! fileio: a sysbench-compatible file I/O benchmark.
//!
//! Data flows one way: command-line words ([`args`]) -> typed, validated options
//! ([`options::Workload`]) -> [`runner`] with an [`engine`] and the request
//! [`generator`] -> [`stats`] -> [`result::RunResult`] -> [`report`] (sysbench text,
//! JSON). [`cli`] is the sysbench-compatible front end that ties them together.
//! Several processes form one job through a [`coordinator`] (MPI with the `mpi`
//! feature); [`job`] holds their barrier, stonewall and merged report.

pub mod args;
pub mod cli;
pub mod clock;
pub mod console;
pub mod coordinator;
pub mod engine;
pub mod environment;
pub mod fileset;
pub mod generator;
pub mod job;
#[cfg(feature = "mpi")]
pub mod mpi_coord;
pub mod options;
pub mod pattern;
pub mod quick;
pub mod report;
pub mod result;
pub mod rng;
pub mod runner;
pub mod stats;
pub mod warnings;
