//! The text report of `sysbench fileio ... run` (sysbench 1.0.x) as a
//! measured result.
//!
//! The header gives most of the workload (threads, files, block size, mode,
//! fsyncs, I/O mode, open flags); the report gives the rates as printed,
//! the total time and events, and the event latency's min, avg, max, one
//! percentile and sum. What sysbench does not print takes sysbench's
//! default (docs/report.md lists them): the time limit, the fsync mode, the
//! async backlog.

use super::{parse_size, ImportError};
use fileio::options::{ExtraFlags, FsyncMode, IoMode, Mode, RunSpec};
use fileio::result::{
    Counts, LatencyKey, LatencySummary, Percentile, ResultKind, RunResult, ToolInfo,
};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Whether `text` is a sysbench report: its first line names sysbench and
/// a version.
pub(crate) fn is_sysbench(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| l.trim().strip_prefix("sysbench "))
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// The value after `label` on a line of its own (`    reads/s:   12.5`).
fn value_after<'a>(lines: &[&'a str], label: &str) -> Option<&'a str> {
    lines
        .iter()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .map(str::trim)
}

fn mode_of(name: &str) -> Option<Mode> {
    Some(match name {
        "sequential write (creation)" => Mode::SeqWr,
        "sequential rewrite" => Mode::SeqRewr,
        "sequential read" => Mode::SeqRd,
        "random read" => Mode::RndRd,
        "random write" => Mode::RndWr,
        "random r/w" => Mode::RndRw,
        _ => return None,
    })
}

