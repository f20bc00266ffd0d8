//! `tankbench plan`: parse the command line into a `PlanRequest`, run the
//! planner of the `zfs-model` crate and print its table, walkthrough or JSON.
//! Every figure and every rule lives in the library.

use anyhow::{anyhow, Context};
use clap::{Parser, ValueEnum};

use super::choices;
use report::plan::{self as present, ColumnChoice};
use zfs_model::capacity::CapacityOptions;
use zfs_model::disk::{total_disks, DiskClass, DiskGroup, OsPartitioning, PerfOverrides};
use zfs_model::layout::{Layout, Shape};
use zfs_model::network::{Link, Protocol};
use zfs_model::perf::LogDevice;
use zfs_model::plan::{plan, PlanRequest};
use zfs_model::rules::RuleSet;
use zfs_model::units::{parse_block_size, parse_size, SizeMeaning, KIB, MIB};
use zfs_model::workload::Workload;

/// When the sync columns carry an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Intervals {
    /// On for the layouts named with --layout or --explain, off when every
    /// layout is enumerated (each interval costs its samples' simulations).
    Auto,
    On,
    Off,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The table, the recommendation and the assumptions.
    Text,
    /// The table as GitHub Markdown (with its notes).
    Markdown,
    /// The table as RFC 4180 CSV (ranges as low/high columns).
    Csv,
    /// The whole plan as JSON.
    Json,
}

/// Every sensible ZFS layout for a set of disks, with capacity, risk and speed, ranked.
///
/// The Sync 4K columns are predicted by the simulator on every layout
/// (docs/prediction.md); --explain walks through one layout's capacity.
#[derive(Debug, Parser)]
pub(crate) struct PlanArgs {
    /// Disk groups: COUNTxSIZE[:CLASS], comma-separated or repeated (24x8TB, 12x8TB,12x10TB).
    /// TB/GB sizes are marketed capacities (IDEMA rule); TiB/GiB or bytes are exact.
    #[arg(long, value_name = "GROUPS", required = true, value_delimiter = ',')]
    disks: Vec<String>,

    /// Disk class of the disks (an alias or any case is taken too).
    #[arg(long, value_name = "CLASS", default_value = "hdd-7200", value_parser = disk_classes())]
    class: String,

    /// Override the class's annualised failure rate, percent per year.
    #[arg(long, allow_negative_numbers = true, value_name = "PCT")]
    afr: Option<f64>,
    /// Override the disk's sustained transfer rate, MB/s.
    #[arg(long, allow_negative_numbers = true, value_name = "MB/S")]
    disk_mbps: Option<f64>,
    /// Override the disk's small random IOPS.
    #[arg(long, allow_negative_numbers = true, value_name = "IOPS")]
    disk_iops: Option<f64>,
    /// Override the disk's small write + cache flush time, ms (kept for scripts; no figure uses it: Sync 4K is simulated).
    #[arg(long, allow_negative_numbers = true, value_name = "MS")]
    disk_sync_ms: Option<f64>,
    /// Override unrecoverable read errors per bit (e.g. 1e-15).
    #[arg(long, allow_negative_numbers = true, value_name = "RATE")]
    uer: Option<f64>,

