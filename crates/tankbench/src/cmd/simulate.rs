//! `tankbench simulate`: predict a fileio run on a described system (the
//! `sim` crate) and report it like a measurement, marked as a prediction.

use anyhow::Context as _;
use clap::{Args, Subcommand};
use fileio::options::{check_command_line, CommandLine, Format, RunSpec, Settings};
use report::atomic::{check_can_create_in, check_new_file, write_atomically, Existing};
use report::labels::{merge_labels, parse_labels, Labels};
use report::store::{ResultStore, DEFAULT_DIR};
use sim::system::{DeviceSpec, Protocol, System, SystemModel};
use sim::SimError;

use super::options::{at_least_two_samples, Switch};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Predict a fileio run on a described system
///
/// The prediction is reported like a measurement and marked as one. The workload is `tankbench fileio`'s options after `--`, ending in `run`.
/// A comma list in an override (--layout, --log, --link, --client, --ram)
/// makes it a matrix: every combination is predicted and printed as one
/// table. See docs/prediction.md.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    arg_required_else_help = true
)]
pub(crate) struct SimulateArgs {
    #[command(subcommand)]
    command: Option<SimulateCommand>,
    /// The system: pool, disks, log device, server, link and client (a TOML file).
    #[arg(
        long,
        value_name = "SYSTEM.toml",
        required_unless_present_any = ["system_from", "baseline"]
    )]
    system: Option<PathBuf>,
    /// A measured run of the box at hand (a tankbench result, or a fio
    /// JSON or sysbench text report): each figure predicted is its
    /// measured figure times the simulated change from its configuration
    /// (its ZFS facts', or --system's) to the one asked for. See
    /// docs/what-if.md. Given more than once: runs of one configuration,
    /// each figure their median.
    #[arg(long, value_name = "RUN", conflicts_with_all = ["system_from", "write_system"])]
    baseline: Vec<PathBuf>,
    /// The system a measured run ran on, from the ZFS facts its result
    /// recorded (pool layout, log vdev, recordsize, sync, ZFS version, RAM);
    /// what a run cannot record is assumed and listed.
    #[arg(long, value_name = "RESULT.json", conflicts_with = "system")]
    system_from: Option<PathBuf>,
    /// Write the system used (after --system-from, before overrides) to a
    /// new TOML file, to edit and pass to --system.
    #[arg(long, value_name = "FILE.toml")]
    write_system: Option<PathBuf>,
    #[command(flatten)]
    model: super::options::ModelOptions,
    /// Pool layout(s) instead of the system file's, e.g. 3xraidz2-8.
    #[arg(long, value_name = "LAYOUT[,...]")]
    layout: Option<String>,
    /// Log device(s) instead of the system file's: a device class or none.
    #[arg(long, value_name = "DEVICE|none[,...]")]
    log: Option<String>,
    /// Mirror the log device with a second one: its class (`none`: one
    /// device). Each log block waits for the slower member.
    #[arg(long, value_name = "DEVICE|none[,...]")]
    log_mirror: Option<String>,
    /// Client link(s) instead of the system file's, e.g. 10G, 2x10G.
    #[arg(long, value_name = "LINK[,...]")]
    link: Option<String>,
    /// Client(s) instead of the system file's.
    #[arg(long, value_name = "CLIENT[,...]",
          value_parser = super::choices::offered(super::choices::names(&Protocol::ALL, Protocol::name)))]
    client: Option<String>,
    /// Server RAM instead of the system file's, e.g. 64GiB.
    #[arg(long, value_name = "SIZE[,...]")]
    ram: Option<String>,
    /// A prediction interval from samples of the model's uncertain parameters.
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    intervals: Switch,
    /// Samples the interval takes.
    #[arg(long, value_name = "N", value_parser = at_least_two_samples(),
          help = format!("Samples the interval takes, 2 or more [default: {}]",
                         sim::uncertainty::DEFAULT_SAMPLES))]
    samples: Option<usize>,
    /// Simulate every second of --time instead of stopping once the figures settle.
    #[arg(long)]
    no_early_stop: bool,
    /// Count from the end of the first txg sync, as plan does.
    #[arg(long, help = super::simulate_matrix::COUNT_AFTER_FIRST_SYNC_HELP)]
    count_after_first_sync: bool,
    #[arg(long, value_name = "FILE.svg|FILE.png", help = super::simulate_matrix::CHART_HELP)]
    chart: Option<PathBuf>,
    /// Write every request the simulated disks take (the prediction's own
    /// run, not its interval's samples) to a new file, a line each:
    /// submitted ns, disk (the pool's in order, then the log device's), R,
    /// W or F, bytes, done ns, offset (`-` for a flush): the format of `lab
    /// up --disk-trace`, so scripts/log-block-trace reads both.
    #[arg(long, value_name = "FILE", conflicts_with = "baseline")]
    disk_trace: Option<PathBuf>,
    /// fileio options of the workload, ending in `run` (as for `tankbench fileio`).
    #[arg(last = true, value_name = "FILEIO OPTIONS")]
    fileio: Vec<OsString>,
    /// The workload as a fio job file instead of fileio options: one group
    /// of one job, its numjobs clones as threads (see docs/fio.md).
    #[arg(long, value_name = "JOB.fio")]
    fio: Option<PathBuf>,
}

