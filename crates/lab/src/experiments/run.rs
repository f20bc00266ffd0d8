//! Running `tankbench fileio` workloads in a lab: prepare, run, cleanup, as a
//! subprocess in the client namespace (or on the server for local access), in
//! the lab's work directory. The result is the fileio `RunResult` with the lab's
//! labels added.

use crate::lab::Lab;
use crate::sys;
use crate::LabError;
use fileio::result::RunResult;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What a workload run in a lab gives: the fileio `RunResult`, with the lab's
/// labels added. A run that printed no `RunResult` is an error, not an
/// outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    pub result: RunResult,
    /// What the server's ARC and disks did during the run (beside the
    /// result, which stays the client's measurement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::server::ServerActivity>,
}

/// What a workload's `run` will do, as fileio's parser reads its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunShape {
    /// `--file-total-size`, bytes.
    pub file_total_size: u64,
    /// `--time`, seconds (0: no time limit).
    pub time_s: u64,
    /// `--events` (`--max-requests`), 0: no limit.
    pub events: u64,
}

/// The shape of a workload's `run`; None when fileio refuses the options
/// (which [`check_workload`] reports). The file set is read as `prepare`
/// reads it, so options without a test mode still have one.
pub fn run_shape(args: &[String]) -> Option<RunShape> {
    use fileio::options::{check_command_line, Action, CommandLine};
    let action = |verb: &str| {
        let mut words = vec!["fileio".to_string()];
        words.extend(strip_format(args));
        words.push(verb.into());
        match check_command_line(&words).ok()? {
            CommandLine::Command(settings) => Some(settings.action),
            _ => None,
        }
    };
    let Some(Action::Prepare(files)) = action("prepare") else {
        return None;
    };
    let (time_s, events) = match action("run") {
        Some(Action::Run(spec)) => (spec.time_s, spec.events),
        _ => (0, 0),
    };
    Some(RunShape {
        file_total_size: files.total_size,
        time_s,
        events,
    })
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
    let args = match &info.nfs_url {
        Some(url) => crate::nfs::workload_args(lab.state.spec.access, url, &args),
        None => args,
    };
    let labels = lab.state.spec.labels();
    run_step(
        fileio_command(tankbench, &info.workdir, netns, &args, "prepare")?,
        false,
    )?;
    let mut run_args = args.clone();
    run_args.push("--format=json".into());
    let before = crate::server::snapshot(lab);
    let ran = sys::check_interrupted().and_then(|_| {
        run_step(
            fileio_command(tankbench, &info.workdir, netns, &run_args, "run")?,
            true,
        )
    });
    let server = crate::server::between(&before, &crate::server::snapshot(lab));
    // Cleanup regardless of how the run went: the test files are ours.
    let cleaned = run_step(
        fileio_command(tankbench, &info.workdir, netns, &args, "cleanup")?,
        false,
    );
    let stdout = ran?;
    cleaned?;
    let mut result = parse_result(&stdout)?;
    result.labels.extend(labels);
    Ok(Outcome {
        result,
        server: Some(server),
    })
}

/// The `RunResult` that `tankbench fileio ... --format=json run` printed. Its
/// absence is an error naming the cause (what did not parse, and what the
/// output began with), never a result with figures missing.
pub fn parse_result(stdout: &str) -> Result<RunResult, LabError> {
    serde_json::from_str::<RunResult>(stdout.trim()).map_err(|e| {
        LabError::Other(format!(
            "fileio printed no JSON RunResult ({e}); its output began: {}",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_without_a_json_result_is_an_error_naming_the_cause() {
        let text = "File operations:\n    reads/s:                      120.50\n";
        let e = parse_result(text).unwrap_err().to_string();
        assert!(
            e.starts_with("fileio printed no JSON RunResult (")
                && e.ends_with("its output began: File operations:"),
            "{e}"
        );
        let e = parse_result("").unwrap_err().to_string();
        assert!(e.ends_with("began: (empty)"), "{e}");
        let e = parse_result("{\"schema_version\": 1}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing field"), "{e}");
    }
}
