//! Coordination of the processes of one job: who am I, how many are we, wait
//! for each other, exchange results.
//!
//! A job is one process ([`Solo`]) unless tankbench was built with the `mpi`
//! feature and started by an MPI launcher (`mpirun`, `mpiexec`, `srun`), in
//! which case `job::mpi_coord::MpiCoordinator` does the same over MPI. The
//! job logic ([`crate::job`]) only sees this trait, so another transport (a TCP
//! coordinator for Kubernetes Indexed Jobs, say) could be added beside MPI.
//!
//! A build without MPI still reads the launcher's environment, so that
//! `mpirun -np 4 tankbench …` is refused instead of running four independent
//! copies that would each print a report of a quarter of the load.

/// The processes of one job. Every method is collective unless it says
/// otherwise: every rank calls it, in the same order.
///
/// `Sync` because the run observer that holds it is shared with worker
/// threads; implementations must still only be *called* from the thread that
/// created them (MPI is initialised for that thread only).
pub trait Coordinator: Sync {
    /// This process's number, 0 ..= size-1. Rank 0 prints and merges.
    fn rank(&self) -> usize;
    /// Number of processes in the job.
    fn size(&self) -> usize;
    /// Returns on every rank once every rank has called it.
    fn barrier(&self);
    /// Every rank's bytes, in rank order, on every rank. Doubles as a barrier.
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>>;
    /// Every rank's bytes, in rank order, on rank 0; `None` on the others.
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>>;
    /// Not collective, never blocks: whether some other rank has already
    /// called [`Coordinator::finished`] (the stonewall signal).
    fn peer_finished(&self) -> bool;
    /// Tell every other rank that this one finished its run, then wait until
    /// each of them has said the same (so no notice is left in flight for a
    /// later run).
    fn finished(&self);
}

/// A job of one process: every collective is immediate.
pub(crate) struct Solo;

impl Coordinator for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn barrier(&self) {}
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        vec![bytes.to_vec()]
    }
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        Some(vec![bytes.to_vec()])
    }
    fn peer_finished(&self) -> bool {
        false
    }
    fn finished(&self) {}
}

/// Environment variables through which launchers tell a process its place in a
/// job. Job sizes first, then ranks.
const SIZE_VARIABLES: &[&str] = &[
    "OMPI_COMM_WORLD_SIZE", // Open MPI's mpirun
    "PMI_SIZE",             // MPICH / Intel MPI (Hydra), srun --mpi=pmi2
    "MV2_COMM_WORLD_SIZE",  // MVAPICH2
    // Slurm: the tasks of this step. Not SLURM_NTASKS, which a batch script
    // also sees for its whole allocation while it starts a single tankbench.
    "SLURM_STEP_NUM_TASKS",
];
const RANK_VARIABLES: &[&str] = &[
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK", // PMIx launchers (Open MPI 5 / PRRTE, srun --mpi=pmix)
    "MV2_COMM_WORLD_RANK",
    "SLURM_PROCID",
];
/// Variables only an MPI launcher sets (Slurm's are also there for plain,
/// single-task programs).
const MPI_ONLY_VARIABLES: &[&str] = &[
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "PMI_RANK",
    "PMIX_RANK",
    "MV2_COMM_WORLD_SIZE",
];

/// What the environment says about the launch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Launch {
    /// Largest job size announced, with the variable that said so.
    pub size: Option<(u64, String)>,
    /// A rank above 0, with the variable that said so.
    pub rank: Option<(u64, String)>,
    /// Some variable that only MPI launchers set is present.
    pub mpi_launcher: bool,
}

