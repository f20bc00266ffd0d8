//! fio's JSON report (`--output-format=json`, or `json+` with latency bins)
//! as measured results.
//!
//! One result per reporting group (fio's `groupid`): the jobs of a group run
//! at the same time, so they are one workload of several threads. Groups run
//! one after another (`stonewall`), so each is a run of its own. With
//! `group_reporting` a group is one entry holding the sums; without it, one
//! entry per job (each `numjobs` clone included), which are added up here.
//!
//! The job's settings are read from `"global options"` and `"job options"`
//! (the settings given in the job file or on the command line; anything not
//! listed has fio's default). A setting fileio cannot express is refused,
//! naming the job and the field. The mapping is in docs/report.md.

use super::{parse_size, FioJobsDiffer, FioUnsupported, ImportError};
use fileio::result::{
    Counts, LatencyKey, LatencySummary, Percentile, ResultKind, RunResult, ToolInfo, Warning,
};
use fileio::spec::{DataPattern, ExtraFlags, FsyncMode, IoMode, Mode, RunSpec};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// fio's `rw` values that fileio can run, for messages.
const ACCEPTED_RW: &str =
    "read, write, randread, randwrite, randrw (fileio has no sequential mixed or trim mode)";
const ACCEPTED_ENGINES: &str =
    "psync, sync, pvsync, pvsync2, vsync (sync I/O), libaio, io_uring, posixaio (async I/O), mmap";

/// Settings that change which I/O happens in ways no fileio workload can
/// express, with the value(s) that are harmless.
const REFUSED: &[(&str, &[&str], &str)] = &[
    ("zonemode", &["none"], "none (fileio has no zoned mode)"),
    ("bssplit", &[], "a single bs (fileio has one block size)"),
    ("bsrange", &[], "a single bs (fileio has one block size)"),
    (
        "blocksize_range",
        &[],
        "a single bs (fileio has one block size)",
    ),
    (
        "random_distribution",
        &["random"],
        "random (fileio draws offsets uniformly)",
    ),
    (
        "percentage_random",
        &["100"],
        "100 (fileio's modes are all random or all sequential)",
    ),
    (
        "rate",
        &["0"],
        "0 (a rate per job has no fileio equivalent)",
    ),
    (
        "rate_iops",
        &["0"],
        "0 (a rate per job has no fileio equivalent)",
    ),
    ("rate_min", &["0"], "0"),
    ("rate_iops_min", &["0"], "0"),
    (
        "thinktime",
        &["0"],
        "0 (fileio does not pause between requests)",
    ),
    ("number_ios", &["0"], "0 (use size or runtime)"),
    (
        "verify",
        &["0", "none"],
        "none (fileio does not verify writes)",
    ),
    ("sync_file_range", &[], "fsync or fdatasync"),
    ("write_barrier", &["0"], "0"),
    ("kb_base", &["1024"], "1024 (sizes in powers of 2)"),
];

/// The JSON document in `text`, when it is fio's: fio can print notes before
/// it on stdout, so reading starts at the first line that opens an object.
pub(crate) fn json_start(text: &str) -> Option<Value> {
    let doc = json_document(text)?.ok()?;
    doc.get("fio version").is_some().then_some(doc)
}

/// The first JSON document in `text` (from the first line that opens an
/// object), or why it does not parse; `None` when no line opens one.
pub(crate) fn json_document(text: &str) -> Option<Result<Value, String>> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            let rest = &text[offset..];
            let first = serde_json::Deserializer::from_str(rest)
                .into_iter::<Value>()
                .next()?;
            return Some(first.map_err(|e| parse_error(rest, &e)));
        }
        offset += line.len();
    }
    None
}

/// A JSON syntax error with what stands where it stopped, when that is a
/// number JSON cannot hold (fio and other tools print `nan`, `inf`).
fn parse_error(text: &str, e: &serde_json::Error) -> String {
    let in_word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.');
    let line = text.lines().nth(e.line().saturating_sub(1)).unwrap_or("");
    // serde_json stops inside the word (`nan` fails at the `a`, reading
    // for `null`): the word is the run of number-like characters around it.
    let stop = e.column().saturating_sub(1).min(line.len());
    let (before, after) = line.split_at(line.floor_char_boundary(stop));
    let start = before.trim_end_matches(in_word);
    let word: String = before[start.len()..]
        .chars()
        .chain(after.chars().take_while(|c| in_word(*c)))
        .collect();
    let lower = word.to_ascii_lowercase();
    if lower.contains("nan") || lower.contains("inf") {
        format!("{e}: {word} is not a JSON number (JSON has no NaN or infinity)")
    } else {
        e.to_string()
    }
}

