//! A job onto fileio's typed workload: each `numjobs` clone of a job is one
//! [`RunSpec`] of one thread (fio runs each clone as its own thread or
//! process, with its own files, its own sequential position, its own
//! count and its own rate), and the clones of a group run side by side.
//! Where fio and fileio differ, the job is refused in fio's words rather
//! than run approximately; what stays different is in docs/fio.md.

use super::error::FioError;
use super::job::{FioJob, Jobs};
use super::settings::{IoEngine, JobSettings, OpenSync, Rw};
use crate::spec::{
    DataPattern, ExtraFlags, FileSet, FsyncMode, IoMode, Mode, RateProcess, RunSpec,
};
use std::path::PathBuf;
use std::time::Duration;

/// fio's default percentiles (`percentile_list`'s default), which the report
/// prints.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The seed of the first clone with `randrepeat=1` (each clone adds its
/// number): any fixed value repeats the offsets from run to run.
const REPEAT_SEED: u64 = 0x89;

/// One clone of a job, ready to run.
#[derive(Debug, Clone)]
pub struct ClonePlan {
    /// Index of its job in [`Jobs::jobs`].
    pub job: usize,
    /// Its number among the job's clones (fio's subjob number), from 0.
    pub clone: u32,
    pub spec: RunSpec,
    pub startdelay: Duration,
    /// `ramp_time`, whole seconds.
    pub warmup_s: u64,
}

/// The clones of one reporting group, run side by side.
#[derive(Debug, Clone)]
pub struct GroupPlan {
    pub id: u32,
    pub clones: Vec<ClonePlan>,
}

/// A file the jobs use, which tankbench creates before the first group and
/// removes at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutFile {
    pub path: PathBuf,
    /// Bytes, as fio sizes it (size / nrfiles, or filesize).
    pub size: u64,
    /// Some job reads it, so it is written full before the jobs start, as
    /// fio lays out a file a job reads; otherwise it is only allocated.
    pub fill: bool,
    pub data: DataPattern,
}

/// Everything an invocation runs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub groups: Vec<GroupPlan>,
    pub files: Vec<LayoutFile>,
    /// Notes for stderr: settings that change nothing, as in fio.
    pub notes: Vec<String>,
}

impl Plan {
    /// Map every job; the first that cannot run as fio would is refused.
    pub fn of(jobs: &Jobs) -> Result<Plan, FioError> {
        let mut plan = Plan {
            groups: Vec::new(),
            files: Vec::new(),
            notes: Vec::new(),
        };
        let mut seed = REPEAT_SEED;
        for (index, job) in jobs.jobs.iter().enumerate() {
            let mapped = Mapped::of(job)?;
            if job.settings.iodepth > 1 && !job.settings.ioengine.queues() {
                plan.notes.push(format!(
                    "job '{}': iodepth={} has no effect with ioengine={} (a synchronous engine), as in fio",
                    job.name,
                    job.settings.iodepth,
                    job.settings.ioengine.name()
                ));
            }
            for clone in 0..job.settings.numjobs {
                let names = mapped.file_names(job, clone);
                for name in &names {
                    plan.add_file(mapped.dir.join(name), mapped.file_size, &job.settings);
                }
                let spec = mapped.spec(names, if job.settings.randrepeat { seed } else { 0 })?;
                seed += 1;
                let clone_plan = ClonePlan {
                    job: index,
                    clone,
                    spec,
                    startdelay: Duration::from_micros(job.settings.startdelay_us),
                    warmup_s: mapped.warmup_s,
                };
                match plan.groups.last_mut() {
                    Some(g) if g.id == job.group => g.clones.push(clone_plan),
                    _ => plan.groups.push(GroupPlan {
                        id: job.group,
                        clones: vec![clone_plan],
                    }),
                }
            }
        }
        Ok(plan)
    }

    /// A file of a job: new, or one that another job uses too (the larger
    /// size wins, and it is filled when any of them reads).
    fn add_file(&mut self, path: PathBuf, size: u64, s: &JobSettings) {
        let data = data_pattern(s);
        match self.files.iter_mut().find(|f| f.path == path) {
            Some(f) => {
                f.size = f.size.max(size);
                f.fill |= s.rw.reads();
                if data == DataPattern::Random {
                    f.data = DataPattern::Random;
                }
            }
            None => self.files.push(LayoutFile {
                path,
                size,
                fill: s.rw.reads(),
                data,
            }),
        }
    }
}

