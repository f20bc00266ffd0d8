//! `tankbench simulate calibrate`: fit a system model's uncertain parameters
//! to measured runs (the `sim::calibrate` library), after taking the ones a
//! `tankbench probe` result measures directly, and save them as a profile
//! that `tankbench simulate --profile` applies.

use clap::Args;
use fileio::probe::ProbeResult;
use fileio::result::{Environment, ResultKind, RunResult};
use report::atomic::{check_new_file, write_atomically, Existing};
use report::store::{load_dir, load_file};
use sim::calibrate::{calibrate_with_probe, local_model, probe_params, Measurement};
use sim::profile::{apply_profile_to_cell, Param, Profile};
use sim::SystemModel;
use std::path::{Path, PathBuf};

/// Fit a system's uncertain parameters to measured runs
///
/// A `tankbench probe` result among the RESULTS fixes the round trip, the
/// server CPU per request and the commit flush first; the runs fit the
/// rest. The values can be saved as a profile that `tankbench simulate
/// --profile` applies.
#[derive(Debug, Args)]
pub(crate) struct CalibrateArgs {
    /// The system the runs were made on [default: this machine as a local
    /// system, sized from the first run's environment].
    #[arg(long, value_name = "SYSTEM.toml")]
    system: Option<PathBuf>,
    /// The parameters to fit.
    #[arg(long, value_name = "PARAM[,...]",
          help = format!("The parameters to fit [default: all]: {}", Param::accepted()))]
    fit: Option<String>,
    /// Save the fitted parameters as a profile (a new file).
    #[arg(long, value_name = "FILE")]
    save_profile: Option<PathBuf>,
    /// Result files or store directories of measured runs, and at most one
    /// `tankbench probe` result (recognised by its content), whose
    /// measurements fix the round trip, server CPU and commit flush.
    #[arg(value_name = "RESULTS")]
    results: Vec<PathBuf>,
}