/// `simulate matrix` and `simulate calibrate`.
#[derive(Debug, Subcommand)]
enum SimulateCommand {
    Matrix(super::simulate_matrix::MatrixArgs),
    Calibrate(super::calibrate::CalibrateArgs),
}

impl SimulateArgs {
    /// The overrides given, as matrix axes (name, values of its comma list).
    fn axes(&self) -> Vec<(&'static str, Vec<String>)> {
        [
            ("layout", &self.layout),
            ("log", &self.log),
            ("log_mirror", &self.log_mirror),
            ("link", &self.link),
            ("client", &self.client),
            ("ram", &self.ram),
        ]
        .into_iter()
        .filter_map(|(name, v)| {
            v.as_ref()
                .map(|v| (name, v.split(',').map(|s| s.trim().to_string()).collect()))
        })
        .collect()
    }

    /// Whether an override lists several values: the command is a matrix.
    fn is_matrix(&self) -> bool {
        self.axes().iter().any(|(_, v)| v.len() > 1)
    }

    /// The fileio words after `--`, with `fileio` in front: the test's name
    /// for fileio's parser, as on sysbench's command line.
    fn fileio_words(&self) -> anyhow::Result<Vec<String>> {
        if self.fileio.is_empty() {
            anyhow::bail!(
                "simulate: the fileio options go after '--' and end in 'run' ({EXAMPLE})"
            );
        }
        let mut words = Vec::with_capacity(self.fileio.len() + 1);
        for w in &self.fileio {
            words.push(
                w.to_str()
                    .ok_or_else(|| anyhow::anyhow!("simulate: a fileio option is not UTF-8 text"))?
                    .to_string(),
            );
        }
        if words.first().map(String::as_str) != Some("fileio") {
            words.insert(0, "fileio".into());
        }
        Ok(words)
    }
}

/// The shortest workload, for messages about the words after `--`.
const EXAMPLE: &str = "e.g. -- --file-test-mode=rndrw run";

/// The system file with the command line's overrides applied. Each override
/// replaces one field; [`SystemModel::resolve`] then parses it with the same
/// zfs-model parsers as the file's own value.
fn apply_overrides(model: &mut SystemModel, a: &SimulateArgs) -> anyhow::Result<()> {
    if let Some(l) = &a.layout {
        model.pool.layout = l.as_str().into();
    }
    if let Some(l) = &a.link {
        model.link.link = l.as_str().into();
    }
    if let Some(l) = &a.log {
        // --log replaces the log vdev: one device (a mirrored one's second
        // member goes).
        model.log = Some(DeviceSpec::Name(l.clone()));
        model.log_mirror = None;
    }
    if let Some(m) = &a.log_mirror {
        model.log_mirror = Some(DeviceSpec::Name(m.clone()));
    }
    if let Some(r) = &a.ram {
        model.server.ram = r.as_str().into();
    }
    if let Some(c) = &a.client {
        model.client.protocol = Protocol::parse(c).ok_or_else(|| {
            anyhow::anyhow!("simulate: --client '{c}': accepted: {}", Protocol::ACCEPTED)
        })?;
    }
    Ok(())
}

