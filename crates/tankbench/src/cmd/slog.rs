//! `tankbench slog PATH`: the log-device test (`diskinfo -wS`'s figures).
//! The test is `fileio::slog`; this module parses, prints and saves.

use anyhow::bail;
use clap::{Args, ValueEnum};
use fileio::result::LatencySummary;
use fileio::slog::{PerSize, SlogResult, SlogSpec, SyncMethod, TargetKind};
use report::atomic::{check_new_file, write_atomically, Existing};
use report::table::{Cell, Table};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// An aligned table on stdout.
    Table,
    /// The result document on stdout, nothing else.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SyncArg {
    /// Each pwrite followed by fdatasync (a cache flush on a device).
    Fdatasync,
    /// The target opened O_DSYNC.
    Dsync,
}

/// Log-device test: sync writes of 512 B to 1 MiB, latency and MB/s per size
///
/// Synchronous writes of 512 B (or --min-size) doubling to 1 MiB, one
/// thread, latency percentiles and MB/s per size (FreeBSD's diskinfo -wS).
/// See docs/slog-and-probe.md.
#[derive(Debug, Args)]
pub(crate) struct SlogArgs {
    /// A directory (a scratch file tankbench-slog.PID is made there and
    /// removed) or a block device (only with --destructive).
    path: PathBuf,
    /// The first write size (a power of two, at least 512; K = KiB, M = MiB).
    #[arg(long, default_value = "512")]
    min_size: String,
    /// The last write size (a power of two, at most 16M; M = MiB).
    #[arg(long, default_value = "1M")]
    max_size: String,
    /// How long each size runs (e.g. 2s, 500ms, 1m; a plain number is seconds).
    #[arg(long, default_value = "2s")]
    time_per_size: String,
    /// Writes per size instead of a time.
    #[arg(long, conflicts_with = "time_per_size")]
    count: Option<u64>,
    /// How each write is made durable.
    #[arg(long, value_enum, default_value_t = SyncArg::Fdatasync)]
    sync: SyncArg,
    /// Open with O_DIRECT (not on every file system).
    #[arg(long)]
    direct: bool,
    /// Bytes the writes cycle through (default 256M, at most the device).
    #[arg(long)]
    region: Option<String>,
    /// Allow writing over a block device, after checking it holds no file
    /// system, pool, partition or mount.
    #[arg(long)]
    destructive: bool,
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Also save the result document here (a new file).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also draw latency and MB/s by write size, as SVG or PNG (by the
    /// name's ending); replaces only a chart tankbench wrote.
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    chart: Option<PathBuf>,
}

/// The one duration syntax of every option (`--time-per-size`, `quick --time`, ...).
pub(crate) use super::options::parse_duration;

fn parse_size(option: &str, text: &str) -> anyhow::Result<u64> {
    match fileio::sysbench::args::size_value(text) {
        Some(v) if v > 0 => Ok(v),
        _ => bail!(
            "{option}={text}: not a size (accepted: a number with an optional K, M or G suffix, e.g. 4K)"
        ),
    }
}

fn spec_of(a: &SlogArgs) -> anyhow::Result<SlogSpec> {
    let mut spec = SlogSpec::new(&a.path);
    spec.min_size = parse_size("--min-size", &a.min_size)?;
    spec.max_size = parse_size("--max-size", &a.max_size)?;
    spec.per_size = match a.count {
        Some(n) => PerSize::Count(n),
        None => PerSize::Time(parse_duration("--time-per-size", &a.time_per_size)?),
    };
    spec.sync = match a.sync {
        SyncArg::Fdatasync => SyncMethod::Fdatasync,
        SyncArg::Dsync => SyncMethod::Dsync,
    };
    spec.direct = a.direct;
    spec.region = a
        .region
        .as_deref()
        .map(|r| parse_size("--region", r))
        .transpose()?;
    spec.destructive = a.destructive;
    spec.check()?;
    Ok(spec)
}

/// `512 B`, `4 KiB`, `1 MiB`.
fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// The percentile columns of the slog and probe tables (right-aligned).
pub(crate) const PERCENTILE_COLUMNS_US: [(&str, bool); 4] = [
    ("p50 µs", true),
    ("p95 µs", true),
    ("p99 µs", true),
    ("p99.9 µs", true),
];

/// A row's cells under [`PERCENTILE_COLUMNS_US`]: `latency` at those
/// percentiles, in µs (empty where one was not measured).
pub(crate) fn percentile_cells_us(latency: &LatencySummary) -> [Cell; 4] {
    [50.0, 95.0, 99.0, 99.9].map(|p| Cell::Num(latency.at(p).map(|ms| ms * 1000.0)))
}

pub(crate) fn table_of(r: &SlogResult) -> String {
    let mut t = Table::new(
        &[
            &[("size", true), ("writes", true), ("µs/write", true)][..],
            &PERCENTILE_COLUMNS_US,
            &[("MB/s", true), ("IOPS", true)],
        ]
        .concat(),
    );
    for s in &r.sizes {
        let mut row = vec![
            Cell::Text(size_text(s.size_bytes)),
            Cell::Int(s.writes),
            Cell::Num(Some(s.latency.mean_ms * 1000.0)),
        ];
        row.extend(percentile_cells_us(&s.latency));
        row.extend([
            Cell::Num(Some(s.bytes_per_second / 1e6)),
            Cell::Num(Some(s.iops)),
        ]);
        t.rows.push(row);
    }
    if let Some(fit) = &r.fit {
        t.notes.push(match fit.bandwidth_bytes_per_second {
            Some(bw) => format!(
                "fit: {:.1} µs + size / {:.1} MB/s per write",
                fit.overhead_us,
                bw / 1e6
            ),
            None => format!("fit: {:.1} µs per write whatever the size", fit.overhead_us),
        });
    }
    if r.interrupted {
        t.notes
            .push("interrupted: the last size is short and later sizes are missing".into());
    }
    let target = match r.target {
        TargetKind::File => "a scratch file in",
        TargetKind::BlockDevice => "the block device",
    };
    format!(
        "slog: {target} {}; {} after each write{}; region {}\n\n{}",
        r.path,
        match r.sync {
            SyncMethod::Fdatasync => "fdatasync",
            SyncMethod::Dsync => "O_DSYNC",
        },
        if r.direct { ", O_DIRECT" } else { "" },
        size_text(r.region_bytes),
        t.to_screen(&super::stdout_screen())
    )
}

/// Write the result document to `--json`, refused before the test if it
/// would replace a file.
pub(crate) fn check_json_destination(path: Option<&Path>) -> anyhow::Result<()> {
    if let Some(p) = path {
        check_new_file(p).map_err(|e| anyhow::anyhow!("--json={}: {e}", p.display()))?;
    }
    Ok(())
}

/// Save the result document (`doc`, its JSON) to `--json` and print it or
/// the table.
pub(crate) fn emit(
    doc: serde_json::Result<String>,
    table: impl FnOnce() -> String,
    format: OutputFormat,
    json: Option<&Path>,
) -> anyhow::Result<()> {
    let mut text = doc?;
    text.push('\n');
    if let Some(p) = json {
        write_atomically(p, text.as_bytes(), Existing::Keep)
            .map_err(|e| anyhow::anyhow!("--json={}: {e}", p.display()))?;
    }
    let out = match format {
        OutputFormat::Json => text,
        OutputFormat::Table => table(),
    };
    super::write_stdout(out.as_bytes())
}

/// The exit status after a run a stop signal may have cut short.
pub(crate) fn exit_code(interrupted: bool) -> i32 {
    match (interrupted, fileio::signals::stop_signal()) {
        (true, Some(sig)) => 128 + sig,
        (true, None) => 1,
        (false, _) => 0,
    }
}

pub(crate) fn run(a: &SlogArgs) -> anyhow::Result<i32> {
    let spec = spec_of(a)?;
    check_json_destination(a.json.as_deref())?;
    if let Some(path) = &a.chart {
        super::report::check_chart_name("--chart", path)?;
    }
    fileio::slog::install_stop_handlers();
    let result = fileio::slog::run(&spec, &mut |line| super::write_stderr_line(line))?;
    if let Some(path) = &a.chart {
        match report::slog_chart::slog_chart(&result) {
            Some(svg) => super::report::write_chart("--chart", path, &svg, 2.0)?,
            None => super::write_stderr_line(
                "tankbench: --chart: no write size was measured, so no chart was written",
            ),
        }
    }
    emit(
        serde_json::to_string_pretty(&result),
        || table_of(&result),
        a.format,
        a.json.as_deref(),
    )?;
    Ok(exit_code(result.interrupted))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_and_sizes() {
        assert_eq!(parse_duration("--t", "2s").unwrap(), Duration::from_secs(2));
        assert_eq!(
            parse_duration("--t", "250ms").unwrap(),
            Duration::from_millis(250)
        );
        assert_eq!(
            parse_duration("--t", "1m").unwrap(),
            Duration::from_secs(60)
        );
        assert_eq!(parse_duration("--t", "3").unwrap(), Duration::from_secs(3));
        let e = parse_duration("--t", "2d").unwrap_err().to_string();
        assert!(e.starts_with("--t=2d: not a duration"), "{e}");
        assert!(parse_duration("--t", "-1s").is_err());
        assert_eq!(size_text(512), "512 B");
        assert_eq!(size_text(4096), "4 KiB");
        assert_eq!(size_text(1 << 20), "1 MiB");
    }
}