/// One job entry of the report.
struct Job<'a> {
    name: String,
    /// Global options, then the job's own (which win).
    options: BTreeMap<String, String>,
    value: &'a Value,
}

/// The figures of one direction (read, write) or of the syncs, over one or
/// more job entries.
#[derive(Default)]
struct Direction {
    ios: u64,
    bytes: u64,
    runtime_ms: u64,
    /// fio's own rates, kept for a single entry.
    iops: f64,
    bw_bytes: f64,
    lat: Option<Latency>,
}

/// Latency of one direction in ns, as fio reports it.
#[derive(Clone)]
struct Latency {
    n: u64,
    min: f64,
    max: f64,
    mean: f64,
    stddev: f64,
    /// (percentile, ns).
    percentiles: Vec<(f64, f64)>,
    /// json+ only: (bucket value ns, count).
    bins: BTreeMap<u64, u64>,
}

/// Everything in `path`'s fio report, one result per reporting group.
pub fn parse(path: &Path, text: &str) -> Result<Vec<RunResult>, ImportError> {
    let malformed = |what: String| ImportError::FioMalformed {
        path: path.to_path_buf(),
        what,
    };
    let doc = json_start(text).ok_or_else(|| malformed("no fio JSON document".into()))?;
    let version = doc["fio version"]
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("fio-")
        .to_string();
    let globals = string_map(doc.get("global options"));
    let jobs = doc
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no \"jobs\" list".into()))?;
    if jobs.is_empty() {
        return Err(malformed("the \"jobs\" list is empty".into()));
    }
    // Groups in the order they appear.
    let mut groups: Vec<(i64, Vec<Job>)> = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let name = j
            .get("jobname")
            .and_then(Value::as_str)
            .ok_or_else(|| malformed(format!("jobs[{i}] has no \"jobname\"")))?
            .to_string();
        let group = j.get("groupid").and_then(Value::as_i64).unwrap_or(0);
        let mut options = globals.clone();
        options.extend(string_map(j.get("job options")));
        options.remove("name");
        let job = Job {
            name,
            options,
            value: j,
        };
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, list)) => list.push(job),
            None => groups.push((group, vec![job])),
        }
    }
    let timestamp = doc.get("timestamp").and_then(Value::as_u64);
    groups
        .iter()
        .map(|(_, jobs)| group_result(path, &version, timestamp, jobs))
        .collect()
}

/// The options object as strings (fio prints every value as a string).
fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let text = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), text)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A refusal of `job`'s `field`.
fn unsupported(path: &Path, job: &Job, field: &str, value: &str, accepted: &str) -> ImportError {
    ImportError::FioUnsupported(Box::new(FioUnsupported {
        path: path.to_path_buf(),
        job: job.name.clone(),
        field: field.to_string(),
        value: value.to_string(),
        accepted: accepted.to_string(),
    }))
}

/// Jobs that run together must be one workload, and none may have failed.
fn check_group(path: &Path, jobs: &[Job]) -> Result<(), ImportError> {
    let first = &jobs[0];
    for job in &jobs[1..] {
        let keys: std::collections::BTreeSet<&String> =
            first.options.keys().chain(job.options.keys()).collect();
        if let Some(key) = keys
            .into_iter()
            .find(|k| first.options.get(*k) != job.options.get(*k))
        {
            let value = |j: &Job| {
                j.options
                    .get(key)
                    .cloned()
                    .unwrap_or_else(|| "(default)".into())
            };
            return Err(ImportError::FioJobsDiffer(Box::new(FioJobsDiffer {
                path: path.to_path_buf(),
                job: job.name.clone(),
                first: first.name.clone(),
                field: key.clone(),
                value: value(job),
                first_value: value(first),
            })));
        }
    }
    for job in jobs {
        let error = job.value.get("error").and_then(Value::as_i64).unwrap_or(0);
        if error != 0 {
            return Err(unsupported(
                path,
                job,
                "error",
                &error.to_string(),
                "0 (a job that failed measured nothing whole)",
            ));
        }
    }
    Ok(())
}

