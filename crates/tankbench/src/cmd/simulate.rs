//! `tankbench simulate`: predict a fileio run on a described system (the
//! `sim` crate) and report it like a measurement, marked as a prediction.

use anyhow::Context as _;
use fileio::options::{check_command_line, CommandLine, Format, RunSpec, Settings};
use report::atomic::{check_can_create_in, check_new_file, write_atomically, Existing};
use report::labels::{merge_labels, parse_labels, Labels};
use report::store::{ResultStore, DEFAULT_DIR};
use sim::matrix::{AxisError, MatrixError};
use sim::system::{DeviceSpec, Protocol, System, SystemModel};
use sim::SimError;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

const USAGE: &str = "usage: tankbench simulate --system SYSTEM.toml [--profile PROFILE.toml] [--layout L[,L...]] [--log DEVICE|none[,...]] [--link L[,L...]] [--client local|linux-nfs|esxi-nfs|iscsi|smb[,...]] [--ram SIZE[,...]] [--max-sim-events N] [--max-cells N] [--intervals=on|off] [--samples N] [--no-early-stop] -- <fileio options> run\n       tankbench simulate matrix MATRIX.toml [--max-sim-events=N] [--max-cells=N] [--format=text|markdown|csv|json] [--save[=DIR]] [--label=K=V]...\n       tankbench simulate calibrate [--system SYSTEM.toml] [--save-profile FILE] RESULTS...";

/// The words before `--`: the system and its overrides.
#[derive(Debug, Default)]
struct SimArgs {
    system: Option<PathBuf>,
    layout: Option<String>,
    log: Option<String>,
    link: Option<String>,
    client: Option<String>,
    profile: Option<PathBuf>,
    ram: Option<String>,
    /// `--max-sim-events`: the simulation budget (fileio events).
    max_events: Option<String>,
    /// `--max-cells`: most cells of a matrix of overrides.
    max_cells: Option<String>,
    /// `--intervals=on|off` (default on) and `--samples N`.
    intervals: Option<String>,
    samples: Option<String>,
    /// `--no-early-stop`: simulate every second of `--time`.
    no_early_stop: bool,
}

impl SimArgs {
    /// The overrides given, as matrix axes (name, values of its comma list).
    fn axes(&self) -> Vec<(&'static str, Vec<String>)> {
        [
            ("layout", &self.layout),
            ("log", &self.log),
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
}

/// Split the command line at `--` and read simulate's own options. Accepts
/// `--opt VALUE` and `--opt=VALUE`.
fn parse_args(args: &[OsString]) -> anyhow::Result<(SimArgs, Vec<String>)> {
    let split = args.iter().position(|a| a == "--");
    let (own, fileio_words) = match split {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => anyhow::bail!("simulate: the fileio options go after '--'; {USAGE}"),
    };
    let mut out = SimArgs::default();
    let mut i = 0;
    while i < own.len() {
        let word = own[i]
            .to_str()
            .ok_or_else(|| anyhow::anyhow!("simulate: an option is not UTF-8 text; {USAGE}"))?;
        if word == "--no-early-stop" {
            out.no_early_stop = true;
            i += 1;
            continue;
        }
        let (name, inline) = match word.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (word, None),
        };
        let slot = match name {
            "--system" | "--profile" => None,
            "--layout" => Some(&mut out.layout),
            "--log" => Some(&mut out.log),
            "--link" => Some(&mut out.link),
            "--client" => Some(&mut out.client),
            "--ram" => Some(&mut out.ram),
            "--max-sim-events" => Some(&mut out.max_events),
            "--max-cells" => Some(&mut out.max_cells),
            "--intervals" => Some(&mut out.intervals),
            "--samples" => Some(&mut out.samples),
            "--help" | "-h" | "help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => anyhow::bail!(
                "simulate: unknown option '{other}'; accepted: --system, --profile, --layout, --log, --link, --client, --ram, --max-sim-events, --max-cells, --intervals, --samples, --no-early-stop (fileio options go after '--')"
            ),
        };
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                let v = own
                    .get(i)
                    .ok_or_else(|| anyhow::anyhow!("simulate: {name} needs a value; {USAGE}"))?;
                v.to_str()
                    .ok_or_else(|| {
                        anyhow::anyhow!("simulate: {name}: the value is not UTF-8 text")
                    })?
                    .to_string()
            }
        };
        if value.is_empty() {
            anyhow::bail!("simulate: {name} needs a value; {USAGE}");
        }
        match slot {
            Some(s) => *s = Some(value),
            None if name == "--profile" => out.profile = Some(PathBuf::from(value)),
            None => out.system = Some(PathBuf::from(value)),
        }
        i += 1;
    }
    let mut words = Vec::with_capacity(fileio_words.len() + 1);
    for w in fileio_words {
        words.push(
            w.to_str()
                .ok_or_else(|| anyhow::anyhow!("simulate: a fileio option is not UTF-8 text"))?
                .to_string(),
        );
    }
    // `fileio` names the test for the parser, as on sysbench's command line.
    if words.first().map(String::as_str) != Some("fileio") {
        words.insert(0, "fileio".into());
    }
    Ok((out, words))
}