fn data_pattern(s: &JobSettings) -> DataPattern {
    if s.zero_buffers || s.buffer_compress_percentage == 100 {
        DataPattern::Zero
    } else {
        DataPattern::Random
    }
}

/// What every clone of a job shares.
struct Mapped<'a> {
    job: &'a FioJob,
    dir: PathBuf,
    /// Bytes of each file as laid out.
    file_size: u64,
    /// Files per clone.
    nrfiles: u64,
    /// Bytes of each file that I/O reaches: whole blocks only, as fio.
    region: u64,
    events: u64,
    time_s: u64,
    warmup_s: u64,
    mode: Mode,
    rw_ratio: f64,
}

/// Whole seconds of a time option, or a refusal naming it.
fn whole_seconds(job: &FioJob, option: &str, us: u64) -> Result<u64, FioError> {
    if us.is_multiple_of(1_000_000) {
        Ok(us / 1_000_000)
    } else {
        Err(job_error(
            job,
            format!(
                "{option} of {us} us: tankbench times runs in whole seconds (accepted: a multiple of 1s)"
            ),
        ))
    }
}

fn job_error(job: &FioJob, problem: impl Into<String>) -> FioError {
    FioError::Job {
        job: job.name.clone(),
        problem: problem.into(),
    }
}

/// Settings that fio combines in ways fileio does not, refused.
fn check_together(job: &FioJob) -> Result<(), FioError> {
    let s = &job.settings;
    if s.direct && !s.bs.is_multiple_of(512) {
        return Err(job_error(
            job,
            format!(
                "direct=1 needs bs to be a multiple of 512 (the smallest logical sector); {} is not",
                s.bs
            ),
        ));
    }
    if s.fsync > 0 && s.fdatasync > 0 {
        return Err(job_error(
            job,
            "fsync and fdatasync together are not supported (accepted: one of them)",
        ));
    }
    if s.rate_iops > 0 && s.rw.mixed() {
        return Err(job_error(
            job,
            "rate_iops with a read/write mix is not supported: fio paces reads and writes each at that rate, tankbench paces one stream (accepted: rate_iops on a read-only or write-only job)",
        ));
    }
    Ok(())
}

/// fileio's mode of the job's `rw`, and the read/write ratio of a mix.
fn mode_of(job: &FioJob) -> Result<(Mode, f64), FioError> {
    let s = &job.settings;
    Ok(match s.rw {
        Rw::Read => (Mode::SeqRd, 0.0),
        // The files are laid out before: sequential writes go over them,
        // as fio's do.
        Rw::Write => (Mode::SeqRewr, 0.0),
        Rw::RandRead => (Mode::RndRd, 0.0),
        Rw::RandWrite => (Mode::RndWr, 0.0),
        Rw::RandRw => match s.rwmixread {
            100 => (Mode::RndRd, 0.0),
            0 => (Mode::RndWr, 0.0),
            r => (Mode::RndRw, f64::from(r) / f64::from(100 - r)),
        },
        Rw::ReadWrite => match s.rwmixread {
            100 => (Mode::SeqRd, 0.0),
            0 => (Mode::SeqRewr, 0.0),
            r => (Mode::SeqRw, f64::from(r) / f64::from(100 - r)),
        },
    })
}