impl SimulateArgs {
    /// The system fields the overrides set (as matrix axes name them).
    fn override_fields(&self) -> Vec<&'static str> {
        [
            ("pool.layout", self.layout.is_some()),
            ("link.link", self.link.is_some()),
            ("log", self.log.is_some()),
            ("log_mirror", self.log_mirror.is_some()),
            ("server.ram", self.ram.is_some()),
            ("client.protocol", self.client.is_some()),
        ]
        .into_iter()
        .filter_map(|(field, given)| given.then_some(field))
        .collect()
    }

    /// The option that replaced the system file's `field`, if one did.
    fn option_for(&self, field: &str) -> Option<&'static str> {
        [
            ("pool.layout", "--layout", self.layout.is_some()),
            ("link.link", "--link", self.link.is_some()),
            ("log", "--log", self.log.is_some()),
            ("log_mirror", "--log-mirror", self.log_mirror.is_some()),
            ("server.ram", "--ram", self.ram.is_some()),
        ]
        .into_iter()
        .find(|&(f, _, given)| given && f == field)
        .map(|(_, option, _)| option)
    }
}

/// A refused system: named by the option when the command line set the
/// field, else by the field of the system file.
fn system_error(e: SimError, a: &SimulateArgs) -> anyhow::Error {
    match &e {
        SimError::Field(f) => match a.option_for(&f.field) {
            Some(option) => anyhow::anyhow!("simulate: {option}: {}", f.problem),
            None => anyhow::anyhow!("simulate: {e}"),
        },
        _ => anyhow::anyhow!("simulate: {e}"),
    }
}

pub(crate) fn run(a: SimulateArgs) -> anyhow::Result<i32> {
    match &a.command {
        Some(SimulateCommand::Matrix(m)) => return super::simulate_matrix::run(m),
        Some(SimulateCommand::Calibrate(c)) => return super::calibrate::run(c),
        None => {}
    }
    if !a.baseline.is_empty() {
        return what_if(&a, &a.baseline);
    }
    if let Some(job) = &a.fio {
        return simulate_fio(&a, job);
    }
    if let Some(path) = &a.disk_trace {
        if a.is_matrix() {
            anyhow::bail!("simulate: --disk-trace traces one prediction (accepted: one value per override, no comma lists)");
        }
        check_new_file(path)
            .map_err(|e| anyhow::anyhow!("simulate: --disk-trace={}: {e}", path.display()))?;
    }
    let words = a.fileio_words()?;
    let source = system_source(&a)?;
    if a.is_matrix() {
        return matrix_of_overrides(&a, &source, &words);
    }
    let (spec, settings) = fileio_settings(&words)?;
    predict_and_report(&a, &spec, &settings, &source)
}

/// Predict `spec` on the system of `source` and write what `settings`'
/// output options ask for: the text or JSON report, `--json`, `--save`
/// with its labels, `--chart`; every destination checked first.
fn predict_and_report(
    a: &SimulateArgs,
    spec: &RunSpec,
    settings: &Settings,
    source: &SystemSource,
) -> anyhow::Result<i32> {
    let ext = &settings.ext;
    if ext.repeat != 1 {
        anyhow::bail!("simulate: --repeat must be 1 (a prediction is deterministic for its seed)");
    }
    let mut labels = Labels::new();
    for text in &ext.labels {
        merge_labels(&mut labels, parse_labels(text)?)?;
    }
    let save_dir = check_destinations(a, ext, &labels)?;
    let (model, sys, mut result) = predict(a, spec, source)?;
    result.labels.extend(labels);
    if let Some(path) = &ext.json_path {
        write_json(path, &result)?;
    }
    if let Some(path) = &a.chart {
        super::simulate_matrix::write_predictions_chart(path, std::slice::from_ref(&result))?;
    }
    if let Some(dir) = &save_dir {
        let store = ResultStore::open(dir.as_path()).context("--save")?;
        let path = store.save(&result).context("--save")?;
        super::write_stderr_line(&format!("saved {}", path.display()));
    }
    let text = match ext.format {
        Format::Json => format!("{}\n", serde_json::to_string_pretty(&result)?),
        // The system's names may come from someone else's result file
        // (--system-from): shown, never able to drive the terminal.
        // On a terminal the long lines wrap and the banner is coloured.
        Format::Text => screen_report(&model, &sys, &result, settings.general.percentile),
    };
    super::write_stdout(text.as_bytes())?;
    Ok(0)
}

