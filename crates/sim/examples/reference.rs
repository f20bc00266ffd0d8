//! The reference user's 12 cells (3 layouts x log device or not x 2x1G or
//! 2x10G LACP), ESXi NFS client, `sysbench fileio` rndrw 4 KiB, 4 threads,
//! fsync after every write, 4 GiB, 240 s: read and write MiB/s, and how long
//! the predictions took. `cargo run --release -p sim --example reference`.

use fileio::options::{check_command_line, Action, CommandLine};
use sim::{simulate, SystemModel};

fn main() {
    let words = [
        "fileio",
        "--file-total-size=4G",
        "--file-test-mode=rndrw",
        "--time=240",
        "--events=0",
        "--file-block-size=4K",
        "--threads=4",
        "--file-fsync-all",
        "--rand-seed=1",
        "run",
    ];
    let spec = match check_command_line(&words) {
        Ok(CommandLine::Command(s)) => match s.action {
            Action::Run(spec) => spec,
            _ => unreachable!("the words end in run"),
        },
        other => panic!("{other:?}"),
    };
    let started = std::time::Instant::now();
    let mut requests = 0u64;
    println!(
        "{:<12} {:<8} {:<10} {:>10} {:>10} {:>12}",
        "layout", "slog", "link", "read MiB/s", "write MiB/s", "event ms"
    );
    for layout in ["1xraidz3-24", "2xraidz2-12", "3xraidz2-8"] {
        for log in ["none", "ssd-sata"] {
            for link in ["2x1G", "2x10G"] {
                let text = format!(
                    "name = \"reference\"\nlog = \"{log}\"\n[client]\nprotocol = \"esxi-nfs\"\n[link]\nlink = \"{link}\"\n[server]\nram = \"32G\"\n[pool]\nlayout = \"{layout}\"\ndisk = \"hdd-7200\"\ndisk_size = \"8TB\"\n"
                );
                let system = SystemModel::from_toml(&text).expect("valid system");
                let r = simulate(&spec, &system).expect("prediction");
                requests += r.counts.reads + r.counts.writes + r.counts.fsyncs;
                println!(
                    "{layout:<12} {log:<8} {link:<10} {:>10.2} {:>10.2} {:>12.3}",
                    r.rates.read_mib_per_s,
                    r.rates.written_mib_per_s,
                    r.latency[&fileio::result::LatencyKey::Event].mean_ms
                );
            }
        }
    }
    let s = started.elapsed().as_secs_f64();
    println!(
        "{requests} simulated requests in {s:.2} s ({:.0} per second)",
        requests as f64 / s
    );
}
