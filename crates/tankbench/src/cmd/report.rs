//! `tankbench results [import] | compare | report | chart`: argument parsing and output
//! only; the store, statistics, tables and charts live in the `report` crate.

use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use fileio::result::{LatencyKey, RunResult};
use report::charts::{
    latency_chart, latency_ops, operations_chart, throughput_chart, timeline_chart, ChartKind,
};
use report::compare::{Comparison, DEFAULT_ALPHA};
use report::group::Grouping;
use report::html::{render_html, ReportOptions};
use report::import::import_file;
use report::labels::{merge_labels, parse_labels, Labels};
use report::output::write_output;
use report::select::{select, select_all, Selection};
use report::store::{ResultStore, SaveOnce, Skipped, DEFAULT_DIR};
use report::table::{grouped_table, runs_table, Table};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TableFormat {
    /// Aligned text for a terminal.
    Table,
    Markdown,
    Csv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CompareFormat {
    /// Aligned text for a terminal.
    Table,
    Markdown,
    Csv,
    /// Every row with the differences, intervals and verdicts (docs/report.md).
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ReportFormat {
    /// The self-contained HTML page (needs -o).
    Html,
    Table,
    Markdown,
    Csv,
}

/// List the runs in a result store, or import fio and sysbench reports
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct ResultsArgs {
    #[command(subcommand)]
    command: Option<ResultsCommand>,
    /// Result directory [default: ./tankbench-results] (a store called
    /// `import` is listed as ./import).
    dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    format: TableFormat,
}

#[derive(Debug, Subcommand)]
enum ResultsCommand {
    Import(ImportArgs),
}

/// Read runs made with fio or sysbench into a result store.
#[derive(Debug, Args)]
struct ImportArgs {
    /// Reports to import: fio --output-format=json (or json+) files and
    /// sysbench fileio run reports (text).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Result store to add them to.
    #[arg(long = "store", visible_alias = "dir", default_value = DEFAULT_DIR)]
    store: PathBuf,
    /// Labels for every imported run (KEY=VALUE[,KEY=VALUE...]; repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    labels: Vec<String>,
}

/// Compare two sets of runs metric by metric, with Welch's t-test over repeats.
#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// Baseline: a result file, a directory, a run id or labels (layout=2xraidz2,slog=no).
    a: OsString,
    /// Candidate, in the same forms as A.
    b: OsString,
    /// Store that run ids and label selectors are looked up in.
    #[arg(long, default_value = DEFAULT_DIR)]
    dir: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
    format: CompareFormat,
    /// Significance level for "larger than the noise" (0 < alpha < 1); the
    /// confidence intervals are at 1 - alpha.
    #[arg(long, default_value_t = DEFAULT_ALPHA)]
    alpha: f64,
}

/// Build the report: the grouped table, charts and warnings of all runs.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Result directories, files, run ids or label selectors [default: ./tankbench-results]
    sources: Vec<OsString>,
    /// Output file ("-" for stdout) [default for html: report.html]. Replaces
    /// only a file tankbench wrote.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Output format: the HTML page, or the table alone.
    #[arg(long, value_enum, default_value_t = ReportFormat::Html)]
    format: ReportFormat,
    /// Page title.
    #[arg(long, default_value = "tankbench report")]
    title: String,
    /// Store that run ids and label selectors are looked up in.
    #[arg(long, default_value = DEFAULT_DIR)]
    dir: PathBuf,
}

