//! The run's clock: one monotonic nanosecond counter read on the hot path by
//! the runner and by engines that stamp submissions, and a precise wait for
//! injected latency. Its own module so engines do not depend on the runner.

use std::time::{Duration, Instant};

/// Monotonic clock in nanoseconds: the same clock as `Instant`, read without the
/// `Timespec` arithmetic, because the hot path reads it twice per request.
// CLOCK_MONOTONIC counts from boot, so both fields are non-negative
// (clock_gettime(2); tv_nsec is below 10^9): the casts lose no sign.
#[allow(clippy::cast_sign_loss)]
#[inline]
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until shortly before the deadline, then spin: thread::sleep alone
/// overshoots by tens of microseconds, which would blur a latency test.
pub(crate) fn precise_wait(d: Duration) {
    let deadline = Instant::now() + d;
    const SPIN: Duration = Duration::from_micros(300);
    if d > SPIN {
        std::thread::sleep(d - SPIN);
    }
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
}
