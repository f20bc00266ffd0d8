//! A fio job as the one workload a prediction takes (`tankbench simulate
//! --fio`): the simulator runs one [`RunSpec`] of several threads, so a job
//! file is predicted when it is one group of one job; its `numjobs` clones
//! become the threads. What the simulator does not model is refused in fio's
//! words, never dropped.

use super::error::FioError;
use super::plan::Plan;
use crate::spec::{FileSet, RunSpec};

fn refused(problem: impl Into<String>) -> FioError {
    FioError::Usage(format!("simulate --fio: {}", problem.into()))
}

impl Plan {
    /// The plan's one group as one workload: the clones of its one job as
    /// threads, their files and counts together.
    pub fn as_one_workload(&self) -> Result<RunSpec, FioError> {
        let [group] = self.groups.as_slice() else {
            return Err(refused(format!(
                "the jobs form {} groups; a prediction is of one group (accepted: one job, with numjobs for threads)",
                self.groups.len()
            )));
        };
        let first = &group.clones[0];
        if group.clones.iter().any(|c| c.job != first.job) {
            return Err(refused(
                "the group has several jobs running side by side; a prediction is of one job (accepted: one job, with numjobs for threads)",
            ));
        }
        if first.warmup_s > 0 || !first.startdelay.is_zero() {
            return Err(refused(
                "ramp_time and startdelay are not simulated (a prediction starts from the model's steady state)",
            ));
        }
        let w = &first.spec;
        let threads = u32::try_from(group.clones.len()).unwrap_or(u32::MAX);
        // fio's fsync=1 on a job that only writes is a sync after every
        // write: the fsync-all the simulator models (the last write's sync,
        // which fio leaves out, aside).
        let fsync_all = match w.sync_every_writes {
            0 => false,
            1 if w.mode.writes() && !w.mode.mixes() => true,
            n => {
                return Err(refused(format!(
                    "fsync={n} (or fdatasync) is simulated only as fsync=1 on a job that only writes (fio then syncs after every write)"
                )))
            }
        };
        let shared = group
            .clones
            .iter()
            .all(|c| c.spec.files.names == w.files.names);
        let file_num = if shared {
            w.files.file_num
        } else {
            w.files.file_num * u64::from(threads)
        };
        let files = FileSet::builder()
            .dir(w.files.dir.clone())
            .file_num(file_num)
            .block_size(w.files.block_size)
            .total_size(w.files.file_size * file_num)
            .extra_flags(w.files.extra_flags)
            .data(w.files.data);
        RunSpec::builder()
            .files(files)
            .mode(w.mode)
            .rw_ratio(w.rw_ratio)
            .io_mode(w.io_mode)
            .async_backlog(w.async_backlog)
            .fsync_freq(0)
            .fsync_all(fsync_all)
            .fsync_end(w.fsync_end)
            .fsync_mode(w.fsync_mode)
            .threads(threads)
            .events(group.clones.iter().map(|c| c.spec.events).sum())
            .time_s(w.time_s)
            .rate(w.rate * u64::from(threads))
            .rand_seed(w.rand_seed)
            .percentile(95)
            .build()
            .map_err(|e| refused(crate::text::one_line(e)))
    }
}

#[cfg(test)]
mod tests {
    use crate::fio::job::Jobs;
    use crate::fio::parse::{parse_job_text, Expansion};
    use crate::fio::plan::Plan;
    use crate::spec::Mode;
    use std::path::Path;

    fn plan(text: &str) -> Plan {
        let expansion = Expansion {
            var: &|_| None,
            keywords: [("$pagesize", 4096), ("$mb_memory", 1000), ("$ncpus", 2)],
        };
        let t = parse_job_text(text, Path::new("t.fio"), &expansion).unwrap();
        Plan::of(&Jobs::from_texts(&[t]).unwrap()).unwrap()
    }

    #[test]
    fn clones_become_threads_and_fsync_1_on_writes_is_fsync_all() {
        let w = plan(
            "[s]\nrw=randwrite\nbs=4k\nsize=64m\nfsync=1\nnumjobs=4\ntime_based\nruntime=30\n",
        )
        .as_one_workload()
        .unwrap();
        assert_eq!((w.threads, w.mode, w.time_s), (4, Mode::RndWr, 30));
        assert!(w.fsync_all);
        assert_eq!(w.sync_every_writes, 0);
        assert_eq!(w.files.file_num, 4);
        assert_eq!(w.files.file_size, 64 << 20);
    }

    #[test]
    fn what_the_simulator_does_not_model_is_refused() {
        for (text, part) in [
            ("[a]\nsize=1m\n[b]\nsize=1m\n", "several jobs"),
            ("[a]\nsize=1m\n[b]\nstonewall\nsize=1m\n", "2 groups"),
            ("[a]\nrw=randrw\nsize=1m\nfsync=1\n", "fsync=1"),
            ("[a]\nrw=randwrite\nsize=1m\nfsync=4\n", "fsync=4"),
            (
                "[a]\nsize=1m\ntime_based\nruntime=5\nramp_time=1\n",
                "ramp_time",
            ),
        ] {
            let e = plan(text).as_one_workload().unwrap_err().to_string();
            assert!(e.contains(part), "{text}: {e}");
        }
    }
}
