//! Running `tankbench fileio` workloads in a lab: prepare, run, cleanup, as a
//! subprocess in the client namespace (or on the server for local access), in
//! the lab's work directory. The result is the fileio `RunResult` with the lab's
//! labels added.

use crate::experiments::{server, workload};
use crate::lab::Lab;
use crate::parts::sys;
use crate::LabError;
use fileio::result::RunResult;
use serde::{Deserialize, Serialize};
use std::path::Path;
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
    pub server: Option<server::ServerActivity>,
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

/// Run prepare, run and cleanup of a fileio workload in the lab. Cleanup runs
/// even when the run fails or is interrupted.
pub fn run_workload(lab: &Lab, tankbench: &Path, args: &[String]) -> Result<Outcome, LabError> {
    let info = lab.built()?;
    let netns = info.client_netns.as_deref();
    let args = workload::strip_format(args);
    let args = match &info.nfs_url {
        Some(url) => crate::parts::nfs::workload_args(lab.state.spec.access, url, &args),
        None => args,
    };
    let labels = lab.state.spec.labels();
    run_step(
        fileio_command(tankbench, &info.workdir, netns, &args, "prepare")?,
        false,
    )?;
    let mut run_args = args.clone();
    run_args.push("--format=json".into());
    let before = server::snapshot(lab);
    let ran = sys::check_interrupted().and_then(|_| {
        run_step(
            fileio_command(tankbench, &info.workdir, netns, &run_args, "run")?,
            true,
        )
    });
    let server = server::between(&before, &server::snapshot(lab));
    // Cleanup regardless of how the run went: the test files are ours.
    let cleaned = run_step(
        fileio_command(tankbench, &info.workdir, netns, &args, "cleanup")?,
        false,
    );
    let stdout = ran?;
    cleaned?;
    let mut result = parse_result(&stdout)?;
    if let Some(zfsd) = &info.zfsd {
        facts_from_lab_daemon(&mut result, zfsd);
    }
    // The pool's write path as the lab timed it: a fact of the pool that no
    // tool reads (docs/lab.md), for `simulate --system-from` on this run.
    if let Some(facts) = result
        .environment
        .zfs
        .as_mut()
        .filter(|f| f.absent.is_none())
    {
        facts.write_path = info.write_path;
    }
    result.labels.extend(labels);
    Ok(Outcome {
        result,
        server: Some(server),
    })
}

/// The lab pool's ZFS facts in a run's result, read through the lab's own
/// zfs-fuse daemon. fileio read them with the host's `zpool` and `zfs`,
/// which cannot reach that daemon (its socket is in the daemon's mount
/// namespace, crate::parts::zfsd), so its result says the pool and dataset
/// are missing, or, with another zfs-fuse on the host, could name another
/// pool's. The facts of the pool (layout, dataset properties, version) do
/// not change during a run, so reading them after it is reading them for
/// it; what fileio watched during the run (ARC, iostat) is kept. A run
/// whose files were not on the lab's zfs-fuse (remote access: no facts)
/// is left as it is.
fn facts_from_lab_daemon(result: &mut RunResult, zfsd: &crate::parts::zfsd::Zfsd) {
    use fileio::zfs_facts::{capture_with, Platform};
    let env = &result.environment;
    let Some(old) = env
        .zfs
        .as_ref()
        .filter(|f| f.platform == Some(Platform::ZfsFuse))
    else {
        return;
    };
    let mount = fileio::environment::MountEntry {
        major_minor: String::new(),
        mount_point: env.mount_point.clone(),
        options: env.mount_options.clone(),
        fs_type: env.fs_type.clone(),
        source: env.device.clone(),
        super_options: String::new(),
    };
    let tools = crate::parts::zfsd::DaemonTools(zfsd);
    let Some(mut facts) = capture_with(Path::new(&env.mount_point), &mount, &tools) else {
        return;
    };
    facts.arc = old.arc.clone();
    facts.iostat = old.iostat.clone();
    for key in ["arc", "iostat"] {
        if let Some(why) = old.missing.get(key) {
            facts.missing.insert(key.into(), why.clone());
        }
    }
    result.environment.zfs = Some(facts);
}

/// The `RunResult` that `tankbench fileio ... --format=json run` printed. Its
/// absence is an error naming the cause (what did not parse, and what the
/// output began with), never a result with figures missing.
pub fn parse_result(stdout: &str) -> Result<RunResult, LabError> {
    serde_json::from_str::<RunResult>(stdout.trim()).map_err(|e| LabError::NoResult {
        program: "fileio",
        reason: e.to_string(),
        output: first_line(stdout),
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