/// The threads of a group, and whether fio reported it as one entry
/// (`group_reporting`, all `numjobs` clones summed) or one entry per job.
fn threads_of(path: &Path, jobs: &[Job]) -> Result<(u32, bool), ImportError> {
    let first = &jobs[0];
    let numjobs = match first.options.get("numjobs") {
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| unsupported(path, first, "numjobs", v, "a whole number from 1"))?,
        None => 1,
    };
    if jobs.len() == 1 && numjobs > 1 {
        Ok((numjobs, true))
    } else {
        Ok((u32::try_from(jobs.len()).unwrap_or(u32::MAX), false))
    }
}

/// With group_reporting fio shows the first job's options only; a group
/// with other jobs in it shows in the summed job time.
fn check_group_reported(
    path: &Path,
    job: &Job,
    numjobs: u32,
    runtime_ms: u64,
) -> Result<(), ImportError> {
    let Some(job_ms) = job.value.get("job_runtime").and_then(Value::as_u64) else {
        return Ok(());
    };
    if runtime_ms > 0 && job_ms as f64 > (f64::from(numjobs) + 0.5) * runtime_ms as f64 {
        return Err(unsupported(
            path,
            job,
            "group_reporting",
            "1",
            &format!(
                "a group of job '{}' and its {numjobs} numjobs clones only (the group's \
                 job_runtime of {job_ms} ms says about {:.0} jobs ran)",
                job.name,
                job_ms as f64 / runtime_ms as f64
            ),
        ));
    }
    Ok(())
}

/// Bytes that are not bs per I/O (and no short I/O explains it) mean the
/// options read are not the ones that ran.
fn check_block_size(
    path: &Path,
    jobs: &[Job],
    d: &Direction,
    name: &str,
    block_size: u64,
) -> Result<(), ImportError> {
    if d.ios == 0 || d.bytes == d.ios * block_size {
        return Ok(());
    }
    let short: u64 = jobs
        .iter()
        .filter_map(|j| j.value[name].get("short_ios").and_then(Value::as_u64))
        .sum();
    if short > 0 {
        return Ok(());
    }
    Err(ImportError::FioMalformed {
        path: path.to_path_buf(),
        what: format!(
            "job '{}': {name}: {} bytes in {} I/Os is not bs={block_size} each",
            jobs[0].name, d.bytes, d.ios
        ),
    })
}

fn group_result(
    path: &Path,
    version: &str,
    timestamp: Option<u64>,
    jobs: &[Job],
) -> Result<RunResult, ImportError> {
    check_group(path, jobs)?;
    let first = &jobs[0];
    let (threads, group_reported) = threads_of(path, jobs)?;
    let malformed = |what: String| ImportError::FioMalformed {
        path: path.to_path_buf(),
        what: format!("job '{}': {what}", first.name),
    };
    let read = direction(jobs, "read").map_err(malformed)?;
    let write = direction(jobs, "write").map_err(malformed)?;
    let sync = sync_direction(jobs).map_err(malformed)?;
    if direction(jobs, "trim").map_err(malformed)?.ios > 0 {
        let rw = first.options.get("rw").map_or("trim", String::as_str);
        return Err(unsupported(path, first, "rw", rw, ACCEPTED_RW));
    }
    let runtime_ms = read.runtime_ms.max(write.runtime_ms);
    if runtime_ms == 0 {
        return Err(malformed(
            "\"runtime\" is 0 ms in both read and write; accepted: more than 0 \
             (a run of no time measured nothing)"
                .into(),
        ));
    }
    if group_reported {
        check_group_reported(path, first, threads, runtime_ms)?;
    }
    let mapped = map_workload(path, first, threads)?;
    let spec = &mapped.spec;
    check_block_size(path, jobs, &read, "read", spec.files.block_size)?;
    check_block_size(path, jobs, &write, "write", spec.files.block_size)?;

    let fsyncs = sync.lat.as_ref().map_or(sync.ios, |l| l.n.max(sync.ios));
    let counts = Counts {
        // sysbench counts periodic fsyncs as events; with fsync-all the fsync
        // belongs to its write's event.
        events: read.ios + write.ios + if spec.fsync_all { 0 } else { fsyncs },
        reads: read.ios,
        writes: write.ios,
        fsyncs,
        bytes_read: read.bytes,
        bytes_written: write.bytes,
    };
    let seconds = runtime_ms as f64 / 1000.0;
    let mut summary = spec.summary(&mapped.engine);
    summary.directory = mapped.directory.clone();
    let mut r =
        RunResult::new(ResultKind::Measured, summary).with_figures(counts, seconds, seconds);
    r.tool = ToolInfo {
        name: "fio".into(),
        version: version.to_string(),
    };
    if let Some(end) = timestamp {
        // fio stamps the report when the run ended.
        r = r.with_started_at(fileio::clock::rfc3339_of_unix_seconds(
            end.saturating_sub(runtime_ms.div_ceil(1000)),
        ));
    }
    if jobs.len() == 1 {
        // One entry: fio's own rates, exactly as it printed them.
        r.rates.reads_per_s = read.iops;
        r.rates.writes_per_s = write.iops;
        r.rates.read_mib_per_s = read.bw_bytes / 1_048_576.0;
        r.rates.written_mib_per_s = write.bw_bytes / 1_048_576.0;
    }
    if !group_reported && jobs.len() > 1 {
        r = r.with_threads(jobs.iter().map(job_thread));
    }
    let mut warnings = Vec::new();
    for (key, d) in [
        (LatencyKey::Read, &read),
        (LatencyKey::Write, &write),
        (LatencyKey::Fsync, &sync),
    ] {
        if let Some(l) = &d.lat {
            if jobs.len() > 1 && l.percentiles.is_empty() {
                warnings.push(unmerged_percentiles(key, jobs.len()));
            }
            r = r.with_latency(key, l.summary());
        }
    }
    if spec.fsync_all && fsyncs > write.ios + write.ios / 20 {
        warnings.push(Warning {
            code: "fio_syncs_after_reads".into(),
            message: format!(
                "fio made {fsyncs} syncs for {} writes: with fsync=1, once a write was done fio \
                 syncs before every later I/O, reads included; fileio's fsync-all syncs after \
                 each write only",
                write.ios
            ),
            hint: "reads/s and writes/s compare with a fileio run; fsyncs/s does not".into(),
        });
    }
    Ok(r.with_warnings(warnings))
}