    /// Evaluate only these layouts (repeatable): COUNTxVDEV, e.g. 3xraidz2-8, 12xmirror-2.
    #[arg(long = "layout", value_name = "LAYOUT", value_delimiter = ',')]
    layouts: Vec<String>,
    /// Walk through the capacity arithmetic of one layout step by step.
    #[arg(long, value_name = "LAYOUT")]
    explain: Option<String>,
    /// Hot spares to keep (at least).
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "N",
        default_value_t = 0
    )]
    spares: u32,
    /// Enumerated layouts may leave this many extra disks as spares.
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "N",
        default_value_t = 2
    )]
    max_idle: u32,
    /// Also list stripes (no redundancy).
    #[arg(long)]
    stripes: bool,

    /// ZFS rule set (also current = openzfs-2.1, zfs-fuse = pool-v23).
    #[arg(long, value_name = "RULES", default_value = "openzfs-2.1",
          value_parser = choices::offered(choices::table(&RuleSet::ALL, RuleSet::name, RuleSet::describe)))]
    rules: String,
    /// Sector size exponent (12 = 4 KiB sectors).
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "N",
        default_value_t = 12
    )]
    ashift: u32,
    /// How the OS partitions each disk: linux, linux-4kn, none, truenas-core, freebsd-swap=GiB.
    #[arg(long = "os", value_name = "PARTITIONING", default_value = "linux")]
    partitioning: String,
    /// Dataset recordsize (K = KiB, 2^10 bytes).
    #[arg(long, value_name = "SIZE", default_value = "128K")]
    recordsize: String,
    /// zvol volblocksize (16K since OpenZFS 2.2, 8K before; K = KiB).
    #[arg(long, value_name = "SIZE", default_value = "16K")]
    volblocksize: String,

    /// Separate intent-log device (SLOG): SIZE or COUNTxSIZE for a mirror, e.g. 10GB
    /// (GB = 10^9 bytes, as sold; G or GiB = 2^30).
    #[arg(long, value_name = "SIZE")]
    log: Option<String>,
    /// Class of the log device.
    #[arg(long, value_name = "CLASS", default_value = "ssd-sata", value_parser = disk_classes())]
    log_class: String,
    /// Client link: [COUNTx]SPEED, e.g. 2x10G (LACP), 1G, or none.
    #[arg(long, value_name = "LINK", default_value = "none")]
    link: String,
    /// Client protocol [default: nfs with a link, else local].
    #[arg(long, value_name = "PROTOCOL",
          value_parser = choices::offered(choices::table(&Protocol::ALL, Protocol::name, Protocol::describe)))]
    protocol: Option<String>,
    /// Workload to rank by.
    #[arg(long, value_name = "WORKLOAD", default_value = "sync-4k",
          value_parser = choices::offered(choices::table(&Workload::ALL, Workload::name, Workload::describe)))]
    workload: String,
    /// Concurrent synchronous writers [default: 4, or the baseline's].
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    threads: Option<u32>,
    /// Pool fill when a disk fails, percent (drives resilver time).
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "PCT",
        default_value_t = 80.0
    )]
    fill: f64,
    /// Hours to get a replacement disk in when there is no hot spare.
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "HOURS",
        default_value_t = 24.0
    )]
    replace_hours: f64,
    /// fileio options of the workload whose figures the Sync 4K columns
    /// predict (the simulator runs it on every layout), and print its table;
    /// default: the reference rndrw 4K fsync-all run, first 1000 events.
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
    fileio: Option<String>,

    /// An 80 % interval on the sync columns (Commit ms, Sync writes/s), from
    /// samples of the simulator's uncertain parameters: auto = on for
    /// --layout/--explain, off for an enumerated plan.
    #[arg(long, value_enum, value_name = "auto|on|off", default_value_t = Intervals::Auto)]
    intervals: Intervals,
    /// Samples each interval takes.
    #[arg(long, value_name = "N", value_parser = super::options::at_least_two_samples(),
          help = format!("Samples each interval takes, 2 or more [default: {}]",
                         sim::uncertainty::DEFAULT_SAMPLES))]
    samples: Option<usize>,

    /// Server RAM (bounds the sync data a log device can hold; the ARC of the predictions);
    /// G or GiB = 2^30 bytes, GB = 10^9.
    #[arg(long, value_name = "SIZE", default_value = "64GiB")]
    ram: String,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Rows to show in the table (0 = all; default: all up to 30 layouts, else 15).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    top: Option<usize>,
    /// Every column, with the ranges of the estimates (wider than 120 columns).
    #[arg(long, conflicts_with = "columns")]
    wide: bool,
    /// Also draw usable space against sync writes/s per layout, as SVG or
    /// PNG (by the name's ending); replaces only a chart tankbench wrote.
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    chart: Option<std::path::PathBuf>,
    /// These columns, in this order (comma-separated keys: rank, layout,
    /// spares, size, avail, usable, efficiency, survives, loss, resilver,
    /// read, write, seq, commit, sync_rate, commit_log, sync_rate_log, score).
    #[arg(long, value_name = "KEYS", value_parser = parse_columns)]
    columns: Option<ColumnChoice>,

    /// A measured run of the box at hand (a tankbench result, or a fio JSON
    /// or sysbench text report): every Sync figure is its measured figure
    /// times the simulated change from its system to each layout; its
    /// workload is the plan's unless --fileio is given. See docs/what-if.md.
    /// Given more than once: runs of one configuration, each figure their
    /// median.
    #[arg(long, value_name = "RUN")]
    baseline: Vec<std::path::PathBuf>,
    /// With --baseline: the system it ran on [default: the one its ZFS
    /// facts describe].
    #[arg(long, value_name = "SYSTEM.toml", requires = "baseline")]
    system: Option<std::path::PathBuf>,
}