/// The system file with the command line's overrides applied. Each override
/// replaces one field; [`SystemModel::resolve`] then parses it with the same
/// zfs-model parsers as the file's own value.
fn apply_overrides(model: &mut SystemModel, a: &SimArgs) -> anyhow::Result<()> {
    if let Some(l) = &a.layout {
        model.pool.layout = l.clone();
    }
    if let Some(l) = &a.link {
        model.link.link = l.clone();
    }
    if let Some(l) = &a.log {
        model.log = Some(DeviceSpec::Name(l.clone()));
    }
    if let Some(r) = &a.ram {
        model.server.ram = r.clone();
    }
    if let Some(c) = &a.client {
        model.client.protocol = Protocol::parse(c).ok_or_else(|| {
            anyhow::anyhow!("simulate: --client '{c}': accepted: {}", Protocol::ACCEPTED)
        })?;
    }
    Ok(())
}

impl SimArgs {
    /// The option that replaced the system file's `field`, if one did.
    fn option_for(&self, field: &str) -> Option<&'static str> {
        [
            ("pool.layout", "--layout", self.layout.is_some()),
            ("link.link", "--link", self.link.is_some()),
            ("log", "--log", self.log.is_some()),
            ("server.ram", "--ram", self.ram.is_some()),
        ]
        .into_iter()
        .find(|&(f, _, given)| given && f == field)
        .map(|(_, option, _)| option)
    }
}

/// A refused system: named by the option when the command line set the
/// field, else by the field of the system file.
fn system_error(e: SimError, a: &SimArgs) -> anyhow::Error {
    match &e {
        SimError::Field(f) => match a.option_for(&f.field) {
            Some(option) => anyhow::anyhow!("simulate: {option}: {}", f.problem),
            None => anyhow::anyhow!("simulate: {e}"),
        },
        _ => anyhow::anyhow!("simulate: {e}"),
    }
}

pub fn simulate_main(args: Vec<OsString>) -> anyhow::Result<i32> {
    if args.first().is_some_and(|a| a == "calibrate") {
        return super::calibrate::calibrate_main(args[1..].to_vec());
    }
    if args.first().is_some_and(|a| a == "matrix") {
        return super::simulate_matrix::matrix_main(&args[1..]);
    }
    let (a, words) = parse_args(&args)?;
    let Some(system_path) = &a.system else {
        anyhow::bail!("simulate: --system SYSTEM.toml is required; {USAGE}");
    };
    if a.is_matrix() {
        return matrix_of_overrides(&a, system_path, &words);
    }
    let (spec, settings) = fileio_settings(&words)?;
    let ext = &settings.ext;
    if ext.repeat != 1 {
        anyhow::bail!("simulate: --repeat must be 1 (a prediction is deterministic for its seed)");
    }
    let mut labels = Labels::new();
    for text in &ext.labels {
        merge_labels(&mut labels, parse_labels(text)?)?;
    }
    let budget = match &a.max_events {
        Some(v) => sim::Budget::of(super::options::count_option("--max-sim-events", v)?)
            .map_err(|e| anyhow::anyhow!("simulate: {e}"))?,
        None => sim::Budget::default(),
    };
    let text = read_system_file(system_path)?;
    let mut model = SystemModel::from_toml(&text)
        .map_err(|e| anyhow::anyhow!("simulate: --system {}: {e}", system_path.display()))?;
    // The profile calibrates the system file; an override then replaces a
    // component whole (a --log device keeps its own class's figures).
    let profile = match &a.profile {
        Some(p) => {
            super::calibrate::apply_profile_file(&mut model, p)?;
            Some(super::calibrate::load_profile(p)?)
        }
        None => None,
    };
    apply_overrides(&mut model, &a)?;
    let sys = model.resolve().map_err(|e| system_error(e, &a))?;
    let intervals = interval_samples(&a)?;
    let options = sim::RunOptions {
        budget,
        early_stop: !a.no_early_stop,
    };
    // Destinations are checked before the prediction, as fileio checks them
    // before a run: nothing is written when any of them is refused.
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
    let mut result =
        sim::simulate_run(&spec, &model, &options).map_err(|e| anyhow::anyhow!("simulate: {e}"))?;
    if let Some(samples) = intervals {
        let parallel = std::thread::available_parallelism().map_or(1, usize::from);
        result = sim::uncertainty::with_interval(
            &spec,
            &model,
            profile.as_ref(),
            result,
            &options,
            samples,
            parallel,
        )
        .map_err(|e| anyhow::anyhow!("simulate: {e}"))?;
    }
    result.labels.extend(labels);
    note_budget(&result);
    if let Some(path) = &ext.json_path {
        write_json(path, &result)?;
    }
    if let Some(dir) = &save_dir {
        let store = ResultStore::open(dir.as_path()).context("--save")?;
        let path = store.save(&result).context("--save")?;
        eprintln!("saved {}", path.display());
    }
    match ext.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&result)?),
        Format::Text => print!(
            "{}",
            text_report(&model, &sys, &result, settings.general.percentile)
        ),
    }
    Ok(0)
}

