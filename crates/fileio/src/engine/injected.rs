//! A latency model in place of I/O (`--inject-latency`), for testing the core.

use super::{AlignedBuf, Engine, IoError, Submitted};
use crate::rng::Xoroshiro;
use crate::run::clock::precise_wait;
use crate::run::generator::Request;
use crate::spec::{FsyncMode, InjectedLatency};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Replaces I/O by a latency model (for testing the core: timing, histograms,
/// percentiles). Waits are precise: sleep most of the time, spin the rest.
pub(crate) struct InjectedEngine {
    model: InjectedLatency,
    rng: Xoroshiro,
    buf: AlignedBuf,
    /// Where the waits actually produced go (tests compare the statistics with
    /// them: on a busy machine the realised waits drift from the model, and the
    /// statistics must follow what really happened).
    trace: Option<Arc<std::sync::Mutex<Vec<u64>>>>,
    realised: Vec<u64>,
}

impl Drop for InjectedEngine {
    fn drop(&mut self) {
        if let Some(t) = &self.trace {
            t.lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(self.realised.drain(..));
        }
    }
}

impl InjectedEngine {
    pub fn new(
        model: InjectedLatency,
        seed: u64,
        buf: AlignedBuf,
        trace: Option<Arc<std::sync::Mutex<Vec<u64>>>>,
    ) -> InjectedEngine {
        InjectedEngine {
            model,
            rng: Xoroshiro::from_state(seed | 1, 0x9e37_79b9_7f4a_7c15 ^ seed),
            buf,
            trace,
            realised: Vec::new(),
        }
    }
    fn wait(&mut self) {
        let ns = match self.model {
            InjectedLatency::Fixed { ns } => ns,
            InjectedLatency::Bimodal {
                fast_ns,
                slow_ns,
                p_slow,
            } => {
                if self.rng.next_f64() < p_slow {
                    slow_ns
                } else {
                    fast_ns
                }
            }
        };
        let t = Instant::now();
        precise_wait(Duration::from_nanos(ns));
        if self.trace.is_some() {
            // The model's waits are at most an hour (`--tb-inject-latency` is
            // refused beyond), far below the 584 years a u64 of ns holds.
            #[allow(clippy::cast_possible_truncation)]
            let ns = t.elapsed().as_nanos() as u64;
            self.realised.push(ns);
        }
    }
}

impl Engine for InjectedEngine {
    fn name(&self) -> &'static str {
        "injected"
    }
    fn buffer_mut(&mut self) -> &mut [u8] {
        self.buf.as_mut_slice()
    }
    fn submit(&mut self, req: &Request) -> Result<Submitted, IoError> {
        self.wait();
        Ok(Submitted::Done(req.size))
    }
    fn sync(&mut self, _file: u32, _mode: FsyncMode) -> Result<(), IoError> {
        self.wait();
        Ok(())
    }
}