/// Draw one chart as SVG or PNG (chosen by the -o extension).
#[derive(Debug, Args)]
pub(crate) struct ChartArgs {
    /// Chart kind.
    #[arg(value_name = "KIND", value_parser = super::choices::typed(
        super::choices::table(&ChartKind::ALL, ChartKind::name, ChartKind::describe),
        ChartKind::parse,
    ))]
    kind: ChartKind,
    /// Result directories, files, run ids or label selectors [default: ./tankbench-results]
    sources: Vec<OsString>,
    /// Output file ending in .svg or .png. Replaces only a file tankbench wrote.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// For `latency`: the operation [default: event].
    #[arg(long, value_parser = super::choices::typed(
        super::choices::names(&LatencyKey::ALL, LatencyKey::name),
        LatencyKey::from_name,
    ))]
    op: Option<LatencyKey>,
    /// PNG pixels per SVG pixel.
    #[arg(long, default_value_t = 2.0)]
    scale: f32,
    /// Store that run ids and label selectors are looked up in.
    #[arg(long, default_value = DEFAULT_DIR)]
    dir: PathBuf,
}

/// Print to stdout, treating a closed pipe (`| head`) as success.
fn emit(text: &str) -> anyhow::Result<()> {
    super::write_stdout(text.as_bytes())
}

/// One line per store entry that was left out, naming it and why. File names
/// and parser messages quote the untrusted entry, so control characters are
/// replaced before they reach the terminal.
fn warn_skipped(skipped: &[Skipped]) {
    for s in skipped {
        super::write_stderr_line(&format!(
            "tankbench: skipped {}",
            report::escape::terminal(&s.reason)
        ));
    }
}

fn render_table(t: &Table, format: TableFormat) -> String {
    match format {
        TableFormat::Table => t.to_screen(&super::stdout_screen()),
        TableFormat::Markdown => t.to_markdown(),
        TableFormat::Csv => t.to_csv(),
    }
}

/// `tankbench results [DIR]` and `tankbench results import`.
pub(crate) fn results(a: ResultsArgs) -> anyhow::Result<i32> {
    if let Some(ResultsCommand::Import(i)) = &a.command {
        return import(i);
    }
    let explicit = a.dir.is_some();
    let dir = a.dir.unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
    if explicit && !dir.is_dir() {
        bail!("results: {} is not a directory", dir.display());
    }
    let listing = ResultStore::open(&dir)?.list()?;
    warn_skipped(&listing.skipped);
    if listing.runs.is_empty() {
        super::write_stderr_line(&format!(
            "tankbench: no results in {} (save runs with `tankbench fileio ... run --save`)",
            dir.display()
        ));
        return Ok(0);
    }
    emit(&render_table(&runs_table(&listing.runs), a.format))?;
    Ok(0)
}

/// Whether `a` and `b` are the same run (the same report imported twice).
fn same_run(a: &RunResult, b: &RunResult) -> bool {
    a.tool == b.tool
        && a.started_at == b.started_at
        && a.counts == b.counts
        && a.workload == b.workload
}