/// One job entry as a thread: (reads + writes, seconds spent in them).
fn job_thread(j: &Job) -> (u64, f64) {
    let (mut ios, mut busy_ns) = (0, 0.0);
    for dir in ["read", "write"] {
        let d = &j.value[dir];
        ios += d.get("total_ios").and_then(Value::as_u64).unwrap_or(0);
        let lat = &d["lat_ns"];
        busy_ns += num(lat, "mean") * num(lat, "N");
    }
    (ios, busy_ns / 1e9)
}

fn unmerged_percentiles(key: LatencyKey, jobs: usize) -> Warning {
    Warning {
        code: "percentiles_not_merged".into(),
        message: format!(
            "fio reported each of the {jobs} jobs on its own without latency bins, so the {key} \
             percentiles of the whole group are unknown"
        ),
        hint: "run fio with --group_reporting or --output-format=json+ to import percentiles"
            .into(),
    }
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

/// The whole number at `section.key`: `None` when the key is absent, and a
/// refusal naming the value when it is there but no count (negative, a
/// fraction, or beyond 2^64 - 1, which JSON allows and fio never prints).
fn whole(v: &Value, section: &str, key: &str) -> Result<Option<u64>, String> {
    match v.get(key) {
        None => Ok(None),
        Some(x) => x.as_u64().map(Some).ok_or_else(|| {
            format!(
                "{section}: \"{key}\" is {x}, out of range; accepted: a whole number \
                 from 0 to {}",
                u64::MAX
            )
        }),
    }
}

/// `total + more` for the sum of `section.key` over several jobs, refused
/// rather than wrapped when it passes 2^64 - 1.
fn add(total: u64, more: u64, section: &str, key: &str) -> Result<u64, String> {
    total.checked_add(more).ok_or_else(|| {
        format!(
            "{section}: \"{key}\" summed over the jobs passes {}, out of range",
            u64::MAX
        )
    })
}

/// One direction added up over the entries.
fn direction(jobs: &[Job], name: &str) -> Result<Direction, String> {
    let mut d = Direction::default();
    let mut lats = Vec::new();
    for j in jobs {
        let Some(v) = j.value.get(name) else {
            if name == "trim" {
                continue;
            }
            return Err(format!("no \"{name}\" section"));
        };
        let field = |key: &str| whole(v, name, key)?.ok_or_else(|| format!("{name}: no \"{key}\""));
        d.ios = add(d.ios, field("total_ios")?, name, "total_ios")?;
        d.bytes = add(d.bytes, field("io_bytes")?, name, "io_bytes")?;
        d.runtime_ms = d.runtime_ms.max(field("runtime")?);
        d.iops += num(v, "iops");
        d.bw_bytes += num(v, "bw_bytes");
        if let Some(l) = latency(v, name, "lat_ns", "clat_ns")? {
            lats.push(l);
        }
    }
    d.lat = merge(&lats);
    Ok(d)
}

/// The syncs: fio counts them in `lat_ns.N` (its `total_ios` stays 0 for
/// fdatasync).
fn sync_direction(jobs: &[Job]) -> Result<Direction, String> {
    let mut d = Direction::default();
    let mut lats = Vec::new();
    for j in jobs {
        if let Some(v) = j.value.get("sync") {
            let ios = whole(v, "sync", "total_ios")?.unwrap_or(0);
            d.ios = add(d.ios, ios, "sync", "total_ios")?;
            if let Some(l) = latency(v, "sync", "lat_ns", "lat_ns")? {
                lats.push(l);
            }
        }
    }
    d.lat = merge(&lats);
    Ok(d)
}

/// A direction's latency: the statistics of `total` (submission to
/// completion), the percentiles and bins of `total` when fio kept them
/// (`lat_percentiles=1`), else of `completion` (fio's default: clat).
fn latency(
    v: &Value,
    section: &str,
    total: &str,
    completion: &str,
) -> Result<Option<Latency>, String> {
    let Some(t) = v.get(total) else {
        return Ok(None);
    };
    let n = whole(t, &format!("{section}.{total}"), "N")?.unwrap_or(0);
    if n == 0 {
        return Ok(None);
    }
    let with_pcts = if t.get("percentile").is_some() {
        t
    } else {
        v.get(completion).unwrap_or(t)
    };
    let mut percentiles: Vec<(f64, f64)> = with_pcts
        .get("percentile")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(p, ns)| Some((p.parse::<f64>().ok()?, ns.as_f64()?)))
                .filter(|(p, _)| *p > 0.0 && *p <= 100.0)
                .collect()
        })
        .unwrap_or_default();
    percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
    let bins = with_pcts
        .get("bins")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(ns, c)| Some((ns.parse::<u64>().ok()?, c.as_u64()?)))
                .filter(|(_, c)| *c > 0)
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(Latency {
        n,
        min: num(t, "min"),
        max: num(t, "max"),
        mean: num(t, "mean"),
        stddev: num(t, "stddev"),
        percentiles,
        bins,
    }))
}