/// The run in `path`'s sysbench report; `modified` (when the report file
/// was written, at the end of the run) dates it.
pub fn parse(
    path: &Path,
    text: &str,
    modified: Option<SystemTime>,
) -> Result<RunResult, ImportError> {
    let bad = |what: String| ImportError::Sysbench {
        path: path.to_path_buf(),
        what,
    };
    let lines: Vec<&str> = text.lines().collect();
    let first = lines
        .iter()
        .find(|l| !l.trim().is_empty())
        .map_or("", |l| l.trim());
    let version = first
        .strip_prefix("sysbench ")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_default()
        .to_string();
    if !version.starts_with("1.0.") && version != "1.0" {
        return Err(bad(format!(
            "sysbench {version} reports are not read; accepted: the report of sysbench 1.0.x \
             fileio ... run"
        )));
    }
    let headers = lines
        .iter()
        .filter(|l| l.starts_with("Running the test with following options:"))
        .count();
    if headers > 1 {
        return Err(bad(format!(
            "{headers} runs in one file; import one report per file"
        )));
    }
    let doing = lines
        .iter()
        .find_map(|l| l.strip_prefix("Doing ")?.strip_suffix(" test"));
    let Some(doing) = doing else {
        if lines.iter().any(|l| l.trim() == "File operations:") {
            return Err(bad("no \"Doing ... test\" line in the header".into()));
        }
        return Err(bad(
            "no fileio run in it (no \"Doing ... test\" line); accepted: the report of sysbench \
             1.0.x fileio ... run"
                .into(),
        ));
    };
    let mode = mode_of(doing).ok_or_else(|| {
        bad(format!(
            "unknown test mode \"Doing {doing} test\"; accepted: sequential write (creation), \
             sequential rewrite, sequential read, random read, random write, random r/w"
        ))
    })?;

    let need = |label: &str| {
        value_after(&lines, label).ok_or_else(|| bad(format!("no \"{}\" line", label.trim())))
    };
    let number = |label: &str| -> Result<f64, ImportError> {
        let v = need(label)?;
        let v = v.strip_suffix('s').unwrap_or(v);
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| bad(format!("\"{}\" is not a number: {v}", label.trim())))
    };
    let whole = |label: &str| -> Result<u64, ImportError> {
        let v = need(label)?;
        v.parse::<u64>()
            .map_err(|_| bad(format!("\"{}\" is not a whole number: {v}", label.trim())))
    };
    let size = |v: &str, what: &str| {
        parse_size(v.trim_end_matches('.')).ok_or_else(|| bad(format!("{what}: not a size: {v}")))
    };

    // The header.
    let threads = u32::try_from(whole("Number of threads:")?)
        .map_err(|_| bad("\"Number of threads\" is out of range".into()))?;
    let rate = match value_after(&lines, "Target transaction rate:") {
        Some(v) => v
            .trim_end_matches("/sec")
            .parse::<u64>()
            .map_err(|_| bad(format!("\"Target transaction rate\" is not a rate: {v}")))?,
        None => 0,
    };
    let flags_text = need("Extra file open flags:")?;
    let mut extra_flags = ExtraFlags::default();
    for word in flags_text.split_whitespace() {
        match word {
            "(none)" => {}
            "sync" => extra_flags.sync = true,
            "dsync" => extra_flags.dsync = true,
            "directio" => extra_flags.direct = true,
            other => return Err(bad(format!("unknown extra file open flag '{other}'"))),
        }
    }
    let files_line = lines
        .iter()
        .find_map(|l| l.strip_suffix(" each")?.split_once(" files, "))
        .ok_or_else(|| bad("no \"N files, SIZE each\" line".into()))?;
    let file_num: u64 = files_line
        .0
        .trim()
        .parse()
        .map_err(|_| bad(format!("not a number of files: {}", files_line.0)))?;
    let file_size = size(files_line.1, "file size")?;
    let total_size = match lines
        .iter()
        .find_map(|l| l.strip_suffix(" total file size"))
    {
        Some(v) => size(v, "total file size")?,
        None => file_num * file_size,
    };
    let block_size = size(need("Block size")?, "block size")?;
    let merged = match lines.iter().find_map(|l| {
        l.strip_prefix("Merging requests up to ")?
            .strip_suffix(" for sequential IO.")
    }) {
        Some(v) if block_size > 0 => size(v, "merged request size")? / block_size,
        _ => 0,
    };
    let events_limit = match value_after(&lines, "Number of IO requests:") {
        Some(v) => v
            .parse::<u64>()
            .map_err(|_| bad(format!("\"Number of IO requests\" is not a number: {v}")))?,
        None => 0,
    };
    let rw_ratio = match value_after(&lines, "Read/Write ratio for combined random IO test:") {
        Some(v) => Some(
            v.parse::<f64>()
                .map_err(|_| bad(format!("\"Read/Write ratio\" is not a number: {v}")))?,
        ),
        None => None,
    };
    let fsync_freq = match lines.iter().find_map(|l| {
        l.strip_prefix("Periodic FSYNC enabled, calling fsync() each ")?
            .strip_suffix(" requests.")
    }) {
        Some(v) => v
            .parse::<u64>()
            .map_err(|_| bad(format!("not an fsync frequency: {v}")))?,
        None => 0,
    };
    let fsync_end = lines
        .iter()
        .any(|l| l.trim() == "Calling fsync() at the end of test, Enabled.");
    let fsync_all = lines
        .iter()
        .any(|l| l.trim() == "Calling fsync() after each write operation.");
    let io_mode = match lines
        .iter()
        .find_map(|l| l.strip_prefix("Using ")?.strip_suffix(" I/O mode"))
    {
        Some("synchronous") => IoMode::Sync,
        Some("asynchronous") => IoMode::Async,
        Some("fast mmaped" | "slow mmaped") => IoMode::Mmap,
        Some(other) => return Err(bad(format!("unknown I/O mode \"{other}\""))),
        None => return Err(bad("no \"Using ... I/O mode\" line".into())),
    };

    // The report.
    if !lines.iter().any(|l| l.trim() == "General statistics:") {
        return Err(bad(
            "no \"General statistics\" (the run did not finish, or the report was cut)".into(),
        ));
    }
    let reads_per_s = number("reads/s:")?;
    let writes_per_s = number("writes/s:")?;
    let fsyncs_per_s = number("fsyncs/s:")?;
    let read_mib_per_s = number("read, MiB/s:")?;
    let written_mib_per_s = number("written, MiB/s:")?;
    let total_time_s = number("total time:")?;
    let events = whole("total number of events:")?;

    // What the report does not print: the time limit (the run's own length,
    // when no event limit ended it), the fsync mode, the async backlog.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let time_s = if events_limit == 0 {
        (total_time_s.round() as u64).max(1)
    } else {
        0
    };
    let mut b = RunSpec::builder()
        .total_size(total_size)
        .file_num(file_num)
        .block_size(block_size)
        .extra_flags(extra_flags)
        .mode(mode)
        .merged_requests(merged)
        .io_mode(io_mode)
        .fsync_freq(fsync_freq)
        .fsync_all(fsync_all)
        .fsync_end(fsync_end)
        .fsync_mode(FsyncMode::Fsync)
        .threads(threads)
        .events(events_limit)
        .time_s(time_s)
        .rate(rate);
    if let Some(r) = rw_ratio {
        b = b.rw_ratio(r);
    }
    let spec = b.build().map_err(|source| ImportError::Workload {
        path: path.to_path_buf(),
        origin: "sysbench run".into(),
        source,
    })?;
    let mut summary = spec.summary(match io_mode {
        IoMode::Sync => "psync",
        IoMode::Async => "libaio",
        IoMode::Mmap => "mmap",
    });
    // sysbench prints the file sizes, not the directory.
    summary.directory = String::new();
    if summary.file_size != file_size {
        // The header printed the sizes rounded (5 significant digits).
        summary.file_size = file_size;
    }

    // Counts from the printed rates (2 decimals) over the total time.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let count = |per_s: f64| (per_s * total_time_s).round() as u64;
    let request = spec.request_size();
    let counts = Counts {
        events,
        reads: count(reads_per_s),
        writes: count(writes_per_s),
        fsyncs: count(fsyncs_per_s),
        bytes_read: count(reads_per_s) * request,
        bytes_written: count(writes_per_s) * request,
    };
    let mut r = RunResult::new(ResultKind::Measured, summary).with_figures(
        counts,
        total_time_s,
        total_time_s,
    );
    r.rates.reads_per_s = reads_per_s;
    r.rates.writes_per_s = writes_per_s;
    r.rates.fsyncs_per_s = fsyncs_per_s;
    r.rates.read_mib_per_s = read_mib_per_s;
    r.rates.written_mib_per_s = written_mib_per_s;
    r.tool = ToolInfo {
        name: "sysbench".into(),
        version,
    };
    if let Some(end) = modified {
        let start = end
            .checked_sub(Duration::from_secs_f64(total_time_s))
            .unwrap_or(end);
        r = r.with_started_at(fileio::clock::rfc3339(start));
    }
    if let Some(l) = event_latency(&lines, events).map_err(bad)? {
        r = r.with_latency(LatencyKey::Event, l);
    }
    Ok(r)
}

