//! [`Coordinator`] over MPI (rsmpi), for jobs started by `mpirun`/`srun`.
//!
//! MPI is initialised with `MPI_THREAD_FUNNELED`: worker threads never touch
//! MPI, only the thread that initialised it does (the front end's main
//! thread, which also supervises runs). Every method checks that.

use crate::job::coordinator::Coordinator;
use mpi::datatype::PartitionMut;
use mpi::environment::{Threading, Universe};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use std::thread::ThreadId;

/// Tag of the "this rank finished its run" notices (stonewall).
const TAG_FINISHED: i32 = 17;

pub(crate) struct MpiCoordinator {
    // Field order matters: the world communicator goes before the universe,
    // whose drop calls MPI_Finalize.
    world: SimpleCommunicator,
    _universe: Universe,
    thread: ThreadId,
    rank: usize,
    size: usize,
}

// SAFETY: the raw MPI handles inside are only used from `thread` (checked in
// every method), which is what MPI_THREAD_FUNNELED allows; sharing the
// reference with worker threads only lets them hold it.
unsafe impl Sync for MpiCoordinator {}

impl MpiCoordinator {
    /// Initialise MPI for this process (once per process).
    pub fn init() -> Result<MpiCoordinator, String> {
        let (universe, level) = mpi::initialize_with_threading(Threading::Funneled).ok_or(
            "tankbench: MPI is already initialised in this process; it can be started only once",
        )?;
        if level < Threading::Funneled {
            return Err(format!(
                "tankbench: the MPI library offers only {level:?} thread support; \
                 tankbench needs Funneled (worker threads next to the MPI thread)"
            ));
        }
        let world = universe.world();
        // MPI numbers ranks from 0 and a communicator has at least one.
        let (Ok(rank), Ok(size)) = (usize::try_from(world.rank()), usize::try_from(world.size()))
        else {
            return Err(format!(
                "tankbench: the MPI library reports rank {} of {} processes; both must be positive",
                world.rank(),
                world.size()
            ));
        };
        Ok(MpiCoordinator {
            rank,
            size,
            world,
            _universe: universe,
            thread: std::thread::current().id(),
        })
    }

    fn check_thread(&self) {
        assert_eq!(
            std::thread::current().id(),
            self.thread,
            "MPI called from a thread other than the one that initialised it"
        );
    }

    /// Byte counts and displacements of variable-length parts.
    fn partition(lengths: &[Count]) -> (Vec<Count>, usize) {
        let mut displs = Vec::with_capacity(lengths.len());
        let mut at: Count = 0;
        for &l in lengths {
            displs.push(at);
            at += l;
        }
        (displs, usize_of(at))
    }

    fn split(buf: &[u8], lengths: &[Count], displs: &[Count]) -> Vec<Vec<u8>> {
        lengths
            .iter()
            .zip(displs)
            .map(|(&l, &d)| buf[usize_of(d)..usize_of(d + l)].to_vec())
            .collect()
    }
}

impl Drop for MpiCoordinator {
    /// A last barrier before MPI_Finalize: a launcher ends the whole job as
    /// soon as one rank exits with a non-zero status, so a rank with nothing
    /// to say must not exit (after a failure) before rank 0 has printed it.
    fn drop(&mut self) {
        if std::thread::current().id() == self.thread {
            self.world.barrier();
        }
    }
}

/// A byte count or displacement of a gather: every count is a slice length
/// ([`count_of`]) and every displacement a sum of counts, so none is negative.
fn usize_of(count: Count) -> usize {
    #[allow(clippy::cast_sign_loss)]
    let n = count as usize;
    n
}

fn count_of(bytes: &[u8]) -> Count {
    Count::try_from(bytes.len()).expect("a rank's message fits in 2 GiB")
}

impl Coordinator for MpiCoordinator {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn barrier(&self) {
        self.check_thread();
        self.world.barrier();
    }

    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.check_thread();
        let mut lengths = vec![0 as Count; self.size];
        self.world
            .all_gather_into(&count_of(bytes), &mut lengths[..]);
        let (displs, total) = Self::partition(&lengths);
        let mut buf = vec![0u8; total];
        {
            let mut parts = PartitionMut::new(&mut buf[..], &lengths[..], &displs[..]);
            self.world.all_gather_varcount_into(bytes, &mut parts);
        }
        Self::split(&buf, &lengths, &displs)
    }

    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        self.check_thread();
        let root = self.world.process_at_rank(0);
        let n = count_of(bytes);
        if self.rank != 0 {
            root.gather_into(&n);
            root.gather_varcount_into(bytes);
            return None;
        }
        let mut lengths = vec![0 as Count; self.size];
        root.gather_into_root(&n, &mut lengths[..]);
        let (displs, total) = Self::partition(&lengths);
        let mut buf = vec![0u8; total];
        {
            let mut parts = PartitionMut::new(&mut buf[..], &lengths[..], &displs[..]);
            root.gather_varcount_into_root(bytes, &mut parts);
        }
        Some(Self::split(&buf, &lengths, &displs))
    }

    fn peer_finished(&self) -> bool {
        self.check_thread();
        self.world
            .any_process()
            .immediate_probe_with_tag(TAG_FINISHED)
            .is_some()
    }

    fn finished(&self) {
        self.check_thread();
        let notice: u8 = 1;
        // Non-blocking sends: every rank sends to every other before receiving,
        // which could deadlock with blocking sends that wait for their receiver.
        mpi::request::scope(|scope| {
            let sends: Vec<_> = (0..self.size)
                .filter(|&r| r != self.rank)
                .map(|r| {
                    // r < size, which MPI gave as a C int.
                    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
                    let r = r as i32;
                    self.world.process_at_rank(r).immediate_send_with_tag(
                        scope,
                        &notice,
                        TAG_FINISHED,
                    )
                })
                .collect();
            for _ in 1..self.size {
                let (_n, _status): (u8, _) =
                    self.world.any_process().receive_with_tag(TAG_FINISHED);
            }
            for s in sends {
                s.wait();
            }
        });
    }
}