/// Several jobs' latency as one: exact count, min, max, mean and (pooled)
/// standard deviation; percentiles from the summed bins when every job has
/// bins (json+), none otherwise.
fn merge(lats: &[Latency]) -> Option<Latency> {
    match lats {
        [] => None,
        [one] => Some(one.clone()),
        many => {
            let n = many.iter().fold(0u64, |n, l| n.saturating_add(l.n));
            let nf = n as f64;
            let mean = many.iter().map(|l| l.mean * l.n as f64).sum::<f64>() / nf;
            let second = many
                .iter()
                .map(|l| l.n as f64 * (l.stddev * l.stddev + l.mean * l.mean))
                .sum::<f64>()
                / nf;
            let mut bins = BTreeMap::new();
            for l in many {
                for (ns, c) in &l.bins {
                    *bins.entry(*ns).or_insert(0) += c;
                }
            }
            let all_binned = many.iter().all(|l| !l.bins.is_empty());
            let percentiles = if all_binned {
                let ps: Vec<f64> = many[0].percentiles.iter().map(|(p, _)| *p).collect();
                percentiles_of_bins(&bins, &ps)
            } else {
                bins.clear();
                Vec::new()
            };
            Some(Latency {
                n,
                min: many.iter().map(|l| l.min).fold(f64::INFINITY, f64::min),
                max: many.iter().map(|l| l.max).fold(0.0, f64::max),
                mean,
                stddev: (second - mean * mean).max(0.0).sqrt(),
                percentiles,
                bins,
            })
        }
    }
}

