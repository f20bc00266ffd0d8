//! Running `tankbench fileio` workloads in a lab: prepare, run, cleanup, as a
//! subprocess in the client namespace (or on the server for local access), in
//! the lab's work directory. The result is the fileio `RunResult` with the lab's
//! labels added.

use crate::lab::Lab;
use crate::sys;
use crate::LabError;
use fileio::result::{LatencyKey, RunResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The figures a lab table shows, from a `RunResult` (or, for a fileio binary
/// without JSON output, from the sysbench text report).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub fsyncs_per_s: f64,
    pub read_mib_per_s: f64,
    pub written_mib_per_s: f64,
    pub latency_avg_ms: f64,
    pub latency_p95_ms: Option<f64>,
    pub total_time_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    pub labels: BTreeMap<String, String>,
    pub summary: Summary,
    /// The full result when the fileio binary printed JSON.
    pub result: Option<RunResult>,
}

/// Find the tankbench binary: `TANKBENCH_BIN`, else next to the running
/// executable or in target/{release,debug} of the workspace.
pub fn find_tankbench() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TANKBENCH_BIN") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    if exe.file_name().is_some_and(|n| n == "tankbench") {
        return Some(exe);
    }
    // Test binaries live in target/<profile>/deps/.
    let mut dir = exe.parent();
    while let Some(d) = dir {
        for profile in ["release", "debug"] {
            let c = d.join(profile).join("tankbench");
            if c.is_file() {
                return Some(c);
            }
        }
        let c = d.join("tankbench");
        if c.is_file() {
            return Some(c);
        }
        dir = d.parent();
    }
    None
}

pub fn human_bytes(b: u64) -> String {
    const UNITS: [(&str, f64); 4] = [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)];
    for (u, v) in UNITS {
        if b as f64 >= v {
            let x = b as f64 / v;
            return if (x - x.round()).abs() < 0.05 {
                format!("{:.0}{u}", x)
            } else {
                format!("{x:.1}{u}")
            };
        }
    }
    format!("{b}B")
}

fn fileio_command(
    tankbench: &Path,
    workdir: &Path,
    netns: Option<&str>,
    args: &[String],
    verb: &str,
) -> Result<Command, LabError> {
    let mut c = Command::new(tankbench);
    c.arg("fileio").args(args).arg(verb).current_dir(workdir);
    if let Some(ns) = netns {
        sys::in_netns(&mut c, ns)?;
    }
    Ok(c)
}

