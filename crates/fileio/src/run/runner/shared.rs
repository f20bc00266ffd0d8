//! What the main thread and the workers share: the request generator, the
//! per-thread counters, the stop flags and the first failure, and the gate
//! where the workers wait for the start.

use crate::engine::IoError;
use crate::failure::Failure;
use crate::rng::Xoroshiro;
use crate::run::generator::{Generator, Op};
use crate::run::histograms::{CountSnapshot, ThreadCounters};
use crate::spec::RunSpec;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A worker's counters and sysbench histogram at the end of its warm-up.
pub(super) type MeasuredFrom = (CountSnapshot, Vec<u64>);

pub(super) struct Shared {
    pub(super) generator: Generator,
    pub(super) counters: Vec<ThreadCounters>,
    pub(super) stop: AtomicBool,
    /// The stop came from the time limit (workers then say so at INFO level).
    pub(super) time_up: AtomicBool,
    pub(super) failure: Mutex<Option<Failure>>,
    pub(super) failed: AtomicBool,
    pub(super) tickets: AtomicU64,
    /// Raised when the warm-up ends: each worker then drops what its
    /// histograms recorded so far.
    pub(super) measuring_since: AtomicU64,
    /// Per worker: its counters and sysbench histogram where it saw the
    /// warm-up end (None until then).
    pub(super) measured_from: Mutex<Vec<Option<MeasuredFrom>>>,
    /// The clock's start, as an `Instant` and on the [`now_ns`] clock.
    pub(super) start: OnceLock<(Instant, u64)>,
    /// Open loop: next arrival, ns from start, and the RNG of the arrival process.
    pub(super) arrivals: Mutex<(f64, Xoroshiro)>,
    pub(super) finished: Mutex<usize>,
    pub(super) finished_cv: Condvar,
}

impl Shared {
    pub(super) fn new(w: &RunSpec) -> Shared {
        Shared {
            generator: Generator::new(w),
            counters: (0..w.threads).map(|_| ThreadCounters::new()).collect(),
            stop: AtomicBool::new(false),
            time_up: AtomicBool::new(false),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            tickets: AtomicU64::new(0),
            measuring_since: AtomicU64::new(0),
            measured_from: Mutex::new(vec![None; w.threads as usize]),
            start: OnceLock::new(),
            arrivals: Mutex::new((
                0.0,
                Xoroshiro::from_state(0x2545_f491_4f6c_dd1d, 0x1234_5678_9abc_def1),
            )),
            finished: Mutex::new(0),
            finished_cv: Condvar::new(),
        }
    }
}

/// Where the workers wait for the start. Unlike `std::sync::Barrier` it can
/// be cancelled: when a thread cannot be created, or Ctrl-C comes while they
/// start, the ones already waiting are sent home instead of waiting forever.
#[derive(Default)]
pub(super) struct StartGate {
    state: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
struct GateState {
    /// Workers that have arrived.
    ready: usize,
    /// None while closed; Some(true) to run, Some(false) when cancelled.
    open: Option<bool>,
}

impl StartGate {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker arrives and waits; true when the run starts.
    pub(super) fn arrive_and_wait(&self) -> bool {
        let mut st = self.lock();
        st.ready += 1;
        self.cv.notify_all();
        while st.open.is_none() {
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.open == Some(true)
    }

    /// Wait until `n` workers have arrived; false if `stop()` turned true
    /// first (checked a few times a second).
    pub(super) fn wait_until_ready(&self, n: usize, stop: impl Fn() -> bool) -> bool {
        let mut st = self.lock();
        while st.ready < n {
            if stop() {
                return false;
            }
            st = self
                .cv
                .wait_timeout(st, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    pub(super) fn open(&self) {
        self.lock().open = Some(true);
        self.cv.notify_all();
    }

    pub(super) fn cancel(&self) {
        self.lock().open = Some(false);
        self.cv.notify_all();
    }
}

pub(super) fn fail(shared: &Shared, f: Failure) {
    let mut slot = shared.failure.lock().expect("failure lock");
    if slot.is_none() {
        *slot = Some(f);
    }
    shared.failed.store(true, Relaxed);
}

pub(super) fn io_failure(e: &IoError) -> Failure {
    Failure::fatal(e.message())
}

/// Record a finished read or write in counters and histograms.
#[inline]
pub(super) fn count_transfer(shared: &Shared, c: &ThreadCounters, op: Op, bytes: u64) {
    match op {
        Op::Read => {
            c.reads.add(1);
            c.bytes_read.add(bytes);
        }
        Op::Write => {
            c.writes.add(1);
            c.bytes_written.add(bytes);
        }
        Op::Fsync => c.fsyncs.add(1),
    }
    if shared.generator.tracks_completions() {
        shared.generator.complete(op);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_gate_sends_the_waiting_workers_home() {
        let gate = StartGate::default();
        let results = std::thread::scope(|s| {
            let waiting: Vec<_> = (0..3).map(|_| s.spawn(|| gate.arrive_and_wait())).collect();
            assert!(gate.wait_until_ready(3, || false));
            gate.cancel();
            waiting
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        assert_eq!(results, vec![false; 3]);
    }

    #[test]
    fn an_open_gate_starts_the_workers_and_waiting_can_be_stopped() {
        let gate = StartGate::default();
        let results = std::thread::scope(|s| {
            let waiting: Vec<_> = (0..2).map(|_| s.spawn(|| gate.arrive_and_wait())).collect();
            assert!(gate.wait_until_ready(2, || false));
            gate.open();
            waiting
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        assert_eq!(results, vec![true; 2]);
        // Nobody arrives: the stop condition ends the wait.
        assert!(!StartGate::default().wait_until_ready(1, || true));
    }
}