/// Percentiles of a binned distribution the way fio computes them: the
/// first bucket whose running count reaches p% of all samples.
fn percentiles_of_bins(bins: &BTreeMap<u64, u64>, ps: &[f64]) -> Vec<(f64, f64)> {
    let total: u64 = bins.values().sum();
    ps.iter()
        .filter_map(|&p| {
            let target = p / 100.0 * total as f64;
            let mut running = 0;
            bins.iter().find_map(|(ns, c)| {
                running += c;
                (running as f64 >= target).then_some((p, *ns as f64))
            })
        })
        .collect()
}

impl Latency {
    fn summary(&self) -> LatencySummary {
        let ms = |ns: f64| ns / 1e6;
        let mut s = LatencySummary {
            count: self.n,
            min_ms: ms(self.min),
            mean_ms: ms(self.mean),
            max_ms: ms(self.max),
            stddev_ms: ms(self.stddev),
            sum_ms: ms(self.mean * self.n as f64),
            percentiles: self
                .percentiles
                .iter()
                .map(|&(p, ns)| Percentile { p, ms: ms(ns) })
                .collect(),
            histogram: self.bins.iter().map(|(ns, c)| (*ns, *c)).collect(),
        };
        // Completion-latency percentiles can fall a little outside the total
        // latency's min and max.
        fileio::summary::clamp_percentiles(&mut s);
        s
    }
}

/// A job's settings as a fileio run.
struct Mapped {
    spec: RunSpec,
    engine: String,
    directory: String,
}

/// One job's settings, read with the job's name at hand for refusals.
struct Settings<'a> {
    path: &'a Path,
    job: &'a Job<'a>,
}