/// The "Latency (ms):" block: min, avg, max, `Nth percentile`, sum.
fn event_latency(lines: &[&str], events: u64) -> Result<Option<LatencySummary>, String> {
    let Some(start) = lines.iter().position(|l| l.trim() == "Latency (ms):") else {
        return Ok(None);
    };
    let mut l = LatencySummary {
        count: events,
        ..LatencySummary::default()
    };
    let mut seen = 0;
    for line in &lines[start + 1..] {
        let t = line.trim();
        if t.is_empty() {
            break;
        }
        let Some((label, value)) = t.rsplit_once(':') else {
            continue;
        };
        let value = value.trim();
        let v = || {
            value
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("latency {label}: not a number: {value}"))
        };
        match label.trim() {
            "min" => l.min_ms = v()?,
            "avg" => l.mean_ms = v()?,
            "max" => l.max_ms = v()?,
            "sum" => l.sum_ms = v()?,
            "percentile stats" => continue,
            other => {
                let Some(p) = other
                    .strip_suffix("th percentile")
                    .and_then(|p| p.trim().parse::<f64>().ok())
                else {
                    continue;
                };
                l.percentiles.push(Percentile { p, ms: v()? });
            }
        }
        seen += 1;
    }
    if seen < 4 {
        return Err("the \"Latency (ms)\" block lacks min, avg, max or sum".into());
    }
    Ok(Some(l))
}