/// The store of `--save` (None without it), after checking every
/// destination before the prediction, as fileio checks them before a run:
/// nothing is written when any of them is refused.
fn check_destinations(
    a: &SimulateArgs,
    ext: &fileio::options::Extensions,
    labels: &Labels,
) -> anyhow::Result<Option<PathBuf>> {
    let save_dir: Option<PathBuf> = ext
        .save
        .as_ref()
        .map(|d| d.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DIR)));
    match &save_dir {
        Some(dir) => check_can_create_in(dir)
            .map_err(|e| anyhow::anyhow!("simulate: --save={}: {e}", dir.display()))?,
        None if !labels.is_empty() => {
            anyhow::bail!("simulate: --label needs --save: labels are kept with stored results")
        }
        None => {}
    }
    if let Some(path) = &ext.json_path {
        check_new_file(path)
            .map_err(|e| anyhow::anyhow!("simulate: --json={}: {e}", path.display()))?;
    }
    if let Some(path) = &a.chart {
        super::report::check_chart_name("simulate: --chart", path)?;
    }
    Ok(save_dir)
}

/// `tankbench simulate --baseline RUN [--system A.toml] [overrides] -- ...
/// run`: the configurations the overrides describe, each predicted from
/// the measured run; one as a report of its figures, several as a table
/// with the baseline marked.
fn what_if(a: &SimulateArgs, paths: &[PathBuf]) -> anyhow::Result<i32> {
    use super::what_if as w;
    // The workload: the fio job's (after '--' only output options), or
    // fileio's words; `workload` is the words a matrix cell keeps (none for
    // a job) and `described` what the table's note says ran.
    let (spec, settings, workload, described) = match &a.fio {
        Some(job) => (
            super::fio::job_spec(job, "simulate: --fio")?,
            fio_output_settings(a)?,
            Vec::new(),
            format!("the fio job {}", job.display()),
        ),
        None => {
            let words = a.fileio_words()?;
            let (spec, settings) = fileio_settings(&words)?;
            let workload = super::overrides::workload_of(&words);
            let described = sim::matrix::fileio_workload_text(&workload);
            (spec, settings, workload, described)
        }
    };
    let ext = &settings.ext;
    if ext.repeat != 1 {
        anyhow::bail!("simulate: --repeat must be 1 (a prediction is deterministic for its seed)");
    }
    if ext.json_path.is_some() && a.is_matrix() {
        anyhow::bail!(
            "simulate: --json=FILE takes one prediction; a matrix prints JSON with --format=json"
        );
    }
    if let Some(p) = &ext.json_path {
        check_new_file(p).map_err(|e| anyhow::anyhow!("simulate: --json={}: {e}", p.display()))?;
    }
    let mut labels = Labels::new();
    for text in &ext.labels {
        merge_labels(&mut labels, parse_labels(text)?)?;
    }
    let baseline = w::load_baselines("simulate", paths)?;
    let (text, _, option) = w::baseline_system("simulate", &baseline, a.system.as_deref())?;
    let profile = a
        .model
        .profile
        .as_deref()
        .map(super::calibrate::load_profile)
        .transpose()?;
    let a_cell = w::baseline_cell(&text, &option, &workload, profile.as_ref())?;
    let mut m = super::overrides::overrides_matrix(
        &text,
        &option,
        workload.clone(),
        &a.axes(),
        a.model.max_cells,
    )?;
    m.profile = profile;
    let cells = w::cells_of("simulate", &m)?;
    let runs = w::Runs {
        events: a.model.max_sim_events,
        intervals: match a.intervals {
            Switch::On => Some(a.samples.unwrap_or(sim::uncertainty::DEFAULT_SAMPLES)),
            Switch::Off => None,
        },
        early_stop: !a.no_early_stop,
        warmup_events: super::simulate_matrix::warmup_events(a.count_after_first_sync),
        save: w::save_dir(ext.save.as_ref()),
        labels,
    };
    let anchored = w::predict("simulate", &baseline, &a_cell, &spec, &cells, &runs)?;
    let sim_error = |e: SimError| anyhow::anyhow!("simulate: {e}");
    let out = if a.is_matrix() {
        match ext.format {
            Format::Json => w::json_doc(
                "tankbench simulate --baseline",
                &workload,
                &baseline,
                &anchored.results,
            )?,
            Format::Text => sim::baseline::report::table(
                &described,
                &baseline,
                &a_cell.system,
                &cells,
                &anchored,
            )
            .map_err(sim_error)?
            .to_screen(&super::stdout_screen()),
        }
    } else {
        let result = anchored
            .results
            .first()
            .ok_or(SimError::CellLost)
            .map_err(sim_error)?;
        if let Some(p) = &ext.json_path {
            write_json(p, result)?;
        }
        match ext.format {
            Format::Json => format!("{}\n", serde_json::to_string_pretty(result)?),
            Format::Text => {
                sim::baseline::report::one(&baseline, &a_cell.system, &cells[0].system, &anchored)
                    .map_err(sim_error)?
            }
        }
    };
    super::write_stdout(out.as_bytes())?;
    Ok(0)
}

