//! fileio: a sysbench-compatible file I/O benchmark.
//!
//! Data flows one way: command-line words -> [`options::Options`] (typed, validated
//! once) -> [`workload::Workload`] -> runner with an engine -> statistics ->
//! [`result::RunResult`] -> reports (sysbench text, JSON).

pub mod result;