/// `results import`: every file is read and mapped before anything is
/// stored, so a refused file leaves the store as it was.
fn import(a: &ImportArgs) -> anyhow::Result<i32> {
    let mut labels = Labels::new();
    for text in &a.labels {
        merge_labels(&mut labels, parse_labels(text)?)
            .map_err(|e| anyhow::anyhow!("results import: {e}"))?;
    }
    let store =
        ResultStore::open(&a.store).map_err(|e| anyhow::anyhow!("results import: --store {e}"))?;
    let mut imported: Vec<(PathBuf, RunResult)> = Vec::new();
    for file in &a.files {
        let runs = import_file(file).map_err(|e| {
            anyhow::anyhow!(
                "results import: {}",
                report::escape::terminal(&fileio::text::one_line(&e))
            )
        })?;
        for mut run in runs {
            run.labels.extend(labels.clone());
            imported.push((file.clone(), run));
        }
    }
    // The same report twice would count as two repeats in `compare`.
    let existing = store.list()?.runs;
    for (i, (file, run)) in imported.iter().enumerate() {
        if let Some(old) = existing.iter().find(|s| same_run(&s.result, run)) {
            bail!(
                "results import: {}: already in {} as {}",
                file.display(),
                a.store.display(),
                old.id
            );
        }
        if let Some((other, _)) = imported[..i].iter().find(|(_, r)| same_run(r, run)) {
            bail!(
                "results import: {}: the same run as {} (given twice)",
                file.display(),
                other.display()
            );
        }
    }
    let mut saved: Vec<PathBuf> = Vec::new();
    let kept = |saved: &[PathBuf]| {
        if saved.is_empty() {
            "nothing was stored".to_string()
        } else {
            format!(
                "stored before it: {}",
                saved
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    };
    for (file, run) in &imported {
        // The listing above may be stale by now (another import running at
        // the same time): the name derived from the run is created only if
        // free, which is the check that holds.
        match store.save_once(run) {
            Ok(SaveOnce::AlreadyStored(id)) => bail!(
                "results import: {}: already in {} as {id}; {}",
                file.display(),
                a.store.display(),
                kept(&saved)
            ),
            Ok(SaveOnce::Saved(path)) => {
                let threads = run.workload.threads;
                super::write_stderr_line(&format!(
                    "saved {} ({} {}, {} {threads} thread{}, from {})",
                    path.display(),
                    run.tool.name,
                    run.tool.version,
                    run.workload.mode.short_name(),
                    if threads == 1 { "" } else { "s" },
                    file.display()
                ));
                saved.push(path);
            }
            Err(e) => bail!("results import: {}: {e}; {}", file.display(), kept(&saved)),
        }
    }
    Ok(0)
}

pub(crate) fn compare(a: &CompareArgs) -> anyhow::Result<i32> {
    if !(a.alpha > 0.0 && a.alpha < 1.0) {
        bail!(
            "compare: --alpha={} is out of range; accepted: 0 < alpha < 1 (e.g. 0.05)",
            a.alpha
        );
    }
    let store = ResultStore::open(&a.dir)?;
    let sa = select(&a.a, &store, "compare A")?;
    let sb = select(&a.b, &store, "compare B")?;
    warn_skipped(&sa.skipped);
    if sb.skipped.len() != sa.skipped.len() {
        warn_skipped(&sb.skipped);
    }
    let cmp = Comparison::new(&sa, &sb, a.alpha);
    let text = match a.format {
        CompareFormat::Table => cmp.table().to_screen(&super::stdout_screen()),
        CompareFormat::Markdown => cmp.table().to_markdown(),
        CompareFormat::Csv => cmp.table().to_csv(),
        CompareFormat::Json => cmp.to_json(),
    };
    emit(&text)?;
    Ok(0)
}

/// The runs named on a report/chart command line, or the default store.
fn gather(cmd: &str, sources: &[OsString], dir: &Path) -> anyhow::Result<Selection> {
    let store = ResultStore::open(dir)?;
    let sel = if sources.is_empty() {
        if !dir.is_dir() {
            bail!(
                "{cmd}: no results: {} does not exist (name a result directory, or save runs with \
                 `tankbench fileio ... run --save`)",
                dir.display()
            );
        }
        select_all(&[dir.as_os_str().to_owned()], &store, cmd)?
    } else {
        select_all(sources, &store, cmd)?
    };
    warn_skipped(&sel.skipped);
    Ok(sel)
}

/// Write to -o (whole or not at all, see `report::atomic`), or to stdout for "-".
fn write_to(cmd: &str, path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if path == Path::new("-") {
        return super::write_stdout(bytes);
    }
    write_output(path, bytes).with_context(|| format!("{cmd} -o"))?;
    super::write_stderr_line(&format!("tankbench: wrote {}", path.display()));
    Ok(())
}

pub(crate) fn report(a: &ReportArgs) -> anyhow::Result<i32> {
    let sel = gather("report", &a.sources, &a.dir)?;
    let text = match a.format {
        ReportFormat::Html => {
            let sources = if a.sources.is_empty() {
                vec![a.dir.display().to_string()]
            } else {
                a.sources
                    .iter()
                    .map(|w| w.to_string_lossy().into_owned())
                    .collect()
            };
            render_html(
                &sel.runs,
                &ReportOptions {
                    title: a.title.clone(),
                    sources,
                    skipped: sel.skipped.clone(),
                },
            )
        }
        // Laid out for the terminal only when it goes there; a file gets
        // every column.
        ReportFormat::Table => {
            let screen = match a.output {
                Some(_) => ::fileio::terminal::Screen::PIPE,
                None => super::stdout_screen(),
            };
            grouped_table(&Grouping::new(&sel.runs)).to_screen(&screen)
        }
        ReportFormat::Markdown => grouped_table(&Grouping::new(&sel.runs)).to_markdown(),
        ReportFormat::Csv => grouped_table(&Grouping::new(&sel.runs)).to_csv(),
    };
    match (&a.output, a.format) {
        (Some(path), _) => write_to("report", path, text.as_bytes())?,
        // A page on a terminal helps nobody: it goes to report.html here,
        // under write_output's rule (a report.html tankbench did not write
        // is refused, with the reason, and left alone).
        (None, ReportFormat::Html) => write_to("report", Path::new(DEFAULT_HTML), text.as_bytes())?,
        (None, _) => emit(&text)?,
    }
    Ok(0)
}

/// Where `report` writes its page when no `-o` is given.
const DEFAULT_HTML: &str = "report.html";

pub(crate) fn chart(a: &ChartArgs) -> anyhow::Result<i32> {
    let kind = a.kind;
    check_chart_name("chart: -o", &a.output)?;
    if !(a.scale > 0.0 && a.scale <= 8.0) {
        bail!(
            "chart: --scale={} is out of range; accepted: 0 < scale <= 8",
            a.scale
        );
    }
    if a.op.is_some() && kind != ChartKind::Latency {
        bail!("chart: --op applies only to the latency chart");
    }
    let sel = gather("chart", &a.sources, &a.dir)?;
    let g = Grouping::new(&sel.runs);
    let svg = match kind {
        ChartKind::Throughput => throughput_chart(&g).context("chart: the runs moved no data")?,
        ChartKind::Operations => {
            operations_chart(&g).context("chart: the runs made no reads, writes or fsyncs")?
        }
        ChartKind::Timeline => timeline_chart(&g).context(
            "chart: the runs have no interval samples; run with --report-interval=1 to record them",
        )?,
        ChartKind::Latency => {
            let ops = latency_ops(&g);
            let op = match a.op {
                Some(op) => Some(op).filter(|op| ops.contains(op)),
                None if ops.contains(&LatencyKey::Event) => Some(LatencyKey::Event),
                None => Some(
                    *ops.first()
                        .context("chart: the runs stored no latency histograms")?,
                ),
            };
            let Some(op) = op else {
                bail!(
                    "chart: --op={}: no latency histogram for it; accepted: {}",
                    a.op.map(LatencyKey::name).unwrap_or_default(),
                    if ops.is_empty() {
                        "(none stored)".into()
                    } else {
                        ops.iter().map(|o| o.name()).collect::<Vec<_>>().join(", ")
                    }
                );
            };
            latency_chart(&g, op).context("chart: no latency data")?
        }
    };
    write_chart("chart", &a.output, &svg, a.scale)?;
    Ok(0)
}

/// Refuse a chart file name that ends in neither .svg nor .png, before
/// anything runs; `option` names where it was given (`plan: --chart`).
pub(crate) fn check_chart_name(option: &str, path: &Path) -> anyhow::Result<()> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if ext != "svg" && ext != "png" {
        bail!(
            "{option} {}: the file name must end in .svg or .png",
            path.display()
        );
    }
    Ok(())
}

/// Write `svg` to `path` as SVG, or as PNG at `scale` when the name ends
/// in .png; both replace only a file tankbench wrote (`write_output`).
pub(crate) fn write_chart(cmd: &str, path: &Path, svg: &str, scale: f32) -> anyhow::Result<()> {
    let png = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    let bytes = if png {
        report::png::svg_to_png(svg, scale)?
    } else {
        svg.as_bytes().to_vec()
    };
    write_to(cmd, path, &bytes)
}