/// Where the system came from: its TOML text and the option that named it
/// (for messages).
struct SystemSource {
    text: String,
    option: String,
    /// Where the system's own file names (`log = { measured = "..." }`)
    /// are read from: the system file's directory.
    dir: PathBuf,
}

/// The system of `--system FILE`, or of `--system-from RESULT` (derived
/// from the run's ZFS facts; its assumptions go to stderr). With
/// `--write-system`, the text is also written to a new file.
fn system_source(a: &SimulateArgs) -> anyhow::Result<SystemSource> {
    let source = match (&a.system, &a.system_from) {
        (Some(path), _) => SystemSource {
            text: read_system_file(path)?,
            option: format!("--system {}", path.display()),
            dir: super::overrides::directory_of(path),
        },
        (None, Some(path)) => {
            let option = format!("--system-from {}", path.display());
            let run = report::store::load_file(path)
                .map_err(|e| anyhow::anyhow!("simulate: {option}: {e}"))?;
            let derived = sim::from_result::system_from_result(&run.id, &run.result)
                .map_err(|e| anyhow::anyhow!("simulate: {option}: {e}"))?;
            for line in &derived.assumed {
                super::write_stderr_line(&format!("simulate: assumed {line}"));
            }
            let text = format!(
                "# The system of a measured run ({}), made by tankbench simulate --system-from.\n{}",
                path.display(),
                derived.to_toml()
            );
            SystemSource {
                text,
                option,
                dir: super::overrides::directory_of(path),
            }
        }
        (None, None) => unreachable!("clap requires --system or --system-from"),
    };
    if let Some(path) = &a.write_system {
        check_new_file(path)
            .map_err(|e| anyhow::anyhow!("simulate: --write-system={}: {e}", path.display()))?;
        write_atomically(path, source.text.as_bytes(), Existing::Keep)
            .map_err(|e| anyhow::anyhow!("simulate: --write-system={}: {e}", path.display()))?;
        super::write_stderr_line(&format!("simulate: wrote the system to {}", path.display()));
    }
    Ok(source)
}

/// `--system FILE`, read as a configuration file (a regular file of at
/// most zfs_model::config_file::CONFIG_LIMIT bytes).
pub(crate) fn read_system_file(path: &Path) -> anyhow::Result<String> {
    zfs_model::config_file::read_config(path)
        .map_err(|e| anyhow::anyhow!("simulate: --system {}: {e}", path.display()))
}

/// `--disk-trace=FILE`: the simulated disks' requests as a new file, in
/// `lab up --disk-trace`'s format.
fn write_disk_trace(
    path: &Path,
    requests: &[zfs_model::diskmodel::DiskRequest],
) -> anyhow::Result<()> {
    use std::fmt::Write as _;
    let mut text = String::with_capacity(requests.len() * 48);
    for r in requests {
        let _ = writeln!(text, "{r}");
    }
    write_atomically(path, text.as_bytes(), Existing::Keep)
        .map_err(|e| anyhow::anyhow!("simulate: --disk-trace={}: {e}", path.display()))?;
    super::write_stderr_line(&format!(
        "simulate: wrote {} disk requests to {}",
        requests.len(),
        path.display()
    ));
    Ok(())
}

/// `--json=FILE`: the prediction, published whole as a new file.
pub(crate) fn write_json(path: &Path, result: &fileio::result::RunResult) -> anyhow::Result<()> {
    let mut doc = serde_json::to_string_pretty(result)?;
    doc.push('\n');
    write_atomically(path, doc.as_bytes(), Existing::Keep)
        .map_err(|e| anyhow::anyhow!("simulate: --json={}: {e}", path.display()))
}

