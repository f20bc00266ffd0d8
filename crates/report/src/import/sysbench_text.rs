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
use fileio::result::{
    Counts, LatencyKey, LatencySummary, Percentile, ResultKind, RunResult, ToolInfo,
};
use fileio::spec::{ExtraFlags, FsyncMode, IoMode, Mode, RunSpec};
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

/// The lines of one report, read with its file name at hand for refusals.
struct Report<'a> {
    path: &'a Path,
    lines: Vec<&'a str>,
}

/// What the header says besides the mode.
struct Header {
    threads: u32,
    rate: u64,
    extra_flags: ExtraFlags,
    file_num: u64,
    file_size: u64,
    total_size: u64,
    block_size: u64,
    merged: u64,
    events_limit: u64,
    rw_ratio: Option<f64>,
    fsync_freq: u64,
    fsync_end: bool,
    fsync_all: bool,
    io_mode: IoMode,
}

/// The figures of the report.
struct Figures {
    reads_per_s: f64,
    writes_per_s: f64,
    fsyncs_per_s: f64,
    read_mib_per_s: f64,
    written_mib_per_s: f64,
    total_time_s: f64,
    events: u64,
}

impl<'a> Report<'a> {
    fn bad(&self, what: String) -> ImportError {
        ImportError::Sysbench {
            path: self.path.to_path_buf(),
            what,
        }
    }

    fn has_line(&self, line: &str) -> bool {
        self.lines.iter().any(|l| l.trim() == line)
    }