/// `--intervals` and `--samples`: how many samples an interval takes, or
/// `None` for a point prediction only.
fn interval_samples(a: &SimArgs) -> anyhow::Result<Option<usize>> {
    match a.intervals.as_deref() {
        None | Some("on") => {}
        Some("off") => return Ok(None),
        Some(other) => anyhow::bail!("simulate: --intervals={other}: accepted: on, off"),
    }
    Ok(Some(match &a.samples {
        Some(v) => usize::try_from(super::options::count_option("--samples", v)?)
            .ok()
            .filter(|&n| n >= 2)
            .ok_or_else(|| anyhow::anyhow!("simulate: --samples={v}: accepted: 2 or more"))?,
        None => sim::uncertainty::DEFAULT_SAMPLES,
    }))
}

/// `--system FILE`, read as a configuration file (a regular file of at
/// most zfs_model::config_file::CONFIG_LIMIT bytes).
pub(crate) fn read_system_file(path: &Path) -> anyhow::Result<String> {
    zfs_model::config_file::read_config(path)
        .map_err(|e| anyhow::anyhow!("simulate: --system {}: {e}", path.display()))
}

/// A prediction that stopped at its event budget says so on stderr (its
/// JSON notes carry it too).
pub(crate) fn note_budget(result: &fileio::result::RunResult) {
    for w in &result.warnings {
        if w.code == "predicted_budget_reached" || w.code == "predicted_converged" {
            eprintln!("note: {}; {}", w.message, w.hint);
        }
    }
}

/// `--json=FILE`: the prediction, published whole as a new file.
fn write_json(path: &Path, result: &fileio::result::RunResult) -> anyhow::Result<()> {
    let mut doc = serde_json::to_string_pretty(result)?;
    doc.push('\n');
    write_atomically(path, doc.as_bytes(), Existing::Keep)
        .map_err(|e| anyhow::anyhow!("simulate: --json={}: {e}", path.display()))
}

/// The fileio words after `--` (`fileio`, options, `run`): the workload,
/// read with fileio's typed API, and the front end's output options
/// (`--format`, `--json`, `--save`, `--label`, `--repeat`, `--percentile`).
fn fileio_settings(words: &[String]) -> anyhow::Result<(RunSpec, Box<Settings>)> {
    let options = words.get(1..).unwrap_or_default();
    let Some((command, workload)) = options.split_last() else {
        anyhow::bail!("simulate: the fileio words must end in 'run'; {USAGE}");
    };
    match command.as_str() {
        "run" => {}
        "prepare" | "cleanup" => anyhow::bail!(
            "simulate: only 'run' can be predicted (prepare and cleanup touch no simulated files); accepted command: run"
        ),
        _ => anyhow::bail!("simulate: the fileio words must end in 'run'; {USAGE}"),
    }
    let spec = RunSpec::from_words(workload).map_err(|e| anyhow::anyhow!("simulate: {e}"))?;
    // The workload's words passed: what the front end can refuse now is an
    // output option, whose refusal fileio gives as its printed lines.
    match check_command_line(words) {
        Ok(CommandLine::Command(s)) => Ok((spec, s)),
        Ok(_) => anyhow::bail!("simulate: the fileio words must end in 'run'; {USAGE}"),
        Err(f) => anyhow::bail!("simulate: {}", f.summary()),
    }
}