/// The fileio words after `--` (`fileio`, options, `run`): the workload,
/// read with fileio's typed API, and the front end's output options
/// (`--format`, `--json`, `--save`, `--label`, `--repeat`, `--percentile`).
pub(crate) fn fileio_settings(words: &[String]) -> anyhow::Result<(RunSpec, Box<Settings>)> {
    let options = words.get(1..).unwrap_or_default();
    let Some((command, workload)) = options.split_last() else {
        anyhow::bail!("simulate: the fileio words must end in 'run' ({EXAMPLE})");
    };
    match command.as_str() {
        "run" => {}
        "prepare" | "cleanup" => anyhow::bail!(
            "simulate: only 'run' can be predicted (prepare and cleanup touch no simulated files); accepted command: run"
        ),
        _ => anyhow::bail!("simulate: the fileio words must end in 'run' ({EXAMPLE})"),
    }
    let spec = RunSpec::from_words(workload).map_err(|e| anyhow::anyhow!("simulate: {e}"))?;
    // The workload's words passed: what the front end can refuse now is an
    // output option, whose refusal fileio gives as its printed lines.
    match check_command_line(words) {
        // The simulator starts every run from its model's steady state and
        // has no warm-up to leave out: taking the option would be silent.
        Ok(CommandLine::Command(s)) if s.ext.warmup_s > 0 => anyhow::bail!(
            "simulate: --warmup={} is not simulated (a prediction has no warm-up to leave out); accepted: --warmup=0 or no --warmup",
            s.ext.warmup_s
        ),
        Ok(CommandLine::Command(s)) => Ok((spec, s)),
        Ok(_) => anyhow::bail!("simulate: the fileio words must end in 'run' ({EXAMPLE})"),
        Err(f) => anyhow::bail!("simulate: {}", f.summary()),
    }
}

/// `tankbench simulate` with comma lists: every override given becomes an
/// axis (first given, first column), the fileio words the workload; the
/// output options (`--format`, `--save`, `--label`) are fileio's, after `--`.
fn matrix_of_overrides(
    a: &SimulateArgs,
    source: &SystemSource,
    words: &[String],
) -> anyhow::Result<i32> {
    use super::simulate_matrix::{run_matrix, MatrixOutput, TableFormat};
    let (_, settings) = fileio_settings(words)?;
    let ext = &settings.ext;
    if ext.json_path.is_some() {
        anyhow::bail!(
            "simulate: --json=FILE takes one prediction; a matrix prints JSON with --format=json"
        );
    }
    let mut labels = Labels::new();
    for text in &ext.labels {
        merge_labels(&mut labels, parse_labels(text)?)?;
    }
    let text = &source.text;
    let max_cells = a.model.max_cells;
    let events = a.model.max_sim_events;
    let mut m = super::overrides::overrides_matrix(
        text,
        &source.option,
        super::overrides::workload_of(words),
        &a.axes(),
        max_cells,
    )?;
    if let Some(path) = &a.model.profile {
        m.profile = Some(super::calibrate::load_profile(path)?);
        m.cells()
            .map_err(|e| anyhow::anyhow!("simulate: --profile {}: {e}", path.display()))?;
    }
    run_matrix(
        &m,
        &MatrixOutput {
            format: match ext.format {
                Format::Json => TableFormat::Json,
                Format::Text => TableFormat::Text,
            },
            save: ext
                .save
                .as_ref()
                .map(|d| d.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DIR))),
            labels,
            events,
            intervals: match a.intervals {
                Switch::On => Some(a.samples.unwrap_or(sim::uncertainty::DEFAULT_SAMPLES)),
                Switch::Off => None,
            },
            early_stop: !a.no_early_stop,
            warmup_events: super::simulate_matrix::warmup_events(a.count_after_first_sync),
            chart: a.chart.clone(),
        },
    )
}

/// The text report of a prediction: a header naming the system, then the
/// sections of sysbench 1.0.20's cumulative report (file_report_cumulative
/// in sb_fileio.c, report_cumulative in src/sysbench.c) in their layout,
/// computed from the predicted result, then tankbench's latency table by
/// operation. `percentile` is sysbench's `--percentile` (0: disabled).
/// The text report for stdout. The system's names may come from someone
/// else's result file (--system-from): shown, never able to drive the
/// terminal. On a terminal the long lines wrap and the banner is coloured.
fn screen_report(
    model: &SystemModel,
    sys: &System,
    r: &fileio::result::RunResult,
    percentile: u32,
) -> String {
    let screen = super::stdout_screen();
    screen.paint_label(&screen.wrap(&report::escape::terminal_lines(&text_report(
        model, sys, r, percentile,
    ))))
}