/// `--class` and `--log-class`: the classes of zfs_model's table, read by
/// `DiskClass::parse` (which also takes its aliases).
fn disk_classes() -> choices::Choice<String> {
    choices::offered(choices::table(
        &DiskClass::ALL,
        DiskClass::name,
        DiskClass::describe,
    ))
}

/// Writers when `--threads` is not given.
const DEFAULT_THREADS: u32 = 4;

/// `--columns`: keys from report::plan::COLUMNS.
fn parse_columns(text: &str) -> Result<ColumnChoice, String> {
    ColumnChoice::parse_keys(text)
}

/// The disk groups of `--disks`, with `--class` and the per-disk overrides
/// (`--afr`, `--disk-mbps`, ...) applied; errors name their option.
fn disk_groups(args: &PlanArgs) -> anyhow::Result<Vec<DiskGroup>> {
    let class = DiskClass::parse(&args.class).context("--class")?;
    let percent = |name: &str, value: f64, max: f64| -> anyhow::Result<f64> {
        if value.is_finite() && value > 0.0 && value <= max {
            Ok(value)
        } else {
            Err(anyhow!(
                "{name} {value}: must be greater than 0 and at most {max}"
            ))
        }
    };
    let overrides = PerfOverrides {
        afr: args
            .afr
            .map(|v| percent("--afr", v, 100.0))
            .transpose()?
            .map(|p| p / 100.0),
        seq_mb_s: args
            .disk_mbps
            .map(|v| percent("--disk-mbps", v, 1e6))
            .transpose()?,
        random_iops: args
            .disk_iops
            .map(|v| percent("--disk-iops", v, 1e8))
            .transpose()?,
        sync_write_ms: args
            .disk_sync_ms
            .map(|v| percent("--disk-sync-ms", v, 1e4))
            .transpose()?,
        uer_per_bit: args.uer.map(|v| percent("--uer", v, 1e-6)).transpose()?,
    };
    let groups = args
        .disks
        .iter()
        .filter(|g| !g.trim().is_empty())
        .map(|g| DiskGroup::parse(g, class, &overrides).context("--disks"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // Every error names the option and what was typed for it.
    let disks_text = args.disks.join(",");
    if groups.is_empty() {
        return Err(anyhow!(
            "--disks: '{disks_text}': no disks given; describe them as COUNTxSIZE, e.g. 24x8TB"
        ));
    }
    total_disks(&groups).context("--disks")?;
    Ok(groups)
}

/// Turn what was typed into the library's request; every error names its option.
fn build_request(args: &PlanArgs) -> anyhow::Result<PlanRequest> {
    let groups = disk_groups(args)?;
    let mut layouts = args
        .layouts
        .iter()
        .map(|l| Shape::parse(l).context("--layout"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(explain) = &args.explain {
        layouts = vec![Shape::parse(explain).context("--explain")?];
    }
    if !(9..=16).contains(&args.ashift) {
        return Err(anyhow!(
            "--ashift {}: accepted values are 9 to 16",
            args.ashift
        ));
    }
    // A layout the user named must fit the disks; say which option it came from.
    let option = if args.explain.is_some() {
        "--explain"
    } else {
        "--layout"
    };
    for shape in &layouts {
        Layout::fit(*shape, &groups, args.spares).context(option)?;
    }
    let link = Link::parse(&args.link).context("--link")?;
    let protocol = match &args.protocol {
        Some(p) => Protocol::parse(p).context("--protocol")?,
        None if link.is_some() => Protocol::Nfs,
        None => Protocol::Local,
    };
    let log = match &args.log {
        Some(text) => {
            let log_class = DiskClass::parse(&args.log_class).context("--log-class")?;
            Some(LogDevice::parse(text, log_class, log_class.default_perf()).context("--log")?)
        }
        None => None,
    };
    if !(args.fill > 0.0 && args.fill <= 100.0) {
        return Err(anyhow!(
            "--fill {}: a percentage greater than 0 and at most 100",
            args.fill
        ));
    }
    if !(args.replace_hours >= 0.0 && args.replace_hours.is_finite()) {
        return Err(anyhow!(
            "--replace-hours {}: hours, 0 or more",
            args.replace_hours
        ));
    }
    let threads = args.threads.unwrap_or(DEFAULT_THREADS);
    if threads == 0 {
        return Err(anyhow!("--threads 0: at least one writer"));
    }
    Ok(PlanRequest {
        groups,
        spares: args.spares,
        max_extra_spares: args.max_idle,
        include_stripes: args.stripes,
        layouts,
        capacity: CapacityOptions {
            rules: RuleSet::parse(&args.rules).context("--rules")?,
            ashift: args.ashift,
            partitioning: OsPartitioning::parse(&args.partitioning).context("--os")?,
        },
        recordsize: parse_block_size(&args.recordsize, 512, 16 * MIB).context("--recordsize")?,
        volblocksize: parse_block_size(&args.volblocksize, 512, 128 * KIB)
            .context("--volblocksize")?,
        log,
        link,
        protocol,
        workload: Workload::parse(&args.workload).context("--workload")?,
        threads,
        fill: args.fill / 100.0,
        replace_hours: args.replace_hours,
        ram_bytes: parse_size(&args.ram, SizeMeaning::Exact).context("--ram")?,
    })
}

pub(crate) fn run(parsed: &PlanArgs) -> anyhow::Result<i32> {
    if let Some(path) = &parsed.chart {
        super::report::check_chart_name("--chart", path)?;
    }
    let (mut warnings, output, plan) = render(parsed)?;
    if parsed.disk_sync_ms.is_some() {
        warnings.insert(0, "--disk-sync-ms changes no figure: the Sync 4K columns are simulated with the disk class's model (zfs_model::diskmodel; docs/prediction.md)".into());
    }
    if let Some(path) = &parsed.chart {
        let svg = report::plan_chart::plan_chart(&plan)
            .context("--chart: no layout has a predicted sync rate to draw (the table says why)")?;
        super::report::write_chart("--chart", path, &svg, 2.0)?;
    }
    for warning in &warnings {
        super::write_stderr_line(&format!("tankbench: warning: {warning}"));
    }
    super::write_stdout(output.as_bytes())?;
    Ok(0)
}

/// The plan's performance model: the simulator outright, or anchored to a
/// measured baseline (`--baseline`).
enum Performance {
    Outright(sim::plan_model::SimPerformance),
    Anchored(Box<sim::baseline::plan::AnchoredPlan>),
}

impl Performance {
    fn model(&self) -> &dyn zfs_model::perf::PerformanceModel {
        match self {
            Performance::Outright(m) => m,
            Performance::Anchored(a) => a.as_ref(),
        }
    }
}

/// `model` anchored to the measured run `baseline`, whose system is
/// `--system` or its ZFS facts'. What the plan leaves at its defaults (the
/// disk class, link, protocol, RAM, recordsize) stays the baseline's.
fn anchored_model(
    parsed: &PlanArgs,
    baseline: sim::baseline::Baseline,
    model: sim::plan_model::SimPerformance,
) -> anyhow::Result<sim::baseline::plan::AnchoredPlan> {
    use super::what_if as w;
    let (text, dir, option) = w::baseline_system("plan", &baseline, parsed.system.as_deref())?;
    let system =
        sim::SystemModel::from_toml_in(&text, &dir).map_err(|e| anyhow!("plan: {option}: {e}"))?;
    let defaults = PlanArgs::try_parse_from(["tankbench plan", "--disks", "1x1TB"])
        .map_err(|e| anyhow!("plan: {e}"))?;
    let changes = sim::baseline::plan::PlanChanges {
        disk_class: parsed.class != defaults.class,
        link: parsed.link != defaults.link,
        protocol: parsed.protocol.is_some(),
        ram: parsed.ram != defaults.ram,
        recordsize: parsed.recordsize != defaults.recordsize,
    };
    sim::baseline::plan::AnchoredPlan::new(model, baseline, system, changes)
        .map_err(|e| w::baseline_error("plan", &e))
}

/// The simulator running the plan's workload (`--fileio`, else the
/// baseline's, else the reference run), with intervals when asked,
/// anchored to the baseline when there is one.
fn performance(
    parsed: &PlanArgs,
    baseline: Option<sim::baseline::Baseline>,
    intervals: bool,
) -> anyhow::Result<Performance> {
    let words: Vec<String> = match (&parsed.fileio, &baseline) {
        (None, Some(b)) => b.workload_words(),
        (text, _) => text
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    };
    let mut model = sim::plan_model::SimPerformance::new(&words)
        .map_err(|e| anyhow!("--fileio '{}': {e}", words.join(" ")))?;
    if intervals {
        let samples = parsed.samples.unwrap_or(sim::uncertainty::DEFAULT_SAMPLES);
        model = model
            .with_intervals(samples)
            .map_err(|e| anyhow!("--fileio '{}': {e}", words.join(" ")))?;
    }
    Ok(match baseline {
        Some(b) => Performance::Anchored(Box::new(anchored_model(parsed, b, model)?)),
        None => Performance::Outright(model),
    })
}

/// Everything `plan` does after parsing: the warnings for stderr, the text
/// or JSON for stdout and the plan itself (kept apart from printing so tests
/// can drive it).
fn render(parsed: &PlanArgs) -> anyhow::Result<(Vec<String>, String, zfs_model::plan::Plan)> {
    let baseline = (!parsed.baseline.is_empty())
        .then(|| super::what_if::load_baselines("plan", &parsed.baseline))
        .transpose()?;
    let mut request = build_request(parsed)?;
    if let (Some(b), None) = (&baseline, parsed.threads) {
        request.threads = b.measured.workload.threads;
    }
    let explain_shape = request
        .layouts
        .first()
        .copied()
        .filter(|_| parsed.explain.is_some());
    let intervals = match parsed.intervals {
        Intervals::On => true,
        Intervals::Off => false,
        Intervals::Auto => !request.layouts.is_empty(),
    };
    let performance = performance(parsed, baseline, intervals)?;
    // What is left to fail here depends on the disks and the spares asked for
    // (no layout fits); name both with what was typed.
    let plan = plan(request, performance.model()).with_context(|| {
        format!(
            "--disks '{}' with --spares {}",
            parsed.disks.join(","),
            parsed.spares
        )
    })?;
    let baseline_note = match &performance {
        Performance::Anchored(a) => Some(a.baseline_note()),
        Performance::Outright(_) => None,
    };
    let mut workload_table = sim::plan_model::workload_table(&plan);
    if let Performance::Anchored(a) = &performance {
        a.mark_rows(&mut workload_table);
    }
    let mut warnings = plan.warnings.clone();
    if let (false, Some(n)) = (intervals, parsed.samples) {
        warnings.push(format!(
            "--samples {n} changes nothing: this plan has no intervals (--intervals=on asks for them)"
        ));
    }

    if let Some(shape) = explain_shape {
        let explain_text = parsed.explain.as_deref().unwrap_or_default();
        let entry = plan.entries.first().with_context(|| {
            format!("--explain: '{explain_text}': the layout could not be evaluated")
        })?;
        let layout =
            Layout::fit(shape, &plan.request.groups, plan.request.spares).context("--explain")?;
        let output = match parsed.format {
            Format::Json => {
                let steps = zfs_model::explain::explain_capacity(
                    &plan.request.groups,
                    &layout,
                    &entry.capacity,
                );
                let doc = serde_json::json!({
                    "schema_version": plan.schema_version,
                    "layout": entry.layout,
                    "steps": steps,
                    "entry": entry,
                });
                format!("{}\n", serde_json::to_string_pretty(&doc)?)
            }
            Format::Text => present::explain(&plan, entry, &layout),
            Format::Markdown | Format::Csv => {
                anyhow::bail!("--format: with --explain, accepted: text, json")
            }
        };
        return Ok((warnings, output, plan));
    }

    let choice = if parsed.wide {
        ColumnChoice::Wide
    } else {
        parsed.columns.clone().unwrap_or_default()
    };
    // A table of up to 30 layouts still reads well; beyond that the top of
    // the ranking is what matters.
    let top = parsed
        .top
        .unwrap_or(if plan.entries.len() <= 30 { 0 } else { 15 });
    let output = match parsed.format {
        Format::Json => format!("{}\n", serde_json::to_string_pretty(&plan)?),
        Format::Markdown => present::table(&plan, top, &choice).to_markdown(),
        Format::Csv => present::table(&plan, top, &choice).to_csv(),
        Format::Text => {
            let screen = super::stdout_screen();
            let mut text = format!(
                "{}{}",
                present::table(&plan, top, &choice).to_screen(&screen),
                present::summary(&plan, top, screen.width)
            );
            if let Some(note) = &baseline_note {
                text.push_str(&format!("\n{note}\n"));
            }
            if parsed.fileio.is_some() || baseline_note.is_some() {
                text.push_str("\nPredicted workload by layout:\n");
                text.push_str(&workload_table.to_screen(&screen));
            }
            text
        }
    };
    Ok((warnings, output, plan))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tankbench plan WORDS` through the whole command line, clap's
    /// refusals included.
    fn plan_main(words: Vec<std::ffi::OsString>) -> anyhow::Result<i32> {
        let program = ["tankbench", "plan"].map(std::ffi::OsString::from);
        crate::cmd::dispatch(program.into_iter().chain(words).collect())
    }

    fn request(args: &[&str]) -> anyhow::Result<PlanRequest> {
        let parsed = PlanArgs::try_parse_from(
            std::iter::once("tankbench plan").chain(args.iter().copied()),
        )?;
        build_request(&parsed)
    }

    #[test]
    fn the_reference_command_builds_the_reference_request() {
        let r = request(&["--disks", "24x8TB", "--log", "10GB", "--link", "2x10G"]).unwrap();
        assert_eq!(r.disk_count(), 24);
        assert_eq!(r.groups[0].bytes, 8_001_563_222_016);
        assert_eq!(
            r.log.as_ref().map(|l| (l.bytes, l.devices)),
            Some((10_000_000_000, 1))
        );
        assert_eq!(r.link.map(|l| (l.members, l.gbit_per_s)), Some((2, 10.0)));
        assert_eq!(r.protocol, Protocol::Nfs);
        assert_eq!(r.capacity.rules, RuleSet::OpenZfs21);
        assert_eq!((r.recordsize, r.volblocksize), (128 * KIB, 16 * KIB));
        assert!(r.layouts.is_empty());
    }

    #[test]
    fn explain_and_layout_select_shapes() {
        let r = request(&["--disks", "24x8TB", "--layout", "1xraidz3-24,3xraidz2-8"]).unwrap();
        assert_eq!(r.layouts.len(), 2);
        let r = request(&["--disks", "24x8TB", "--explain", "2xraidz2-12"]).unwrap();
        assert_eq!(r.layouts, vec![Shape::parse("2xraidz2-12").unwrap()]);
    }

    #[test]
    fn bad_input_names_the_option_and_the_value() {
        // (arguments, option, the bad value as the message must show it)
        let cases: [(&[&str], &str, &str); 27] = [
            (&["--disks", "0x8TB"], "--disks", "0x8TB"),
            (&["--disks", "10001x8TB"], "--disks", "10001x8TB"),
            (&["--disks", "6000x8TB,6000x4TB"], "--disks", "6000x8TB"),
            (&["--disks", ","], "--disks", "','"),
            (&["--disks", "x8TB"], "--disks", "x8TB"),
            (&["--disks", "24x8XB"], "--disks", "8XB"),
            (&["--disks", "24x2PiB"], "--disks", "24x2PiB"),
            (&["--disks", "24x8TB:tape"], "--disks", "tape"),
            (
                &["--disks", "24x8TB", "--class", "floppy"],
                "--class",
                "floppy",
            ),
            (&["--disks", "24x8TB", "--afr", "101"], "--afr", "101"),
            (&["--disks", "24x8TB", "--uer", "0"], "--uer", "0"),
            (
                &["--disks", "24x8TB", "--layout", "4xraidz2-8"],
                "--layout",
                "4xraidz2-8",
            ),
            (
                &["--disks", "24x8TB", "--layout", "3xmirror-9"],
                "--layout",
                "3xmirror-9",
            ),
            (
                &["--disks", "24x8TB", "--explain", "raidz9-3"],
                "--explain",
                "raidz9-3",
            ),
            (
                &["--disks", "24x8TB", "--rules", "solaris"],
                "--rules",
                "solaris",
            ),
            (
                &["--disks", "24x8TB", "--recordsize", "100K"],
                "--recordsize",
                "100K",
            ),
            (
                &["--disks", "24x8TB", "--volblocksize", "1G"],
                "--volblocksize",
                "1G",
            ),
            (&["--disks", "24x8TB", "--ashift", "20"], "--ashift", "20"),
            (&["--disks", "24x8TB", "--os", "windows"], "--os", "windows"),
            (&["--disks", "24x8TB", "--fill", "0"], "--fill", "0"),
            (
                &["--disks", "24x8TB", "--replace-hours", "-1"],
                "--replace-hours",
                "-1",
            ),
            (&["--disks", "24x8TB", "--threads", "0"], "--threads", "0"),
            (&["--disks", "24x8TB", "--link", "3x7Q"], "--link", "3x7Q"),
            (
                &["--disks", "24x8TB", "--protocol", "afp"],
                "--protocol",
                "afp",
            ),
            (&["--disks", "24x8TB", "--log", "0x10GB"], "--log", "0x10GB"),
            (&["--disks", "24x8TB", "--log", "9x10GB"], "--log", "9x10GB"),
            (&["--disks", "24x8TB", "--ram", "lots"], "--ram", "lots"),
        ];
        for (args, option, value) in cases {
            let message = format!("{:#}", request(args).unwrap_err());
            assert!(message.starts_with(option), "{args:?}: {message}");
            assert!(message.contains(value), "{args:?}: {message}");
            assert!(!message.contains('\n'), "{args:?}: {message}");
        }
    }

    #[test]
    fn a_plan_no_layout_fits_names_the_disks_and_spares() {
        for args in [
            vec!["--disks", "1x8TB"],
            vec!["--disks", "24x8TB", "--spares", "23"],
        ] {
            let err = plan_main(args.iter().map(|s| (*s).into()).collect()).unwrap_err();
            let message = format!("{err:#}");
            assert!(
                message.starts_with(&format!("--disks '{}'", args[1]))
                    && message.contains("--spares"),
                "{message}"
            );
        }
    }

    mod arbitrary_arguments {
        use super::super::*;
        use proptest::prelude::*;

        /// A value as typed: a plausible one for the option, a near miss, or
        /// arbitrary text.
        fn value(plausible: &'static [&'static str]) -> impl Strategy<Value = String> {
            prop_oneof![
                4 => prop::sample::select(plausible).prop_map(str::to_string),
                1 => "[-0-9.xX:,]{0,12}",
                1 => "[0-9]{1,25}[A-Za-z]{0,3}",
                1 => ".{0,12}",
            ]
        }

        fn option() -> impl Strategy<Value = Vec<String>> {
            let options: Vec<(&'static str, &'static [&'static str])> = vec![
                (
                    "--disks",
                    &[
                        "24x8TB",
                        "12x8TB,12x4TB",
                        "0x8TB",
                        "10000x8TB",
                        "3x1.92TB:ssd-sata",
                        "2x64MiB",
                        ",",
                    ],
                ),
                ("--class", &["hdd-5400", "nvme", "tape"]),
                ("--afr", &["1.5", "0", "-3", "NaN", "inf", "100"]),
                ("--disk-mbps", &["200", "0", "1e300"]),
                ("--disk-iops", &["150", "-1"]),
                ("--disk-sync-ms", &["9", "1e5"]),
                ("--uer", &["1e-15", "1"]),
                (
                    "--layout",
                    &[
                        "3xraidz2-8",
                        "12xmirror",
                        "4xraidz2-8",
                        "9999xmirror-8",
                        "raidz3-255",
                        "24xstripe",
                    ],
                ),
                ("--explain", &["3xraidz2-8", "1xraidz3-24", "mirror-9"]),
                ("--spares", &["0", "2", "23", "4294967295", "-1"]),
                ("--max-idle", &["0", "4294967295"]),
                (
                    "--rules",
                    &["pool-v23", "openzfs-0.8", "zol-0.6.4", "solaris"],
                ),
                ("--ashift", &["9", "12", "16", "17"]),
                (
                    "--os",
                    &[
                        "none",
                        "linux-4kn",
                        "freebsd-swap=4294967295",
                        "freebsd-swap=8",
                    ],
                ),
                ("--recordsize", &["4K", "1M", "16M", "3K"]),
                ("--volblocksize", &["8K", "128K", "256K"]),
                ("--log", &["10GB", "2x10GB", "8x1PiB", "9x10GB", "64MiB"]),
                ("--log-class", &["nvme-noplp", "hdd-7200"]),
                (
                    "--link",
                    &["2x10G", "1G", "none", "4294967295x800G", "0.1G"],
                ),
                ("--protocol", &["nfs", "iscsi", "smb", "local"]),
                ("--workload", &["sync-4k", "sequential", "vm"]),
                ("--threads", &["1", "4294967295", "0"]),
                ("--fill", &["80", "100", "0.001", "101"]),
                ("--replace-hours", &["0", "24", "1e300", "-1"]),
                ("--ram", &["64GiB", "1B", "16EiB", "18446744073709551615"]),
                ("--format", &["text", "json", "xml"]),
                ("--top", &["0", "1", "18446744073709551615"]),
            ];
            prop::sample::select(options).prop_flat_map(|(name, plausible)| {
                (Just(name), value(plausible)).prop_map(|(name, v)| vec![name.to_string(), v])
            })
        }

        fn arguments() -> impl Strategy<Value = Vec<String>> {
            (
                value(&["24x8TB", "60x16TB", "6x8TB", "10000x2TB", "2x8TB,1x4TB"]),
                prop::collection::vec(option(), 0..6),
                any::<bool>(),
            )
                .prop_map(|(disks, rest, stripes)| {
                    let mut words = vec!["--disks".to_string(), disks];
                    words.extend(rest.into_iter().flatten());
                    if stripes {
                        words.push("--stripes".into());
                    }
                    words
                })
        }

        proptest! {
            // Each case may plan up to 10,000 disks: few cases keep CI quick.
            #![proptest_config(ProptestConfig::with_cases(96))]

            #[test]
            fn plan_answers_or_fails_in_one_line_naming_the_option(words in arguments()) {
                let parsed = PlanArgs::try_parse_from(
                    std::iter::once("tankbench plan".to_string()).chain(words.clone()),
                );
                // clap's own errors are made one line by cli::run.
                let Ok(parsed) = parsed else { return Ok(()) };
                match render(&parsed) {
                    Ok((_, output, _)) => prop_assert!(!output.is_empty()),
                    Err(e) => {
                        let message = format!("{e:#}");
                        prop_assert!(message.starts_with("--"), "{words:?}: {message}");
                        prop_assert!(!message.contains('\n'), "{words:?}: {message}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_largest_accepted_disk_count_plans() {
        // 10,000 disks: the risk model's failure counts used to overflow from
        // ~150 disks on, and took time quadratic in the vdevs.
        let all = ["--disks", "10000x8TB", "--stripes", "--max-idle", "10000"];
        let model = sim::plan_model::SimPerformance::new(&[]).unwrap();
        let plan = plan(request(&all).unwrap(), &model).unwrap();
        // Stripes, 2 mirrors and raidz1/2/3 at every width up to 255.
        assert_eq!(plan.entries.len(), 1 + 2 + 253 + 252 + 251);
        assert!(plan.entries.iter().all(|e| e
            .reliability
            .kill_probability
            .iter()
            .all(|(_, p)| (0.0..=1.0).contains(p))));
    }

    #[test]
    fn clap_errors_become_one_line() {
        let err = plan_main(vec![
            "--disks".into(),
            "24x8TB".into(),
            "--threads".into(),
            "x".into(),
        ])
        .unwrap_err();
        let message = format!("{err:#}");
        assert!(
            message.contains("--threads") && !message.contains('\n'),
            "{message}"
        );
        // Negative numbers reach the option's own check instead of being
        // taken for an unknown flag.
        for option in ["--top", "--spares", "--threads", "--replace-hours"] {
            let err = plan_main(vec![
                "--disks".into(),
                "24x8TB".into(),
                option.into(),
                "-1".into(),
            ])
            .unwrap_err();
            let message = format!("{err:#}");
            assert!(
                message.contains(option) && message.contains("-1"),
                "{message}"
            );
        }
        let err = plan_main(vec![]).unwrap_err();
        assert!(format!("{err:#}").contains("--disks"), "{err:#}");
    }
}
