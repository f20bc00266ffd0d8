//! The reference user's 12 cells (3 layouts x log device or not x 2x1G or
//! 2x10G LACP), ESXi NFS client, `sysbench fileio` rndrw 4 KiB, 4 threads,
//! fsync after every write, 4 GiB, 240 s, from the shipped matrix
//! `examples/systems/reference-matrix.toml`: the table, and how long the
//! predictions took on one thread and on every core.
//! `cargo run --release -p sim --example reference`.

use fileio::options::RunSpec;
use sim::limits::DEFAULT_MAX_CELLS;
use sim::matrix::{results_table, run_cells, MatrixSpec};
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/systems");
    let text = std::fs::read_to_string(dir.join("reference-matrix.toml")).expect("the matrix");
    let m = MatrixSpec::from_toml(&text, &dir, DEFAULT_MAX_CELLS).unwrap_or_else(|e| panic!("{e}"));
    let spec = RunSpec::from_words(&m.workload).unwrap_or_else(|e| panic!("{e}"));
    let cells = m.cells().unwrap_or_else(|e| panic!("{e}"));
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    for parallel in [1, cores] {
        let started = std::time::Instant::now();
        let results = run_cells(&spec, &cells, parallel).unwrap_or_else(|e| panic!("{e}"));
        let s = started.elapsed().as_secs_f64();
        if parallel == 1 {
            print!(
                "{}",
                results_table(&m.workload_text(), &cells, &results).to_terminal()
            );
        }
        let requests: u64 = results
            .iter()
            .map(|r| r.counts.reads + r.counts.writes + r.counts.fsyncs)
            .sum();
        println!(
            "{} cells, {requests} simulated requests in {s:.2} s on {parallel} thread(s) ({:.0} per second)",
            cells.len(),
            requests as f64 / s
        );
    }
}
