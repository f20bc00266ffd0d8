//! fio's report of a run: one model ([`Report`]) built from the clones'
//! runs, and its renderers: fio's text layout ([`text`]) and its JSON
//! (`json`, and `json+` with latency bins, [`json`]).
//!
//! Entries follow fio's `group_reporting` rule (stat.c, `show_run_stats`):
//! a job with it joins the entry of the job before when both are in the same
//! group and that one reports as a group too; every other job, each
//! `numjobs` clone included, is an entry of its own. Within an entry counts
//! and bytes add up, latencies merge bucket by bucket, and the runtime is the
//! longest clone's. tankbench measures one latency per I/O, from its
//! submission to its completion; fio's `lat` and `clat` of a synchronous
//! engine are that same interval (its `slat` is zero), so the figure stands
//! for both, and the text report prints it as `lat`.

pub mod json;
pub mod text;

use super::execute::{CloneRun, Outcome};
use super::job::Jobs;
use super::settings::Rw;
use crate::result::{RunResult, Warning};
use crate::run::histograms::new_hdr;
use hdrhistogram::Histogram;

/// The figures of one direction (reads or writes) of an entry.
#[derive(Debug, Clone)]
pub struct Direction {
    pub ios: u64,
    pub bytes: u64,
    /// The entry's runtime when it did I/O this way, else 0 (as fio).
    pub runtime_ms: u64,
    /// Latency of each I/O, ns.
    pub lat: Histogram<u64>,
}

impl Direction {
    fn new() -> Direction {
        Direction {
            ios: 0,
            bytes: 0,
            runtime_ms: 0,
            lat: new_hdr(),
        }
    }

    /// Bytes per second over the runtime.
    pub fn bw_bytes(&self) -> f64 {
        if self.runtime_ms == 0 {
            0.0
        } else {
            self.bytes as f64 * 1000.0 / self.runtime_ms as f64
        }
    }

    pub fn iops(&self) -> f64 {
        if self.runtime_ms == 0 {
            0.0
        } else {
            self.ios as f64 * 1000.0 / self.runtime_ms as f64
        }
    }
}

/// One entry of the report: a job clone, or the jobs reported as a group.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    pub group: u32,
    /// Clones in it.
    pub jobs: u32,
    pub description: Option<String>,
    /// The first job's own options, as written.
    pub job_options: Vec<(String, String)>,
    pub rw: Rw,
    pub bs: u64,
    pub engine: &'static str,
    pub iodepth: u32,
    pub read: Direction,
    pub write: Direction,
    /// The `fsync=N` / `fdatasync=N` syncs.
    pub sync: Histogram<u64>,
    pub fdatasync: bool,
    /// The longest clone's measured time, ms.
    pub runtime_ms: u64,
    /// The clones' measured times added up, ms (fio's `job_runtime`).
    pub job_runtime_ms: u64,
    pub ended_unix_s: u64,
}

/// A group's line in "Run status group N": per direction, the bandwidth of
/// all its clones together and the range over clones.
#[derive(Debug, Clone, Default)]
pub struct GroupStatus {
    pub id: u32,
    pub read: Option<DirectionStatus>,
    pub write: Option<DirectionStatus>,
}

#[derive(Debug, Clone, Default)]
pub struct DirectionStatus {
    pub bytes: u64,
    /// All bytes over the longest runtime, bytes/s.
    pub aggregate_bw: f64,
    pub min_bw: f64,
    pub max_bw: f64,
    pub min_run_ms: u64,
    pub max_run_ms: u64,
}

/// What tankbench adds to fio's report, under a key of its own in JSON.
#[derive(Debug, Clone, Default)]
pub struct Additions {
    /// Each clone's run as tankbench records it (workload, environment with
    /// ZFS facts, warnings).
    pub results: Vec<RunResult>,
    /// The clones' warnings, each once.
    pub warnings: Vec<Warning>,
    pub notes: Vec<String>,
    pub interrupted: bool,
}

/// The whole report.
#[derive(Debug, Clone)]
pub struct Report {
    pub entries: Vec<Entry>,
    pub groups: Vec<GroupStatus>,
    /// The first job's global options, as written (fio's "global options").
    pub global_options: Vec<(String, String)>,
    pub timestamp_unix_s: u64,
    pub additions: Additions,
}

fn millis(seconds: f64) -> u64 {
    // A measured period: finite, not negative, far below 2^64 ms.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ms = (seconds * 1000.0).round() as u64;
    ms.max(1)
}

