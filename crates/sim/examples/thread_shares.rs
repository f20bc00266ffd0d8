//! How a prediction shares its events among the threads: each thread's
//! reads, writes and fsyncs, the spread of their event counts, the guest
//! journal's sharing (from the utilisation note) and the order the threads
//! issued their first requests. Written to find why four identical threads
//! got unequal shares (issue 21): first one thread doing every read (a
//! write counted before its fsync), then the threads splitting into groups
//! at the ZIL (guest fsyncs that did not share the journal's commits).
//!
//! `cargo run --release -p sim --example thread_shares -- [SYSTEM.toml]
//! [layout=L] [log=DEVICE|none] [-- FILEIO OPTIONS]`
//!
//! Defaults: `examples/systems/reference-nas.toml` and the reference
//! command (rndrw 4 KiB, 4 threads, `--file-fsync-all`, 4 GiB) for 60 s.

use std::path::PathBuf;

use fileio::options::RunSpec;
use fileio::run::generator::Op;
use sim::system::DeviceSpec;
use sim::{Simulation, SystemModel};

const REFERENCE_COMMAND: [&str; 7] = [
    "--file-total-size=4G",
    "--file-test-mode=rndrw",
    "--file-block-size=4K",
    "--threads=4",
    "--time=60",
    "--file-fsync-all",
    "--rand-seed=1",
];

/// Requests of the issue order shown.
const ORDER_SHOWN: usize = 80;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (ours, fileio) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], Some(&args[i + 1..])),
        None => (&args[..], None),
    };
    let mut path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/systems/reference-nas.toml");
    let mut overrides = Vec::new();
    for a in ours {
        match a.split_once('=') {
            Some(kv) => overrides.push(kv),
            None => path = PathBuf::from(a),
        }
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut model = SystemModel::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    for (key, value) in overrides {
        match key {
            "layout" => model.pool.layout = value.into(),
            "log" => model.log = Some(DeviceSpec::Name(value.to_string())),
            other => panic!("unknown override '{other}' (layout=, log=)"),
        }
    }
    let words: Vec<String> = match fileio {
        Some(w) => w.to_vec(),
        None => REFERENCE_COMMAND.iter().map(|w| (*w).to_string()).collect(),
    };
    let spec = RunSpec::from_words(&words).unwrap_or_else(|e| panic!("{e}"));

    // The run once for its event count, then again tracing every request
    // it issues (the same seed gives the same run).
    let first = Simulation::new(&spec, &model)
        .run()
        .map(|s| s.result)
        .unwrap_or_else(|e| panic!("{e}"));
    let issued = usize::try_from(first.counts.events).expect("a count that fits memory");
    let (r, trace) = Simulation::new(&spec, &model)
        .trace(issued)
        .run()
        .map(|s| (s.result, s.trace))
        .unwrap_or_else(|e| panic!("{e}"));

    let mut per = vec![[0u64; 3]; r.threads.len()];
    for i in &trace {
        let k = match i.request.op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Fsync => 2,
        };
        per[i.thread][k] += 1;
    }
    println!("thread  events   reads  writes  fsync events");
    for (t, (summary, ops)) in r.threads.iter().zip(&per).enumerate() {
        println!(
            "{t:>6}  {:>6}  {:>6}  {:>6}  {:>12}",
            summary.events, ops[0], ops[1], ops[2]
        );
    }
    let events: Vec<f64> = r.threads.iter().map(|t| t.events as f64).collect();
    let n = events.len() as f64;
    let mean = events.iter().sum::<f64>() / n;
    let sd = (events.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / n).sqrt();
    let (lo, hi) = events
        .iter()
        .fold((f64::MAX, 0.0_f64), |(lo, hi), &e| (lo.min(e), hi.max(e)));
    println!(
        "spread: standard deviation {:.2} % of the mean, most over fewest {:.2} %",
        100.0 * sd / mean,
        100.0 * (hi / lo - 1.0)
    );
    for w in r
        .warnings
        .iter()
        .filter(|w| sim::notes::SimNote::of(w) == Some(sim::notes::SimNote::Utilisation))
    {
        println!("{}", w.message);
    }
    let order: Vec<String> = trace
        .iter()
        .take(ORDER_SHOWN)
        .map(|i| {
            let op = match i.request.op {
                Op::Read => 'r',
                Op::Write => 'w',
                Op::Fsync => 'f',
            };
            format!("{}{op}", i.thread)
        })
        .collect();
    println!("first requests (thread, op): {}", order.join(" "));
}