/// `tankbench simulate` with comma lists: every override given becomes an
/// axis (first given, first column), the fileio words the workload; the
/// output options (`--format`, `--save`, `--label`) are fileio's, after `--`.
fn matrix_of_overrides(a: &SimArgs, system_path: &Path, words: &[String]) -> anyhow::Result<i32> {
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
    let text = read_system_file(system_path)?;
    let max_cells = match &a.max_cells {
        Some(v) => super::options::count_option("--max-cells", v)?,
        None => sim::limits::DEFAULT_MAX_CELLS,
    };
    let events = a
        .max_events
        .as_deref()
        .map(|v| super::options::count_option("--max-sim-events", v))
        .transpose()?;
    // The workload: the fileio words without the program's and output
    // options, which the matrix handles.
    let workload: Vec<String> = words
        .iter()
        .skip(1)
        .filter(|w| {
            w.as_str() != "run"
                && !["--format", "--save", "--label"]
                    .iter()
                    .any(|o| w.as_str() == *o || w.starts_with(&format!("{o}=")))
        })
        .cloned()
        .collect();
    let mut m = sim::matrix::MatrixSpec::from_system_text(&text, workload, &a.axes(), max_cells)
        .map_err(|e| match e {
            SimError::Limit(limit) => anyhow::anyhow!("simulate: {limit}"),
            // An axis here is an option: name it as typed.
            SimError::Matrix(MatrixError::AxisValue {
                axis,
                value,
                problem,
            }) => anyhow::anyhow!("simulate: --{axis} '{value}': {problem}"),
            SimError::Matrix(MatrixError::Axis(AxisError::NoValues { axis })) => {
                anyhow::anyhow!("simulate: --{axis}: values must not be empty")
            }
            SimError::Matrix(m) => {
                anyhow::anyhow!("simulate: --system {}: matrix: {m}", system_path.display())
            }
            SimError::Field(f) => {
                anyhow::anyhow!("simulate: --system {}: {f}", system_path.display())
            }
            e => anyhow::anyhow!("simulate: --system {}: {e}", system_path.display()),
        })?;
    if let Some(path) = &a.profile {
        m.profile = Some(super::calibrate::load_profile(path)?);
        m.cells()
            .map_err(|e| anyhow::anyhow!("simulate: --profile {}: {e}", path.display()))?;
    }
    run_matrix(
        &m,
        &MatrixOutput {
            format: Some(match ext.format {
                Format::Json => TableFormat::Json,
                Format::Text => TableFormat::Text,
            }),
            save: ext.save.clone(),
            labels,
            events,
        },
    )
}

/// The text report of a prediction: a header naming the system, then the
/// sections of sysbench 1.0.20's cumulative report (file_report_cumulative
/// in sb_fileio.c, report_cumulative in src/sysbench.c) in their layout,
/// computed from the predicted result, then tankbench's latency table by
/// operation. `percentile` is sysbench's `--percentile` (0: disabled).
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
    let top: Vec<String> = p
        .sensitivity
        .iter()
        .take(3)
        .map(|x| {
            format!(
                "{} (rank correlation {:+.2})",
                x.parameter, x.rank_correlation
            )
        })
        .collect();
    if !top.is_empty() {
        s.push_str(&format!("Measure this first: {}\n", top.join(", ")));
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
    let log = match &model.log {
        None => "none".to_string(),
        Some(DeviceSpec::Name(n)) => n.trim().to_string(),
        Some(DeviceSpec::Model(_)) if sys.log.is_none() => "none".to_string(),
        Some(DeviceSpec::Model(_)) => "custom model".to_string(),
    };
    let link = match sys.link {
        Some(l) => l.name(),
        None => "none (local)".to_string(),
    };
    format!(
        "PREDICTION (simulated, not measured) for system '{}': layout {}, log {}, link {}, client {}",
        sys.name,
        sys.shape.name(),
        log,
        link,
        sys.protocol.name()
    )
}