impl<'a> Mapped<'a> {
    fn of(job: &'a FioJob) -> Result<Mapped<'a>, FioError> {
        let s = &job.settings;
        let explicit: Option<Vec<&str>> = s
            .filename
            .as_deref()
            .map(|f| f.split(':').filter(|n| !n.is_empty()).collect());
        let nrfiles = match &explicit {
            Some(names) if names.is_empty() => {
                return Err(job_error(job, "filename names no file"))
            }
            Some(names) => names.len() as u64,
            None => s.nrfiles,
        };
        let file_size = match (s.filesize, s.size) {
            (Some(f), _) => f,
            (None, Some(size)) => size / nrfiles,
            (None, None) => {
                return Err(job_error(
                    job,
                    "size or filesize is needed: tankbench creates the files it tests (fio would use an existing file's size)",
                ))
            }
        };
        let region = file_size / s.bs * s.bs;
        if region == 0 {
            return Err(job_error(
                job,
                format!(
                    "bs={} is larger than each file ({file_size} bytes): no I/O fits (accepted: a bs up to the file size)",
                    s.bs
                ),
            ));
        }
        let time_s = whole_seconds(job, "runtime", s.runtime_us)?;
        if s.time_based && time_s == 0 {
            return Err(job_error(
                job,
                "time_based needs a runtime (accepted: runtime=SECONDS)",
            ));
        }
        let warmup_s = whole_seconds(job, "ramp_time", s.ramp_time_us)?;
        if warmup_s > 0 && !s.time_based {
            return Err(job_error(
                job,
                "ramp_time is supported with time_based only (then the ramp runs before runtime; without it fio counts the ramp's I/O towards size)",
            ));
        }
        check_together(job)?;
        let (mode, rw_ratio) = mode_of(job)?;
        let io_bytes = match s.size {
            Some(size) => size.min(nrfiles * file_size),
            None => nrfiles * file_size,
        };
        // fio does whole blocks of each file: files of 136533 bytes hold 33
        // blocks of 4 KiB each.
        let blocks =
            (io_bytes / file_size.max(1)) * (region / s.bs) + (io_bytes % file_size.max(1)) / s.bs;
        let events = if s.time_based {
            0
        } else {
            blocks.saturating_mul(s.loops)
        };
        let dir = PathBuf::from(s.directory.as_deref().unwrap_or("."));
        Ok(Mapped {
            job,
            dir,
            file_size,
            nrfiles,
            region,
            events,
            time_s,
            warmup_s,
            mode,
            rw_ratio,
        })
    }

    /// The files of clone `clone`: the job's `filename`s (shared by every
    /// clone), else fio's `jobname.clone.file`.
    fn file_names(&self, job: &FioJob, clone: u32) -> Vec<PathBuf> {
        match job.settings.filename.as_deref() {
            Some(f) => f
                .split(':')
                .filter(|n| !n.is_empty())
                .map(PathBuf::from)
                .collect(),
            None => (0..self.nrfiles)
                .map(|f| PathBuf::from(format!("{}.{clone}.{f}", job.name)))
                .collect(),
        }
    }

    fn spec(&self, names: Vec<PathBuf>, seed: u64) -> Result<RunSpec, FioError> {
        let s = &self.job.settings;
        let extra_flags = ExtraFlags {
            sync: s.sync == OpenSync::Sync,
            dsync: s.sync == OpenSync::Dsync,
            direct: s.direct,
        };
        let files = FileSet::builder()
            .dir(self.dir.clone())
            .names(names)
            .block_size(s.bs)
            .total_size(self.region * self.nrfiles)
            .extra_flags(extra_flags)
            .data(data_pattern(s));
        let (io_mode, backlog) = match s.ioengine {
            IoEngine::Sync | IoEngine::Psync => (IoMode::Sync, 1),
            IoEngine::IoUring => (IoMode::Async, s.iodepth),
            IoEngine::Mmap => (IoMode::Mmap, 1),
        };
        let (sync_every, fsync_mode) = if s.fdatasync > 0 {
            (s.fdatasync, FsyncMode::Fdatasync)
        } else {
            (s.fsync, FsyncMode::Fsync)
        };
        RunSpec::builder()
            .files(files)
            .mode(self.mode)
            .rw_ratio(self.rw_ratio)
            .io_mode(io_mode)
            .async_backlog(backlog)
            .fsync_freq(0)
            .fsync_all(false)
            .fsync_end(s.end_fsync)
            .fsync_mode(fsync_mode)
            .sync_every_writes(sync_every)
            .threads(1)
            .events(self.events)
            .time_s(self.time_s)
            .rate(s.rate_iops)
            .rate_process(RateProcess::Linear)
            .rand_seed(seed)
            .percentile(0)
            .percentiles(FIO_PERCENTILES.to_vec())
            .refill_buffers(s.refill_buffers)
            .build()
            .map_err(|e| job_error(self.job, crate::text::one_line(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::parse::{parse_job_text, Expansion};
    use std::path::Path;

    fn plan(text: &str) -> Result<Plan, FioError> {
        let expansion = Expansion {
            var: &|_| None,
            keywords: [("$pagesize", 4096), ("$mb_memory", 1000), ("$ncpus", 2)],
        };
        let t = parse_job_text(text, Path::new("t.fio"), &expansion).unwrap();
        Plan::of(&Jobs::from_texts(&[t])?)
    }

    #[test]
    fn clones_get_their_own_files_and_counts() {
        let p = plan("[w]\nrw=randwrite\nsize=400k\nnrfiles=3\nnumjobs=2\nfsync=2\n").unwrap();
        let g = &p.groups[0];
        assert_eq!(g.clones.len(), 2);
        let spec = &g.clones[1].spec;
        assert_eq!(spec.files.file_path(2), PathBuf::from("./w.1.2"));
        // 136533-byte files hold 33 blocks each: fio 3.33 writes 99.
        assert_eq!(spec.events, 99);
        assert_eq!(spec.files.file_size, 33 * 4096);
        assert_eq!(spec.sync_every_writes, 2);
        assert_eq!((spec.threads, spec.mode), (1, Mode::RndWr));
        assert_eq!(p.files.len(), 6);
        assert!(p.files.iter().all(|f| f.size == 136_533 && !f.fill));
        assert_ne!(g.clones[0].spec.rand_seed, g.clones[1].spec.rand_seed);
    }

    #[test]
    fn shared_filenames_are_laid_out_once_and_filled_for_readers() {
        let p = plan(
            "[global]\nfilename=shared.dat\nsize=1m\n[w]\nrw=write\n[r]\nstonewall\nrw=randread\nnumjobs=2\n",
        )
        .unwrap();
        assert_eq!(p.files.len(), 1);
        assert!(p.files[0].fill);
        assert_eq!(p.groups.len(), 2);
        assert_eq!(p.groups[1].clones.len(), 2);
        assert_eq!(p.groups[0].clones[0].spec.mode, Mode::SeqRewr);
    }

    #[test]
    fn time_based_runs_for_runtime_and_mixes_map_to_ratios() {
        let p = plan("[m]\nrw=randrw\nrwmixread=70\nsize=1m\ntime_based\nruntime=3\n").unwrap();
        let s = &p.groups[0].clones[0].spec;
        assert_eq!((s.events, s.time_s), (0, 3));
        assert!((s.rw_ratio - 70.0 / 30.0).abs() < 1e-6);
        let p = plan("[m]\nrw=randrw\nrwmixread=100\nsize=1m\n").unwrap();
        assert_eq!(p.groups[0].clones[0].spec.mode, Mode::RndRd);
    }

    #[test]
    fn jobs_that_cannot_run_as_fio_would_are_refused_in_fio_words() {
        for (text, part) in [
            ("[j]\nrw=read\n", "size or filesize is needed"),
            ("[j]\nsize=1m\ntime_based\n", "time_based needs a runtime"),
            ("[j]\nsize=1m\nruntime=1500ms\n", "whole seconds"),
            (
                "[j]\nsize=1m\nramp_time=2\n",
                "ramp_time is supported with time_based",
            ),
            (
                "[j]\nsize=1m\nfsync=1\nfdatasync=1\n",
                "fsync and fdatasync",
            ),
            (
                "[j]\nsize=1m\nrw=randrw\nrate_iops=10\n",
                "rate_iops with a read/write mix",
            ),
            ("[j]\nsize=1k\nbs=4k\n", "larger than each file"),
            ("[j]\nsize=1m\nbs=1000\ndirect=1\n", "multiple of 512"),
        ] {
            let e = plan(text).unwrap_err().to_string();
            assert!(e.starts_with("job 'j': "), "{text}: {e}");
            assert!(e.contains(part), "{text}: {e}");
        }
    }

    #[test]
    fn iodepth_on_a_synchronous_engine_is_noted() {
        let p = plan("[j]\nsize=1m\niodepth=8\n").unwrap();
        assert_eq!(p.notes.len(), 1);
        let p = plan("[j]\nsize=1m\niodepth=8\nioengine=io_uring\n").unwrap();
        assert!(p.notes.is_empty());
        assert_eq!(p.groups[0].clones[0].spec.async_backlog, 8);
    }
}