/// `--fit`'s comma list read as parameters; an unknown name is one line
/// naming the accepted ones.
fn fit_params(list: Option<&str>) -> anyhow::Result<Vec<Param>> {
    let Some(list) = list else {
        return Ok(Param::ALL.to_vec());
    };
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim) {
        let p = Param::from_name(name).ok_or_else(|| {
            anyhow::anyhow!(
                "simulate calibrate: --fit: unknown parameter '{name}'; accepted: {}",
                Param::accepted()
            )
        })?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// A file that is not a run result but another tankbench document, told by
/// its `kind`: a probe is returned; a slog result is refused naming where it
/// belongs; anything else is `None` (the run result's own error stands).
fn other_document(path: &Path) -> anyhow::Result<Option<ProbeResult>> {
    let Ok(text) = zfs_model::config_file::read_config(path) else {
        return Ok(None);
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Ok(None);
    };
    match value.get("kind").and_then(serde_json::Value::as_str) {
        Some("tankbench.probe") => ProbeResult::from_json(&text).map(Some).map_err(|e| {
            anyhow::anyhow!(
                "simulate calibrate: {}: not a readable probe result: {}",
                path.display(),
                first_line(&e.to_string())
            )
        }),
        Some("tankbench.slog") => anyhow::bail!(
            "simulate calibrate: {}: a `tankbench slog` result, not a run or a probe; a system file takes it as its log device (log = {{ measured = \"{}\" }})",
            path.display(),
            path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
        ),
        _ => Ok(None),
    }
}

/// The measured runs named on the command line: a file must be a measured
/// result (or the one probe result); a store directory gives its measured
/// results (predictions and files that are not results are left out, each
/// with a note on stderr).
fn load_runs(paths: &[PathBuf]) -> anyhow::Result<Inputs> {
    let mut runs = Vec::new();
    let mut probe: Option<(String, ProbeResult)> = None;
    for path in paths {
        if path.is_dir() {
            let listing = load_dir(path)
                .map_err(|e| anyhow::anyhow!("simulate calibrate: {}: {e}", path.display()))?;
            for s in &listing.skipped {
                super::write_stderr_line(&format!(
                    "note: left out {}: {}",
                    s.path.display(),
                    s.reason
                ));
            }
            let before = runs.len();
            for run in listing.runs {
                if run.result.kind == ResultKind::Measured {
                    runs.push((run.path.display().to_string(), run.result));
                } else {
                    super::write_stderr_line(&format!(
                        "note: left out {}: a prediction",
                        run.path.display()
                    ));
                }
            }
            if runs.len() == before {
                anyhow::bail!(
                    "simulate calibrate: {}: no measured results in this directory",
                    path.display()
                );
            }
        } else {
            let run = match load_file(path) {
                Ok(run) => run,
                Err(e) => {
                    let Some(p) = other_document(path)? else {
                        anyhow::bail!(
                            "simulate calibrate: {}: not a readable result: {}",
                            path.display(),
                            first_line(&e.to_string())
                        );
                    };
                    if let Some((first, _)) = &probe {
                        anyhow::bail!(
                            "simulate calibrate: {}: a second probe result ({first} is the first); give one probe",
                            path.display()
                        );
                    }
                    probe = Some((path.display().to_string(), p));
                    continue;
                }
            };
            runs.push((path.display().to_string(), run.result));
        }
    }
    Ok(Inputs { runs, probe })
}

/// What the command line named: measured runs and at most one probe.
struct Inputs {
    runs: Vec<(String, RunResult)>,
    probe: Option<(String, ProbeResult)>,
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn read_system(path: &Path) -> anyhow::Result<SystemModel> {
    let text = zfs_model::config_file::read_config(path)
        .map_err(|e| anyhow::anyhow!("--system {}: {e}", path.display()))?;
    // A measured log device's file is relative to the system file.
    let dir = path.parent().unwrap_or(Path::new("."));
    let model = SystemModel::from_toml_in(&text, dir)
        .map_err(|e| anyhow::anyhow!("--system {}: {e}", path.display()))?;
    model
        .resolve()
        .map_err(|e| anyhow::anyhow!("--system {}: {e}", path.display()))?;
    Ok(model)
}

pub(crate) fn run(a: &CalibrateArgs) -> anyhow::Result<i32> {
    if a.results.is_empty() {
        anyhow::bail!(
            "simulate calibrate: no measured runs given; name result files or store directories (RESULTS)"
        );
    }
    let params = fit_params(a.fit.as_deref())?;
    // The destination is checked first: nothing is fitted, and nothing
    // written, when it is refused.
    if let Some(path) = &a.save_profile {
        check_new_file(path).map_err(|e| {
            anyhow::anyhow!("simulate calibrate: --save-profile {}: {e}", path.display())
        })?;
    }
    let system = a
        .system
        .as_deref()
        .map(read_system)
        .transpose()
        .map_err(|e| anyhow::anyhow!("simulate calibrate: {e}"))?;
    let Inputs { runs, probe } = load_runs(&a.results)?;
    // Without a system file: this machine as a local system
    // (sim::calibrate::local_model), sized from the first run's environment
    // (a probe alone has none: the model's defaults).
    let model = match system {
        Some(m) => m,
        None => runs.first().map_or_else(
            || local_model(&Environment::default()),
            |(_, r)| local_model(&r.environment),
        ),
    };
    let measurements = runs
        .iter()
        .map(|(id, r)| Measurement::from_result(id, r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("simulate calibrate: {e}"))?;
    let probed = probe
        .as_ref()
        .map(|(id, p)| probe_params(&model, id, p))
        .transpose()
        .map_err(|e| anyhow::anyhow!("simulate calibrate: {e}"))?;
    let c =
        calibrate_with_probe(&model, probed.as_ref(), &measurements, &params).map_err(
            |e| match e {
                // The command names itself: calibration's own refusals need no
                // second "calibrate".
                sim::SimError::Calibrate(c) => anyhow::anyhow!("simulate calibrate: {c}"),
                e => anyhow::anyhow!("simulate calibrate: {e}"),
            },
        )?;
    // The report names measurements and systems read from files.
    super::write_stdout(report::escape::terminal_lines(&c.report()).as_bytes())?;
    // A fit at a physical bound is still the answer (exit 0): the best
    // physical fit, with what it cannot reach said on stderr.
    for w in c.warnings() {
        super::write_stderr_line(&format!("warning: {w}"));
    }
    if let Some(path) = &a.save_profile {
        write_atomically(path, c.profile().to_toml().as_bytes(), Existing::Keep).map_err(|e| {
            anyhow::anyhow!("simulate calibrate: --save-profile {}: {e}", path.display())
        })?;
        super::write_stderr_line(&format!("saved profile {}", path.display()));
    }
    Ok(0)
}

/// Read and check a profile file (`--profile`).
pub fn load_profile(path: &Path) -> anyhow::Result<Profile> {
    let text = zfs_model::config_file::read_config(path)
        .map_err(|e| anyhow::anyhow!("simulate: --profile {}: {e}", path.display()))?;
    Profile::from_toml(&text)
        .map_err(|e| anyhow::anyhow!("simulate: --profile {}: {e}", path.display()))
}

/// `tankbench simulate --profile FILE`: apply a saved profile, fitted on
/// `base`, to `model` (`base` with the override `fields` set); a fitted
/// value that does not apply to this system, or is carried to a changed
/// component, is noted on stderr. Returns the profile as applied (what
/// narrows the prediction's interval).
pub fn apply_profile_file(
    model: &mut SystemModel,
    base: &SystemModel,
    fields: &[&str],
    path: &Path,
) -> anyhow::Result<Profile> {
    let profile = load_profile(path)?;
    let applied = apply_profile_to_cell(model, base, &profile, fields)
        .map_err(|e| anyhow::anyhow!("simulate: --profile {}: {e}", path.display()))?;
    for s in &applied.notes {
        super::write_stderr_line(&format!("note: --profile {}: {s}", path.display()));
    }
    Ok(applied.profile)
}