impl Settings<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.job.options.get(key).map(String::as_str)
    }

    /// A boolean option set to anything but 0.
    fn flag(&self, key: &str) -> bool {
        self.get(key).is_some_and(|v| v != "0")
    }

    fn unsupported(&self, field: &str, value: &str, accepted: &str) -> ImportError {
        unsupported(self.path, self.job, field, value, accepted)
    }

    fn size(&self, field: &str) -> Result<Option<u64>, ImportError> {
        self.get(field)
            .map(|v| {
                parse_size(v).ok_or_else(|| {
                    self.unsupported(field, v, "a size in bytes (4k, 8M, 1G); not a percentage")
                })
            })
            .transpose()
    }

    /// A whole number from 1 (`default` when not given).
    fn count(&self, field: &str, default: u64) -> Result<u64, ImportError> {
        match self.get(field) {
            Some(v) => v
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| self.unsupported(field, v, "a whole number from 1")),
            None => Ok(default),
        }
    }

    fn refuse_unmappable(&self) -> Result<(), ImportError> {
        for (field, harmless, accepted) in REFUSED {
            if let Some(v) = self.get(field) {
                if !harmless.contains(&v) {
                    return Err(self.unsupported(field, v, accepted));
                }
            }
        }
        Ok(())
    }

    /// The mode, and the read/write ratio of a mixed one.
    fn mode(&self) -> Result<(Mode, Option<f64>), ImportError> {
        let field = if self.job.options.contains_key("rw") {
            "rw"
        } else {
            "readwrite"
        };
        Ok(match self.get(field).unwrap_or("read") {
            "read" => (Mode::SeqRd, None),
            "write" if self.flag("overwrite") => (Mode::SeqRewr, None),
            "write" => (Mode::SeqWr, None),
            "randread" => (Mode::RndRd, None),
            "randwrite" => (Mode::RndWr, None),
            "randrw" => match self.read_percentage()? {
                100 => (Mode::RndRd, None),
                0 => (Mode::RndWr, None),
                p => (Mode::RndRw, Some(f64::from(p) / f64::from(100 - p))),
            },
            other => return Err(self.unsupported(field, other, ACCEPTED_RW)),
        })
    }

    /// `rwmixread`, or 100 - `rwmixwrite`; fio's default is 50.
    fn read_percentage(&self) -> Result<u32, ImportError> {
        let (field, value) = match (self.get("rwmixread"), self.get("rwmixwrite")) {
            (Some(r), _) => ("rwmixread", r),
            (None, Some(w)) => ("rwmixwrite", w),
            (None, None) => return Ok(50),
        };
        let pct = value.parse::<u32>().ok().filter(|p| *p <= 100);
        match (pct, field) {
            (Some(p), "rwmixread") => Ok(p),
            (Some(p), _) => Ok(100 - p),
            (None, _) => Err(self.unsupported(field, value, "a percentage from 0 to 100")),
        }
    }

    /// One block size for reads and writes.
    fn block_size(&self) -> Result<u64, ImportError> {
        let field = if self.job.options.contains_key("bs") {
            "bs"
        } else {
            "blocksize"
        };
        let Some(v) = self.get(field) else {
            return Ok(4096);
        };
        let sizes: Vec<Option<u64>> = v
            .split(',')
            .filter(|s| !s.is_empty())
            .map(parse_size)
            .collect();
        match sizes.first() {
            Some(Some(b)) if *b > 0 && sizes.iter().all(|s| *s == Some(*b)) => Ok(*b),
            _ => Err(self.unsupported(
                field,
                v,
                "one block size for reads and writes (4k, 16k, 1M)",
            )),
        }
    }

    /// The engine's name, its I/O mode and the queue depth.
    fn io(&self) -> Result<(String, IoMode, u32), ImportError> {
        let engine = self.get("ioengine").unwrap_or("psync");
        let depth = u32::try_from(self.count("iodepth", 1)?).map_err(|_| {
            self.unsupported(
                "iodepth",
                self.get("iodepth").unwrap_or(""),
                "up to 2^32 - 1",
            )
        })?;
        let io_mode = match engine {
            "psync" | "sync" | "pvsync" | "pvsync2" | "vsync" => IoMode::Sync,
            "libaio" | "io_uring" | "posixaio" => IoMode::Async,
            "mmap" => IoMode::Mmap,
            other => return Err(self.unsupported("ioengine", other, ACCEPTED_ENGINES)),
        };
        Ok((engine.to_string(), io_mode, depth))
    }

    /// fsync or fdatasync every N writes (1 = after each write), and which.
    fn syncs(&self) -> Result<(u64, FsyncMode), ImportError> {
        let every = |field: &str| -> Result<u64, ImportError> {
            match self.get(field) {
                None => Ok(0),
                Some(v) => v
                    .parse::<u64>()
                    .map_err(|_| self.unsupported(field, v, "a whole number of blocks (0 = none)")),
            }
        };
        match (every("fsync")?, every("fdatasync")?) {
            (f, d) if f > 0 && d > 0 => Err(self.unsupported(
                "fdatasync",
                self.get("fdatasync").unwrap_or_default(),
                "fsync or fdatasync, not both",
            )),
            (0, d) if d > 0 => Ok((d, FsyncMode::Fdatasync)),
            (f, _) => Ok((f, FsyncMode::Fsync)),
        }
    }

    fn open_flags(&self) -> Result<ExtraFlags, ImportError> {
        let mut flags = ExtraFlags {
            direct: self.flag("direct") || self.get("buffered") == Some("0"),
            ..ExtraFlags::default()
        };
        match self.get("sync") {
            None | Some("0" | "none") => {}
            Some("1" | "sync") => flags.sync = true,
            Some("dsync") => flags.dsync = true,
            Some(other) => return Err(self.unsupported("sync", other, "0, none, 1, sync, dsync")),
        }
        Ok(flags)
    }

    /// Bytes each job works on: `size`, else `filesize` × `nrfiles`.
    fn per_job_size(&self) -> Result<u64, ImportError> {
        match (self.size("size")?, self.size("filesize")?) {
            (Some(s), _) => Ok(s),
            (None, Some(f)) => Ok(f * self.count("nrfiles", 1)?),
            (None, None) => Err(self.unsupported(
                "size",
                "(not given)",
                "a size (fio then used the file's or device's own size, which its report does \
                 not record)",
            )),
        }
    }

    /// (files, total size, directory): each job its own `nrfiles` files of
    /// size / nrfiles, unless `filename` names files the jobs share.
    fn files(&self, threads: u32, per_job: u64) -> Result<(u64, u64, String), ImportError> {
        let nrfiles = self.count("nrfiles", 1)?;
        let (file_num, total) = match self.get("filename") {
            Some(names) => (
                names.split(':').filter(|n| !n.is_empty()).count() as u64,
                per_job,
            ),
            None => (u64::from(threads) * nrfiles, u64::from(threads) * per_job),
        };
        let directory = match (self.get("directory"), self.get("filename")) {
            (Some(d), _) => d.to_string(),
            (None, Some(f)) => Path::new(f.split(':').next().unwrap_or_default())
                .parent()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default(),
            (None, None) => String::new(),
        };
        Ok((file_num, total, directory))
    }

    /// (time limit s, event limit): runtime when given (time_based or not),
    /// else the I/O the jobs were to do.
    fn limits(
        &self,
        threads: u32,
        per_job: u64,
        block_size: u64,
    ) -> Result<(u64, u64), ImportError> {
        let runtime_s = match self.get("runtime") {
            Some(v) => parse_seconds(v)
                .ok_or_else(|| self.unsupported("runtime", v, "a time (30, 30s, 500ms, 2m)"))?,
            None => 0,
        };
        if runtime_s > 0 || self.flag("time_based") {
            return Ok((runtime_s, 0));
        }
        let io = self.size("io_size")?.unwrap_or(per_job);
        let loops = self.count("loops", 1)?;
        Ok((0, u64::from(threads) * (io / block_size) * loops))
    }
}