fn run_step(mut c: Command, capture: bool) -> Result<String, LabError> {
    c.stdin(Stdio::null());
    if !capture {
        c.stdout(Stdio::null());
    }
    c.stderr(Stdio::piped());
    if capture {
        c.stdout(Stdio::piped());
    }
    let out = c.output().map_err(|e| LabError::Spawn {
        command: sys::describe(&c),
        source: e,
    })?;
    if !out.status.success() {
        return Err(LabError::Command {
            command: sys::describe(&c),
            status: out.status.code().unwrap_or(-1),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Options that choose the output format are the lab's business.
fn strip_format(args: &[String]) -> Vec<String> {
    args.iter()
        .filter(|a| !a.starts_with("--format=") && !a.starts_with("--json="))
        .cloned()
        .collect()
}

/// Check the fileio options of a workload with fileio's own parser, as the
/// three commands [`run_workload`] will give them, before anything is built:
/// a typo must cost nothing (building a lab takes a minute and root).
pub fn check_workload(args: &[String]) -> Result<(), LabError> {
    let args = strip_format(args);
    if let Some(verb) = args
        .iter()
        .find(|a| matches!(a.as_str(), "prepare" | "run" | "cleanup" | "help"))
    {
        return Err(LabError::Spec(format!(
            "fileio options: '{verb}': give options only; the lab runs prepare, run and cleanup itself"
        )));
    }
    for (verb, extra) in [
        ("prepare", None),
        ("run", Some("--format=json")),
        ("cleanup", None),
    ] {
        let mut words = vec!["fileio".to_string()];
        words.extend(args.iter().cloned());
        words.extend(extra.map(str::to_string));
        words.push(verb.to_string());
        fileio::sysbench::cli::check_words(&words)
            .map_err(|e| LabError::Spec(format!("fileio options: {e}")))?;
    }
    Ok(())
}

/// Run prepare, run and cleanup of a fileio workload in the lab. Cleanup runs
/// even when the run fails or is interrupted.
pub fn run_workload(lab: &Lab, tankbench: &Path, args: &[String]) -> Result<Outcome, LabError> {
    let info = lab
        .info()
        .ok_or_else(|| LabError::Other(format!("lab {} is not completely built", lab.state.id)))?;
    let netns = info.client_netns.as_deref();
    let args = strip_format(args);
    let labels = lab.state.spec.labels();
    run_step(
        fileio_command(tankbench, &info.workdir, netns, &args, "prepare")?,
        false,
    )?;
    let mut run_args = args.clone();
    run_args.push("--format=json".into());
    let ran = sys::check_interrupted().and_then(|_| {
        run_step(
            fileio_command(tankbench, &info.workdir, netns, &run_args, "run")?,
            true,
        )
    });
    // Cleanup regardless of how the run went: the test files are ours.
    let cleaned = run_step(
        fileio_command(tankbench, &info.workdir, netns, &args, "cleanup")?,
        false,
    );
    let stdout = ran?;
    cleaned?;
    let (summary, result) = parse_output(&stdout)?;
    let result = result.map(|mut r| {
        r.labels.extend(labels.clone());
        r
    });
    Ok(Outcome {
        labels,
        summary,
        result,
    })
}

/// Parse the fileio output: a JSON `RunResult`, or the sysbench text report.
pub fn parse_output(stdout: &str) -> Result<(Summary, Option<RunResult>), LabError> {
    if let Ok(r) = serde_json::from_str::<RunResult>(stdout.trim()) {
        let lat = r.latency.get(&LatencyKey::Event);
        let summary = Summary {
            reads_per_s: r.rates.reads_per_s,
            writes_per_s: r.rates.writes_per_s,
            fsyncs_per_s: r.rates.fsyncs_per_s,
            read_mib_per_s: r.rates.read_mib_per_s,
            written_mib_per_s: r.rates.written_mib_per_s,
            latency_avg_ms: lat.map(|l| l.mean_ms).unwrap_or(0.0),
            latency_p95_ms: lat.and_then(|l| l.at(95.0)),
            total_time_s: r.total_time_s,
        };
        return Ok((summary, Some(r)));
    }
    parse_sysbench_text(stdout)
        .map(|s| (s, None))
        .ok_or_else(|| {
            LabError::Other(format!(
                "fileio output is neither a JSON RunResult nor a sysbench report: {}",
                first_line(stdout)
            ))
        })
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("(empty)")
        .chars()
        .take(200)
        .collect()
}

/// The sysbench 1.0 fileio text report: `    reads/s:  N`, `    read, MiB/s:  N`,
/// `         avg:  N`, `         95th percentile:  N`, `    total time:  Ns`.
pub fn parse_sysbench_text(text: &str) -> Option<Summary> {
    let mut s = Summary::default();
    let mut found = false;
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let k = k.trim();
        let num = || v.trim().trim_end_matches('s').trim().parse::<f64>().ok();
        match k {
            "reads/s" => {
                s.reads_per_s = num()?;
                found = true;
            }
            "writes/s" => s.writes_per_s = num()?,
            "fsyncs/s" => s.fsyncs_per_s = num()?,
            "read, MiB/s" => s.read_mib_per_s = num()?,
            "written, MiB/s" => s.written_mib_per_s = num()?,
            "avg" => s.latency_avg_ms = num()?,
            "total time" => s.total_time_s = num()?,
            k if k.ends_with("th percentile") => s.latency_p95_ms = num(),
            _ => {}
        }
    }
    found.then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sysbench_text() {
        let text = "File operations:\n    reads/s:                      120.50\n    writes/s:                     80.33\n    fsyncs/s:                     80.40\n\nThroughput:\n    read, MiB/s:                  0.47\n    written, MiB/s:               0.31\n\nGeneral statistics:\n    total time:                          10.0123s\n    total number of events:              2010\n\nLatency (ms):\n         min:                                    0.01\n         avg:                                   19.90\n         max:                                  100.00\n         95th percentile:                       44.98\n";
        let s = parse_sysbench_text(text).unwrap();
        assert_eq!(s.reads_per_s, 120.5);
        assert_eq!(s.writes_per_s, 80.33);
        assert_eq!(s.written_mib_per_s, 0.31);
        assert_eq!(s.latency_avg_ms, 19.9);
        assert_eq!(s.latency_p95_ms, Some(44.98));
        assert!((s.total_time_s - 10.0123).abs() < 1e-9);
        assert!(parse_sysbench_text("nothing here").is_none());
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(8_000_000_000_000), "8TB");
        assert_eq!(human_bytes(10_000_000_000), "10GB");
        assert_eq!(human_bytes(1 << 30), "1.1GB");
    }
}