fn text_report(
    model: &SystemModel,
    sys: &System,
    r: &fileio::result::RunResult,
    percentile: u32,
) -> String {
    use fileio::result::LatencyKey;
    use fileio::sysbench::report_text::{
        cumulative_report, latency_section, CumulativeFigures, PercentileLine,
    };
    let mut s = prediction_header(model, sys);
    s.push('\n');
    let event = r.latency.get(&LatencyKey::Event);
    let (min_ms, avg_ms, max_ms, sum_ms) = event.map_or((0.0, 0.0, 0.0, 0.0), |l| {
        (l.min_ms, l.mean_ms, l.max_ms, l.sum_ms)
    });
    // A prediction has no sysbench log-scale histogram: the value printed is
    // the event percentile of the result's own histogram when it was
    // computed, else the line says so.
    let percentile = if percentile == 0 {
        PercentileLine::Disabled
    } else {
        match event.and_then(|l| l.at(f64::from(percentile))) {
            Some(ms) => PercentileLine::Value(percentile, ms),
            None => PercentileLine::NotComputed(percentile),
        }
    };
    s.push_str(&cumulative_report(&CumulativeFigures {
        seconds: r.total_time_s,
        total_time_s: r.total_time_s,
        counts: &r.counts,
        min_ms,
        avg_ms,
        max_ms,
        sum_ms,
        percentile,
        threads: r
            .threads
            .iter()
            .map(|t| (t.events as f64, t.busy_time_s))
            .collect(),
    }));
    s.push_str(&latency_section(r));
    if let Some(p) = &r.prediction {
        s.push_str(&interval_section(p));
    }
    s
}

/// The interval of each figure and the parameters that move it most.
fn interval_section(p: &fileio::result::PredictionInterval) -> String {
    let mut s = format!(
        "\nPrediction interval ({:.0} %, {} samples; {}):\n",
        p.confidence * 100.0,
        p.samples,
        p.method
    );
    for (name, f) in &p.figures {
        s.push_str(&format!(
            "    {name:<20} {} ({}-{})\n",
            sig(f.point),
            sig(f.low),
            sig(f.high)
        ));
    }
    let noise = sim::uncertainty::noise_correlation(p.samples, p.sensitivity.len());
    let top: Vec<String> = p
        .sensitivity
        .iter()
        .take(3)
        .map(|x| {
            format!(
                "{} (partial rank correlation {:+.2}{})",
                x.parameter,
                x.rank_correlation,
                if x.rank_correlation.abs() < noise {
                    ", within noise"
                } else {
                    ""
                }
            )
        })
        .collect();
    if !top.is_empty() {
        s.push_str(&format!("Measure this first: {}\n", top.join(", ")));
        s.push_str(&format!(
            "  (with {} samples over {} parameters a correlation under {noise:.2} cannot be told from chance at 95 %)\n",
            p.samples,
            p.sensitivity.len()
        ));
    }
    s
}

/// Four significant figures.
fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    // The magnitude of a finite non-zero f64 is within ±400.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

/// One line naming what was predicted: the system's name, layout, log
/// device, link and client, so a pasted report cannot pass for a measurement.
fn prediction_header(model: &SystemModel, sys: &System) -> String {
    // The system's name and its log device's may come from a result file
    // (--system-from): each is one field on this line, never a line break
    // or a terminal sequence.
    let log = model.log_words(sys);
    let link = match sys.link {
        Some(l) => l.name(),
        None => "none (local)".to_string(),
    };
    format!(
        "PREDICTION (simulated, not measured) for system '{}': layout {}, log {}, link {}, client {}",
        report::escape::terminal_field(&sys.name),
        sys.shape.name(),
        log,
        link,
        sys.protocol.name()
    )
}

