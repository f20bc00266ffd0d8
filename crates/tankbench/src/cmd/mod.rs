//! Subcommand dispatch. Each subcommand lives in its own module and receives the
//! arguments after its name; it returns the process exit code.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

pub mod calibrate;
pub mod durability;
pub mod fileio;
pub mod lab;
mod options;
pub mod plan;
pub mod probe;
pub mod report;
pub mod simulate;
pub mod simulate_matrix;
pub mod slog;

/// Route the command line to a subcommand.
///
/// A binary invoked as `sysbench` (copy or symlink) behaves as `sysbench`, and any
/// command line that selects the fileio test the sysbench way (`fileio` as the
/// first positional, or the legacy `--test=fileio`) goes to the sysbench-compatible
/// front end.
///
/// Arguments arrive as the operating system gave them: file names are bytes and
/// need not be UTF-8, so each subcommand decides which words must be text.
pub fn dispatch(args: Vec<OsString>) -> anyhow::Result<i32> {
    let argv0 = args.first().cloned().unwrap_or_default();
    let rest: Vec<OsString> = args.into_iter().skip(1).collect();
    let invoked_as = std::path::Path::new(&argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if invoked_as == "sysbench" {
        return fileio::sysbench_main(rest);
    }
    let starts_with = |a: &OsString, prefix: &str| a.as_bytes().starts_with(prefix.as_bytes());
    // A word that is not UTF-8 is never a subcommand name; it can still be a
    // file name further on.
    let first_positional = rest
        .iter()
        .find(|a| !starts_with(a, "--"))
        .map(|a| a.to_string_lossy().into_owned());
    match first_positional.as_deref() {
        Some("fileio") => fileio::sysbench_main(rest),
        Some("quick") => fileio::quick_main(strip_first(&rest, "quick")),
        Some("plan") => plan::plan_main(strip_first(&rest, "plan")),
        Some("lab") => lab::lab_main(strip_first(&rest, "lab")),
        Some("durability") => durability::durability_main(strip_first(&rest, "durability")),
        Some("simulate") => simulate::simulate_main(strip_first(&rest, "simulate")),
        Some("slog") => slog::slog_main(strip_first(&rest, "slog")),
        Some("probe") => probe::probe_main(strip_first(&rest, "probe")),
        Some("report") => report::report_main(strip_first(&rest, "report")),
        Some("compare") => report::compare_main(strip_first(&rest, "compare")),
        Some("results") => report::results_main(strip_first(&rest, "results")),
        Some("chart") => report::chart_main(strip_first(&rest, "chart")),
        _ if rest
            .iter()
            .any(|a| starts_with(a, "--test=") || starts_with(a, "--test_")) =>
        {
            fileio::sysbench_main(rest)
        }
        Some("help") | None if rest.iter().all(|a| a != "--version") => {
            print!("{}", USAGE);
            Ok(if first_positional.is_none() && rest.is_empty() {
                1
            } else {
                0
            })
        }
        None => {
            println!("tankbench {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        Some(other) => {
            anyhow::bail!(
                "unknown command '{other}'; accepted: fileio, quick, plan, lab, simulate, durability, slog, probe, results, compare, report, chart, help"
            )
        }
    }
}

/// The arguments with the first occurrence of the subcommand word removed.
fn strip_first(args: &[OsString], word: &str) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut removed = false;
    for a in args {
        if !removed && a.as_bytes() == word.as_bytes() {
            removed = true;
            continue;
        }
        out.push(a.clone());
    }
    out
}

const USAGE: &str = "\
tankbench: measure, plan, predict and compare ZFS / NAS storage

Usage:
  tankbench quick [DIR]                 one-command benchmark: prepare, run, cleanup
  tankbench fileio [options] COMMAND    drop-in for `sysbench fileio` (prepare|run|cleanup|help)
  tankbench --test=fileio [options] COMMAND   legacy sysbench 0.4/0.5 syntax
  tankbench plan --disks 24x8TB ...     every ZFS layout for a set of disks, ranked
  tankbench lab up|run|status|down|matrix   a storage lab in software (root)
  tankbench simulate --system F.toml -- [fileio options] run   predict a run on a system
  tankbench simulate calibrate [--system F.toml] RESULTS...   fit a system to measured runs
  tankbench durability write|record|verify   do acknowledged writes survive a crash?
  tankbench slog DIR|DEVICE            log-device test: sync writes 512 B..1 MiB (diskinfo -wS)
  tankbench probe nfs://HOST/EXPORT|DIR   round trips of NULL, GETATTR, READ, WRITE, COMMIT
  tankbench results [DIR]               stored results
  tankbench results import FILE...      fio JSON / sysbench fileio reports into the store
  tankbench compare A B                 compare runs with significance
  tankbench report DIR -o report.html   tables and charts of many runs
  tankbench chart KIND DIR -o out.svg   one chart (throughput, latency, timeline)
  tankbench help                        this text

A copy or symlink of the binary named `sysbench` behaves as `sysbench`.
";

/// A clap refusal as the one line tankbench prints: clap's message without
/// its `error: ` label, usage block and help hint (the command's own
/// `--help` has those).
pub(crate) fn clap_error_line(e: &clap::Error) -> String {
    e.render()
        .to_string()
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join(" ")
}