    /// The text between `prefix` and `suffix` on the first line that has both.
    fn between(&self, prefix: &str, suffix: &str) -> Option<&'a str> {
        self.lines
            .iter()
            .find_map(|l| l.strip_prefix(prefix)?.strip_suffix(suffix))
    }

    fn need(&self, label: &str) -> Result<&'a str, ImportError> {
        value_after(&self.lines, label)
            .ok_or_else(|| self.bad(format!("no \"{}\" line", label.trim())))
    }

    fn number(&self, label: &str) -> Result<f64, ImportError> {
        let v = self.need(label)?;
        let v = v.strip_suffix('s').unwrap_or(v);
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| self.bad(format!("\"{}\" is not a number: {v}", label.trim())))
    }

    /// A whole number after `label`; `None` when the line is not there.
    fn whole(&self, label: &str) -> Result<Option<u64>, ImportError> {
        value_after(&self.lines, label)
            .map(|v| {
                v.parse::<u64>().map_err(|_| {
                    self.bad(format!("\"{}\" is not a whole number: {v}", label.trim()))
                })
            })
            .transpose()
    }

    fn size(&self, v: &str, what: &str) -> Result<u64, ImportError> {
        parse_size(v.trim_end_matches('.'))
            .ok_or_else(|| self.bad(format!("{what}: not a size: {v}")))
    }

    /// The tool version; only 1.0.x reports are read.
    fn version(&self) -> Result<String, ImportError> {
        let first = self
            .lines
            .iter()
            .find(|l| !l.trim().is_empty())
            .map_or("", |l| l.trim());
        let version = first
            .strip_prefix("sysbench ")
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_default()
            .to_string();
        if !version.starts_with("1.0.") && version != "1.0" {
            return Err(self.bad(format!(
                "sysbench {version} reports are not read; accepted: the report of sysbench \
                 1.0.x fileio ... run"
            )));
        }
        let runs = self
            .lines
            .iter()
            .filter(|l| l.starts_with("Running the test with following options:"))
            .count();
        if runs > 1 {
            return Err(self.bad(format!(
                "{runs} runs in one file; import one report per file"
            )));
        }
        Ok(version)
    }

    fn mode(&self) -> Result<Mode, ImportError> {
        let Some(doing) = self.between("Doing ", " test") else {
            return Err(self.bad(if self.has_line("File operations:") {
                "no \"Doing ... test\" line in the header".into()
            } else {
                "no fileio run in it (no \"Doing ... test\" line); accepted: the report of \
                 sysbench 1.0.x fileio ... run"
                    .into()
            }));
        };
        mode_of(doing).ok_or_else(|| {
            self.bad(format!(
                "unknown test mode \"Doing {doing} test\"; accepted: sequential write \
                 (creation), sequential rewrite, sequential read, random read, random write, \
                 random r/w"
            ))
        })
    }

    fn extra_flags(&self) -> Result<ExtraFlags, ImportError> {
        let mut flags = ExtraFlags::default();
        for word in self.need("Extra file open flags:")?.split_whitespace() {
            match word {
                "(none)" => {}
                "sync" => flags.sync = true,
                "dsync" => flags.dsync = true,
                "directio" => flags.direct = true,
                other => return Err(self.bad(format!("unknown extra file open flag '{other}'"))),
            }
        }
        Ok(flags)
    }

    fn io_mode(&self) -> Result<IoMode, ImportError> {
        match self.between("Using ", " I/O mode") {
            Some("synchronous") => Ok(IoMode::Sync),
            Some("asynchronous") => Ok(IoMode::Async),
            Some("fast mmaped" | "slow mmaped") => Ok(IoMode::Mmap),
            Some(other) => Err(self.bad(format!("unknown I/O mode \"{other}\""))),
            None => Err(self.bad("no \"Using ... I/O mode\" line".into())),
        }
    }

    fn header(&self) -> Result<Header, ImportError> {
        let threads = self
            .whole("Number of threads:")?
            .ok_or_else(|| self.bad("no \"Number of threads:\" line".into()))?;
        let threads = u32::try_from(threads)
            .map_err(|_| self.bad("\"Number of threads\" is out of range".into()))?;
        let rate = match value_after(&self.lines, "Target transaction rate:") {
            Some(v) => v
                .trim_end_matches("/sec")
                .parse::<u64>()
                .map_err(|_| self.bad(format!("\"Target transaction rate\" is not a rate: {v}")))?,
            None => 0,
        };
        let (files, each) = self
            .lines
            .iter()
            .find_map(|l| l.strip_suffix(" each")?.split_once(" files, "))
            .ok_or_else(|| self.bad("no \"N files, SIZE each\" line".into()))?;
        let file_num: u64 = files
            .trim()
            .parse()
            .map_err(|_| self.bad(format!("not a number of files: {files}")))?;
        let file_size = self.size(each, "file size")?;
        let total_size = match self
            .lines
            .iter()
            .find_map(|l| l.strip_suffix(" total file size"))
        {
            Some(v) => self.size(v, "total file size")?,
            None => file_num * file_size,
        };
        let block_size = self.size(self.need("Block size")?, "block size")?;
        let merged = match self.between("Merging requests up to ", " for sequential IO.") {
            Some(v) if block_size > 0 => self.size(v, "merged request size")? / block_size,
            _ => 0,
        };
        let rw_ratio = value_after(&self.lines, "Read/Write ratio for combined random IO test:")
            .map(|v| {
                v.parse::<f64>()
                    .map_err(|_| self.bad(format!("\"Read/Write ratio\" is not a number: {v}")))
            })
            .transpose()?;
        let fsync_freq = self
            .between(
                "Periodic FSYNC enabled, calling fsync() each ",
                " requests.",
            )
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| self.bad(format!("not an fsync frequency: {v}")))
            })
            .transpose()?
            .unwrap_or(0);
        Ok(Header {
            threads,
            rate,
            extra_flags: self.extra_flags()?,
            file_num,
            file_size,
            total_size,
            block_size,
            merged,
            events_limit: self.whole("Number of IO requests:")?.unwrap_or(0),
            rw_ratio,
            fsync_freq,
            fsync_end: self.has_line("Calling fsync() at the end of test, Enabled."),
            fsync_all: self.has_line("Calling fsync() after each write operation."),
            io_mode: self.io_mode()?,
        })
    }

    /// The run's length, which every rate is divided by: a run of no time
    /// measured nothing (sysbench prints 0.0000s only for an edited report).
    fn total_time(&self) -> Result<f64, ImportError> {
        let seconds = self.number("total time:")?;
        if seconds > 0.0 {
            Ok(seconds)
        } else {
            Err(self.bad(format!(
                "\"total time:\" is {seconds}s; accepted: more than 0 (a run of no time measured nothing)"
            )))
        }
    }

    fn figures(&self) -> Result<Figures, ImportError> {
        if !self.has_line("General statistics:") {
            return Err(self.bad(
                "no \"General statistics\" (the run did not finish, or the report was cut)".into(),
            ));
        }
        Ok(Figures {
            reads_per_s: self.number("reads/s:")?,
            writes_per_s: self.number("writes/s:")?,
            fsyncs_per_s: self.number("fsyncs/s:")?,
            read_mib_per_s: self.number("read, MiB/s:")?,
            written_mib_per_s: self.number("written, MiB/s:")?,
            total_time_s: self.total_time()?,
            events: self
                .whole("total number of events:")?
                .ok_or_else(|| self.bad("no \"total number of events:\" line".into()))?,
        })
    }
}