impl Report {
    /// The report of `outcome`, whose runs come from `jobs`' plan.
    pub fn new(jobs: &Jobs, outcome: &Outcome, notes: Vec<String>) -> Report {
        let mut entries: Vec<Entry> = Vec::new();
        let mut last_grouped: Option<u32> = None;
        for run in &outcome.runs {
            let job = &jobs.jobs[run.job];
            let joins = job.settings.group_reporting && last_grouped == Some(run.group);
            if !joins {
                entries.push(Entry::of_job(jobs, run));
            }
            let entry = entries.last_mut().expect("an entry was pushed");
            if joins {
                entry.jobs += 1;
            }
            entry.add(run);
            last_grouped = job.settings.group_reporting.then_some(run.group);
        }
        let groups = group_status(&outcome.runs);
        let mut warnings: Vec<Warning> = Vec::new();
        for w in outcome.runs.iter().flat_map(|r| &r.result.warnings) {
            if !warnings.iter().any(|x| x.code == w.code) {
                warnings.push(Warning {
                    code: w.code.clone(),
                    message: in_fio_words(&w.message),
                    hint: in_fio_words(&w.hint),
                });
            }
        }
        Report {
            global_options: jobs
                .jobs
                .first()
                .map(|j| j.global_options.clone())
                .unwrap_or_default(),
            timestamp_unix_s: outcome
                .runs
                .iter()
                .map(|r| r.ended_unix_s)
                .max()
                .unwrap_or(0),
            entries,
            groups,
            additions: Additions {
                results: outcome.runs.iter().map(|r| r.result.clone()).collect(),
                warnings,
                notes,
                interrupted: outcome.interrupted,
            },
        }
    }
}

impl Entry {
    fn of_job(jobs: &Jobs, run: &CloneRun) -> Entry {
        let job = &jobs.jobs[run.job];
        let s = &job.settings;
        Entry {
            name: job.name.clone(),
            group: run.group,
            jobs: 1,
            description: s.description.clone(),
            job_options: job.job_options.clone(),
            rw: s.rw,
            bs: s.bs,
            engine: s.ioengine.name(),
            iodepth: s.iodepth,
            read: Direction::new(),
            write: Direction::new(),
            sync: new_hdr(),
            fdatasync: s.fdatasync > 0,
            runtime_ms: 0,
            job_runtime_ms: 0,
            ended_unix_s: 0,
        }
    }

    fn add(&mut self, run: &CloneRun) {
        let c = &run.result.counts;
        let ms = millis(run.seconds);
        self.runtime_ms = self.runtime_ms.max(ms);
        self.job_runtime_ms += ms;
        self.ended_unix_s = self.ended_unix_s.max(run.ended_unix_s);
        for (d, ios, bytes, lat) in [
            (&mut self.read, c.reads, c.bytes_read, &run.read),
            (&mut self.write, c.writes, c.bytes_written, &run.write),
        ] {
            d.ios += ios;
            d.bytes += bytes;
            let _ = d.lat.add(lat);
            if d.ios > 0 {
                d.runtime_ms = self.runtime_ms;
            }
        }
        let _ = self.sync.add(&run.sync);
    }
}

/// "Run status group" of each group.
fn group_status(runs: &[CloneRun]) -> Vec<GroupStatus> {
    let mut groups: Vec<GroupStatus> = Vec::new();
    for run in runs {
        if groups.last().is_none_or(|g| g.id != run.group) {
            groups.push(GroupStatus {
                id: run.group,
                ..GroupStatus::default()
            });
        }
        let g = groups.last_mut().expect("a group was pushed");
        let c = &run.result.counts;
        let ms = millis(run.seconds);
        for (slot, bytes) in [(&mut g.read, c.bytes_read), (&mut g.write, c.bytes_written)] {
            if bytes == 0 {
                continue;
            }
            let bw = bytes as f64 * 1000.0 / ms as f64;
            let s = slot.get_or_insert(DirectionStatus {
                min_bw: f64::INFINITY,
                min_run_ms: u64::MAX,
                ..DirectionStatus::default()
            });
            s.bytes += bytes;
            s.min_bw = s.min_bw.min(bw);
            s.max_bw = s.max_bw.max(bw);
            s.min_run_ms = s.min_run_ms.min(ms);
            s.max_run_ms = s.max_run_ms.max(ms);
            s.aggregate_bw = s.bytes as f64 * 1000.0 / s.max_run_ms as f64;
        }
    }
    groups
}

/// fileio's option words in a warning, as a fio job writes them (the
/// warnings are fileio's, shared with `tankbench fileio`).
const FIO_WORDS: &[(&str, &str)] = &[
    ("--file-extra-flags=direct", "direct=1"),
    ("--file-extra-flags=dsync", "sync=dsync"),
    ("--file-extra-flags=sync", "sync=1"),
    ("--file-fsync-all", "fsync=1"),
    ("--file-fsync-end=off", "end_fsync=0"),
    ("--file-fsync-freq", "fsync"),
    ("--file-total-size", "size"),
    ("--file-block-size", "bs"),
    ("--file-num", "nrfiles"),
    ("--file-test-mode=rndwr", "rw=randwrite"),
    ("--file-test-mode=rndrd", "rw=randread"),
    ("--file-test-mode=rndrw", "rw=randrw"),
    ("--file-test-mode=seqwr", "rw=write"),
    ("--file-test-mode", "rw"),
    ("--file-io-mode=mmap", "ioengine=mmap"),
    ("--file-io-mode=sync", "ioengine=psync"),
    ("--file-data=random", "buffer_compress_percentage=0"),
    ("--file-rw-ratio", "rwmixread"),
    ("--warmup", "ramp_time"),
    ("--time", "runtime"),
];

/// `text` with fileio's option words replaced by fio's.
pub fn in_fio_words(text: &str) -> String {
    FIO_WORDS
        .iter()
        .fold(text.to_string(), |t, (from, to)| t.replace(from, to))
}