impl Launch {
    /// Read the launcher variables through `get` (the process environment, or
    /// a map in tests). Unparsable values are ignored.
    pub fn detect(get: impl Fn(&str) -> Option<String>) -> Launch {
        let num = |name: &str| get(name).and_then(|v| v.trim().parse::<u64>().ok());
        let mut launch = Launch::default();
        for &name in SIZE_VARIABLES {
            if let Some(n) = num(name) {
                if launch.size.as_ref().is_none_or(|(m, _)| n > *m) {
                    launch.size = Some((n, name.to_string()));
                }
            }
        }
        for &name in RANK_VARIABLES {
            if let Some(r) = num(name) {
                if r > 0 && launch.rank.is_none() {
                    launch.rank = Some((r, name.to_string()));
                }
            }
        }
        launch.mpi_launcher = MPI_ONLY_VARIABLES.iter().any(|n| get(n).is_some());
        launch
    }

    pub(crate) fn from_process_environment() -> Launch {
        Launch::detect(|name| std::env::var(name).ok())
    }

    /// More than one process was started for this job.
    pub(crate) fn is_multi_process(&self) -> bool {
        self.size.as_ref().is_some_and(|(n, _)| *n > 1) || self.rank.is_some()
    }

    /// Why we believe this is a multi-process launch: `OMPI_COMM_WORLD_SIZE=2`.
    pub(crate) fn evidence(&self) -> String {
        match (&self.size, &self.rank) {
            (Some((n, var)), _) if *n > 1 => format!("{var}={n}"),
            (_, Some((r, var))) => format!("{var}={r}"),
            _ => "no launcher variables".to_string(),
        }
    }
}

/// The refusal of a multi-process launch by a build without MPI.
pub(crate) fn refusal_without_mpi(launch: &Launch) -> String {
    format!(
        "tankbench: started as one of several processes of a parallel job ({}), but this build \
         has no MPI support, so each process would run alone and report only its own share. \
         Build with MPI: cargo build --release -p tankbench --features mpi (see docs/distributed.md)",
        launch.evidence()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn launch(vars: &[(&str, &str)]) -> Launch {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Launch::detect(|n| map.get(n).cloned())
    }

    #[test]
    fn launchers_are_recognised() {
        assert!(!launch(&[]).is_multi_process());
        let l = launch(&[("OMPI_COMM_WORLD_SIZE", "2"), ("OMPI_COMM_WORLD_RANK", "0")]);
        assert!(l.is_multi_process() && l.mpi_launcher);
        assert_eq!(l.evidence(), "OMPI_COMM_WORLD_SIZE=2");
        assert!(launch(&[("PMI_SIZE", "4")]).is_multi_process());
        assert!(launch(&[("SLURM_STEP_NUM_TASKS", "3")]).is_multi_process());
        // A rank above 0 alone proves several processes (PMIx sets no size).
        let l = launch(&[("PMIX_RANK", "1")]);
        assert!(l.is_multi_process());
        assert_eq!(l.evidence(), "PMIX_RANK=1");
    }

    #[test]
    fn single_process_launches_pass() {
        // mpirun -np 1, and a plain program inside a Slurm batch script.
        assert!(!launch(&[("OMPI_COMM_WORLD_SIZE", "1"), ("PMIX_RANK", "0")]).is_multi_process());
        let l = launch(&[("SLURM_NTASKS", "8"), ("SLURM_PROCID", "0")]);
        assert!(!l.is_multi_process());
        assert!(!l.mpi_launcher);
        assert!(!launch(&[("OMPI_COMM_WORLD_SIZE", "two")]).is_multi_process());
    }

    #[test]
    fn refusal_names_the_feature() {
        let msg = refusal_without_mpi(&launch(&[("OMPI_COMM_WORLD_SIZE", "2")]));
        assert!(msg.contains("--features mpi"), "{msg}");
        assert!(msg.contains("OMPI_COMM_WORLD_SIZE=2"), "{msg}");
    }

    #[test]
    fn solo_is_a_job_of_one() {
        let s = Solo;
        assert_eq!((s.rank(), s.size()), (0, 1));
        assert_eq!(s.all_gather(b"x"), vec![b"x".to_vec()]);
        assert_eq!(s.gather(b"y"), Some(vec![b"y".to_vec()]));
        assert!(!s.peer_finished());
    }
}