/// The workload the header describes. What the report does not print takes
/// sysbench's default or is inferred: the time limit (the run's own length,
/// when no event limit ended it), the fsync mode, the async backlog.
fn spec_of(path: &Path, mode: Mode, h: &Header, total_time_s: f64) -> Result<RunSpec, ImportError> {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let time_s = if h.events_limit == 0 {
        (total_time_s.round() as u64).max(1)
    } else {
        0
    };
    let mut b = RunSpec::builder()
        .total_size(h.total_size)
        .file_num(h.file_num)
        .block_size(h.block_size)
        .extra_flags(h.extra_flags)
        .mode(mode)
        .merged_requests(h.merged)
        .io_mode(h.io_mode)
        .fsync_freq(h.fsync_freq)
        .fsync_all(h.fsync_all)
        .fsync_end(h.fsync_end)
        .fsync_mode(FsyncMode::Fsync)
        .threads(h.threads)
        .events(h.events_limit)
        .time_s(time_s)
        .rate(h.rate);
    if let Some(r) = h.rw_ratio {
        b = b.rw_ratio(r);
    }
    b.build().map_err(|source| ImportError::Workload {
        path: path.to_path_buf(),
        origin: "sysbench run".into(),
        source: Box::new(source),
    })
}

/// The run in `path`'s sysbench report; `modified` (when the report file
/// was written, at the end of the run) dates it.
pub fn parse(
    path: &Path,
    text: &str,
    modified: Option<SystemTime>,
) -> Result<RunResult, ImportError> {
    let report = Report {
        path,
        lines: text.lines().collect(),
    };
    let version = report.version()?;
    let mode = report.mode()?;
    let h = report.header()?;
    let f = report.figures()?;
    let spec = spec_of(path, mode, &h, f.total_time_s)?;
    let mut summary = spec.summary(match h.io_mode {
        IoMode::Sync => "psync",
        IoMode::Async => "libaio",
        IoMode::Mmap => "mmap",
    });
    // sysbench prints the file sizes, not the directory; the sizes it
    // prints are rounded (5 significant digits), so its own stays.
    summary.directory = String::new();
    summary.file_size = h.file_size;

    // Counts from the printed rates (2 decimals) over the total time.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let count = |per_s: f64| (per_s * f.total_time_s).round() as u64;
    let request = spec.request_size();
    let counts = Counts {
        events: f.events,
        reads: count(f.reads_per_s),
        writes: count(f.writes_per_s),
        fsyncs: count(f.fsyncs_per_s),
        bytes_read: count(f.reads_per_s) * request,
        bytes_written: count(f.writes_per_s) * request,
    };
    let mut r = RunResult::new(ResultKind::Measured, summary).with_figures(
        counts,
        f.total_time_s,
        f.total_time_s,
    );
    r.rates.reads_per_s = f.reads_per_s;
    r.rates.writes_per_s = f.writes_per_s;
    r.rates.fsyncs_per_s = f.fsyncs_per_s;
    r.rates.read_mib_per_s = f.read_mib_per_s;
    r.rates.written_mib_per_s = f.written_mib_per_s;
    r.tool = ToolInfo {
        name: "sysbench".into(),
        version,
    };
    if let Some(end) = modified {
        let start = end
            .checked_sub(Duration::from_secs_f64(f.total_time_s))
            .unwrap_or(end);
        r = r.with_started_at(fileio::clock::rfc3339(start));
    }
    if let Some(l) = event_latency(&report.lines, f.events).map_err(|w| report.bad(w))? {
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
