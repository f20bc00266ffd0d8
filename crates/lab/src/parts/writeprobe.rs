//! The pool's write path, timed: buffered 4 KiB overwrites at random
//! offsets of one file in the pool, from one thread and then from two.
//!
//! Why: the simulator takes the server's CPU time per request
//! (`server.cpu_us`) and how many requests it serves at once
//! (`server.cores`) from the system description. For kernel ZFS those come
//! from published measurements; for the lab's zfs-fuse no source gives
//! them, and they are far from kernel ZFS's: a request crosses FUSE into a
//! user-space daemon, and the lab's workload, zfs-fuse and the disk daemon
//! share the host's cores. Measured on a 2-core host (lab raidz2-6 of hdd
//! disks, log ssd-plp): about 105 us a buffered 4 KiB write at one thread
//! (9,561 writes/s) and fewer writes/s from two threads than from one
//! (6,393): one request at a time. A run that waits on no disk measures
//! exactly those two things, so the lab measures them when it is built
//! (as it measures its link) instead of a prediction fitting them to the
//! cells it is meant to predict.
//!
//! No sync is asked for, so no log write and no flush is timed: the
//! devices' own times come from their models. The probe file is the
//! probe's own, created new and removed after.

use crate::parts::sys;
use crate::LabError;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// The probe's file name in the pool's mount point.
pub const PROBE_FILE: &str = ".tankbench-write-probe";

/// The probe file's size: 64 records of 128 KiB, a size that fits any lab
/// ARC, so no write waits on a read.
const PROBE_FILE_BYTES: u64 = 8 << 20;

/// The request size, as the simulator's `server.cpu_us` is defined at.
const REQUEST_BYTES: usize = 4096;

/// The measurement is a fact of the pool, kept in the ZFS facts of the
/// lab's runs, where `simulate --system-from` reads it.
pub use fileio::zfs_facts::WritePathMeasurement;

/// Time the write path under `mountpoint`: `seconds` with one thread and
/// `seconds` with two, in [`ROUNDS`] rounds that take turns, each figure
/// the median of its rounds. `settle` runs after the probe file is written whole
/// and before the timing: the caller syncs the pool's txg there, so the
/// timed writes do not share the host with a txg sync of the file's first
/// writes or of the pool's creation (seen: 128 us a write, a third of the
/// usual, when the first timing met one).
pub fn measure(
    mountpoint: &Path,
    seconds: f64,
    settle: &dyn Fn() -> Result<(), LabError>,
) -> Result<WritePathMeasurement, LabError> {
    let path = mountpoint.join(PROBE_FILE);
    let io = |what: &str, e: std::io::Error| LabError::Io {
        what: format!("{what} {}", path.display()),
        source: e,
    };
    // create_new: a file of that name the probe did not make is left alone.
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| io("create the write probe", e))?;
    let result = (|| {
        // Written whole first, so the timed writes overwrite allocated
        // blocks as a prepared fileio run does.
        let chunk = vec![0x5au8; 1 << 20];
        for off in (0..PROBE_FILE_BYTES).step_by(chunk.len()) {
            file.write_all_at(&chunk, off)
                .map_err(|e| io("write the write probe", e))?;
        }
        sys::check_interrupted()?;
        settle()?;
        // Each thread count is timed in ROUNDS short rounds, taking turns,
        // and its figure is their median: one burst of the host's other work
        // (a txg sync, a neighbour) then slows one round, not the figure.
        // Seen with one burst a thread count: 108 us a write where the same
        // lab measured 41-44 us before and after (2026-12-07), which scaled
        // zfs-fuse's costs threefold and halved that cell's predictions
        // with a log device (docs/what-if.md section 6, "Runs of 120 s").
        let span = Duration::from_secs_f64(seconds / ROUNDS as f64);
        let (mut one, mut two) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            one.push(rate(&file, 1, span).map_err(|e| io("write the write probe", e))?);
            sys::check_interrupted()?;
            two.push(rate(&file, 2, span).map_err(|e| io("write the write probe", e))?);
            sys::check_interrupted()?;
        }
        Ok(WritePathMeasurement {
            one_thread_writes_per_s: median(&mut one),
            two_threads_writes_per_s: median(&mut two),
        })
    })();
    drop(file);
    let removed = std::fs::remove_file(&path).map_err(|e| io("remove the write probe", e));
    let m = result?;
    removed?;
    Ok(m)
}

/// Rounds a thread count is timed in ([`measure`]): odd, so the median is
/// one of them.
const ROUNDS: usize = 5;

/// The median of `rates` (an odd count of finite rates).
fn median(rates: &mut [f64]) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

/// Writes a second from `threads` threads writing for `span`.
fn rate(file: &File, threads: u64, span: Duration) -> std::io::Result<f64> {
    let blocks = PROBE_FILE_BYTES / REQUEST_BYTES as u64;
    let start = Instant::now();
    let counts = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || -> std::io::Result<u64> {
                    let buf = [0xa5u8; REQUEST_BYTES];
                    // xorshift64: offsets spread over the file, a seed a thread.
                    let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ (t + 1);
                    let mut n = 0u64;
                    while start.elapsed() < span {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        file.write_all_at(&buf, (x % blocks) * REQUEST_BYTES as u64)?;
                        n += 1;
                    }
                    Ok(n)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("probe thread panicked"))
            .collect::<std::io::Result<Vec<u64>>>()
    })?;
    let elapsed = start.elapsed().as_secs_f64();
    // Counts of a few seconds' writes: far below 2^52.
    #[allow(clippy::cast_precision_loss)]
    let total = counts.iter().sum::<u64>() as f64;
    Ok(total / elapsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_path_that_does_not_scale_is_one_request_at_a_time() {
        let m = WritePathMeasurement {
            one_thread_writes_per_s: 9561.0,
            two_threads_writes_per_s: 6393.0,
        };
        assert!((m.request_us() - 104.6).abs() < 0.1);
        assert_eq!(m.parallel_requests(2), 1);
        let scaling = WritePathMeasurement {
            one_thread_writes_per_s: 1000.0,
            two_threads_writes_per_s: 1900.0,
        };
        assert_eq!(scaling.parallel_requests(2), 2);
        assert_eq!(
            scaling.parallel_requests(1),
            1,
            "never above the host's cpus"
        );
    }

    #[test]
    fn one_slow_round_does_not_move_the_figure() {
        // The rounds of the 2026-12-07 outlier's kind: one round a third as
        // fast as the others.
        let mut rates = [24_300.0, 8_100.0, 24_500.0, 24_100.0, 24_400.0];
        assert!((median(&mut rates) - 24_300.0).abs() < 1e-9);
        let mut two_slow = [24_300.0, 8_100.0, 9_000.0, 24_100.0, 24_400.0];
        assert!((median(&mut two_slow) - 24_100.0).abs() < 1e-9);
    }

    #[test]
    fn the_probe_times_a_file_system_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let m = measure(dir.path(), 0.1, &|| Ok(())).unwrap();
        assert!(m.is_usable(), "{m:?}");
        assert!(!dir.path().join(PROBE_FILE).exists());
    }

    #[test]
    fn the_probe_leaves_a_file_it_did_not_make() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(PROBE_FILE), b"theirs").unwrap();
        let e = measure(dir.path(), 0.1, &|| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("create the write probe"), "{e}");
        assert_eq!(
            std::fs::read(dir.path().join(PROBE_FILE)).unwrap(),
            b"theirs"
        );
    }
}