fn map_workload(path: &Path, job: &Job, threads: u32) -> Result<Mapped, ImportError> {
    let s = Settings { path, job };
    s.refuse_unmappable()?;
    let (mode, rw_ratio) = s.mode()?;
    let block_size = s.block_size()?;
    let (engine, io_mode, depth) = s.io()?;
    let (sync_every, fsync_mode) = s.syncs()?;
    let per_job = s.per_job_size()?;
    let (file_num, total_size, directory) = s.files(threads, per_job)?;
    let (time_s, events) = s.limits(threads, per_job, block_size)?;
    let mut b = RunSpec::builder()
        .dir(directory.clone())
        .total_size(total_size)
        .file_num(file_num)
        .block_size(block_size)
        .extra_flags(s.open_flags()?)
        .data(if s.flag("zero_buffers") {
            DataPattern::Zero
        } else {
            DataPattern::Random
        })
        .mode(mode)
        .io_mode(io_mode)
        .async_backlog(depth)
        .fsync_all(sync_every == 1)
        .fsync_freq(if sync_every == 1 { 0 } else { sync_every })
        .fsync_end(s.flag("end_fsync") || s.flag("fsync_on_close"))
        .fsync_mode(fsync_mode)
        .threads(threads)
        .events(events)
        .time_s(time_s);
    if let Some(r) = rw_ratio {
        b = b.rw_ratio(r);
    }
    let spec = b.build().map_err(|source| ImportError::Workload {
        path: path.to_path_buf(),
        origin: format!("fio job '{}'", job.name),
        source: Box::new(source),
    })?;
    Ok(Mapped {
        spec,
        engine,
        directory,
    })
}

/// fio's time value in whole seconds, rounded up (`30`, `30s`, `500ms`,
/// `2m`, `1h`; a bare number is seconds).
fn parse_seconds(v: &str) -> Option<u64> {
    let t = v.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: f64 = number.parse().ok()?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => 1.0,
        "us" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => return None,
    };
    let s = (n * scale).ceil();
    // Bounded above by the check.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (0.0..1e15).contains(&s).then_some(s as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_times() {
        assert_eq!(parse_seconds("2"), Some(2));
        assert_eq!(parse_seconds("30s"), Some(30));
        assert_eq!(parse_seconds("500ms"), Some(1));
        assert_eq!(parse_seconds("2m"), Some(120));
        assert_eq!(parse_seconds("soon"), None);
    }

    /// The bins of one recorded json+ job give back fio's own percentiles:
    /// the merge of several jobs' bins computes them the way fio does.
    #[test]
    fn recorded_bins_give_fios_percentiles() {
        let doc: Value = serde_json::from_str(include_str!(
            "../../tests/data/import/fio-randwrite-2jobs-fdatasync4-perjob.jsonplus.json"
        ))
        .unwrap();
        for job in doc["jobs"].as_array().unwrap() {
            let l = latency(&job["write"], "write", "lat_ns", "clat_ns")
                .unwrap()
                .unwrap();
            assert!(!l.bins.is_empty());
            let ps: Vec<f64> = l.percentiles.iter().map(|(p, _)| *p).collect();
            assert_eq!(percentiles_of_bins(&l.bins, &ps), l.percentiles);
        }
    }

    #[test]
    fn bin_percentiles_follow_fio() {
        let bins: BTreeMap<u64, u64> = [(10, 50), (20, 45), (30, 5)].into();
        assert_eq!(
            percentiles_of_bins(&bins, &[50.0, 95.0, 99.0]),
            vec![(50.0, 10.0), (95.0, 20.0), (99.0, 30.0)]
        );
    }
}