/// The one prediction of `simulate`: the system of `source` with the
/// overrides and the profile applied, `spec` simulated on it, and its
/// interval when asked. Returns the model, its resolved system and the
/// result.
fn predict(
    a: &SimulateArgs,
    spec: &RunSpec,
    source: &SystemSource,
) -> anyhow::Result<(SystemModel, System, fileio::result::RunResult)> {
    let budget = match a.model.max_sim_events {
        Some(events) => sim::Budget::of(events).map_err(|e| anyhow::anyhow!("simulate: {e}"))?,
        None => sim::Budget::default(),
    };
    let base = SystemModel::from_toml_in(&source.text, &source.dir)
        .map_err(|e| anyhow::anyhow!("simulate: {}: {e}", source.option))?;
    let mut model = base.clone();
    apply_overrides(&mut model, a)?;
    model.resolve().map_err(|e| system_error(e, a))?;
    // The profile calibrates the system file; an override changes a
    // component as a matrix axis does, and the fit carries to it by what
    // the change is worth (the same figure as that matrix's cell).
    let profile = match &a.model.profile {
        Some(p) => Some(super::calibrate::apply_profile_file(
            &mut model,
            &base,
            &a.override_fields(),
            p,
        )?),
        None => None,
    };
    let sys = model.resolve().map_err(|e| system_error(e, a))?;
    let options = sim::RunOptions {
        budget,
        early_stop: !a.no_early_stop,
        warmup_events: super::simulate_matrix::warmup_events(a.count_after_first_sync),
        ..sim::RunOptions::default()
    };
    let simulated = sim::Simulation::new(spec, &model)
        .options(&options)
        .disk_trace(a.disk_trace.is_some())
        .run()
        .map_err(|e| anyhow::anyhow!("simulate: {e}"))?;
    if let Some(path) = &a.disk_trace {
        write_disk_trace(path, &simulated.disk_trace)?;
    }
    let mut result = simulated.result;
    if a.intervals == Switch::On {
        let samples = a.samples.unwrap_or(sim::uncertainty::DEFAULT_SAMPLES);
        let parallel = std::thread::available_parallelism().map_or(1, usize::from);
        result = sim::uncertainty::with_interval(
            spec,
            &model,
            profile.as_ref(),
            result,
            &options,
            samples,
            parallel,
        )
        .map_err(|e| anyhow::anyhow!("simulate: {e}"))?;
    }
    super::overrides::note_budget(&result);
    Ok((model, sys, result))
}

/// The fileio options `simulate --fio` takes after `--`: how the
/// prediction is written, never what the workload is (that is the job's).
const FIO_OUTPUT_OPTIONS: [&str; 5] = [
    "--format=",
    "--json=",
    "--save",
    "--label=",
    "--percentile=",
];

/// `simulate --fio JOB.fio [-- OUTPUT OPTIONS]`: the job file's one
/// workload (fileio's fio front end builds the same `RunSpec` as `tankbench
/// fio` runs) predicted on the system and written as a fileio workload's
/// prediction is. Matrices and `--baseline` take fileio options for now.
fn simulate_fio(a: &SimulateArgs, job: &Path) -> anyhow::Result<i32> {
    let settings = fio_output_settings(a)?;
    if a.is_matrix() {
        anyhow::bail!("simulate: --fio takes one value per override (accepted: a matrix with fileio options after '--')");
    }
    let spec = super::fio::job_spec(job, "simulate: --fio")?;
    let source = system_source(a)?;
    predict_and_report(a, &spec, &settings, &source)
}

/// The output options `simulate --fio` takes after `--`
/// ([`FIO_OUTPUT_OPTIONS`]); any other word is refused, the workload being
/// the job's.
fn fio_output_settings(a: &SimulateArgs) -> anyhow::Result<Box<Settings>> {
    let mut words = if a.fileio.is_empty() {
        vec!["fileio".to_string()]
    } else {
        a.fileio_words()?
    };
    if words.last().map(String::as_str) != Some("run") {
        words.push("run".into());
    }
    if let Some(w) = words[1..words.len() - 1]
        .iter()
        .find(|w| !FIO_OUTPUT_OPTIONS.iter().any(|o| w.starts_with(o)))
    {
        anyhow::bail!(
            "simulate: with --fio the workload is the job's: '{w}' after '--' is not an output option (accepted there: --format=, --json=, --save, --label=, --percentile=)"
        );
    }
    // fileio's parser reads the output options only beside a workload: a
    // test mode stands in for the job's, whose spec is the one predicted.
    words.insert(words.len() - 1, "--file-test-mode=seqwr".into());
    let (_, settings) = fileio_settings(&words)?;
    Ok(settings)
}
