//! How many worker threads the process can hold: each needs memory maps,
//! and running out of them aborts a Rust process, so the count is checked
//! before the first thread starts.

use crate::failure::Failure;
use crate::spec::RunSpec;

/// Memory maps each worker thread adds: its stack and guard page, and the
/// signal stack and guard page the Rust runtime gives every thread (counted
/// on Linux 6.18: 1000 workers added 4024 maps), and what its engine maps.
fn maps_per_thread(w: &RunSpec) -> usize {
    4 + crate::engine::capabilities(w.io_mode, w.async_backlog).maps_per_thread
}

/// Maps that are not per worker and come on top of those already there:
/// malloc arenas (glibc makes up to 8 per core) and what the engine maps per
/// file (the mmap engine maps them all).
fn spare_maps(w: &RunSpec) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_file = crate::engine::capabilities(w.io_mode, w.async_backlog).maps_per_file;
    // --file-num is a C int, which fits usize; saturating all the same, so
    // that no count could ever wrap into a budget that looks sufficient.
    let files = usize::try_from(w.files.file_num).unwrap_or(usize::MAX);
    (64 + 2 * 8 * cores).saturating_add(per_file.saturating_mul(files))
}

/// How many worker threads fit under the map limit, given the maps in use.
fn threads_that_fit(max_maps: usize, maps_in_use: usize, per_thread: usize, spare: usize) -> usize {
    max_maps.saturating_sub(maps_in_use + spare) / per_thread.max(1)
}

/// A thread count the memory-map limit (vm.max_map_count) cannot hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{threads}: each worker thread needs {per_thread} memory maps and vm.max_map_count allows {max_maps}, so at most {fit} threads fit (lower --threads, or raise vm.max_map_count)")]
pub struct ThreadBudgetError {
    pub threads: u32,
    pub per_thread: usize,
    pub max_maps: usize,
    pub fit: usize,
}

/// Refuse a thread count that would run the process out of memory maps
/// (vm.max_map_count). sysbench then gets EAGAIN from pthread_create, but a
/// Rust thread that gets its stack and then fails to map its signal stack
/// aborts the whole process, before any code of ours runs in it: so the limit
/// is checked before the first thread starts, by every command that starts a
/// thread per `--threads` (fileio's runner, `durability write`).
/// RLIMIT_NPROC and the kernel's thread limit make the thread creation
/// itself fail, which the caller reports.
pub fn check_thread_budget(w: &RunSpec) -> Result<(), ThreadBudgetError> {
    let Some(max_maps) = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
    else {
        return Ok(());
    };
    let in_use = std::fs::read_to_string("/proc/self/maps")
        .map(|s| s.lines().count())
        .unwrap_or(0);
    let per_thread = maps_per_thread(w);
    let fit = threads_that_fit(max_maps, in_use, per_thread, spare_maps(w));
    if (w.threads as usize) > fit {
        return Err(ThreadBudgetError {
            threads: w.threads,
            per_thread,
            max_maps,
            fit,
        });
    }
    Ok(())
}

/// [`check_thread_budget`] as the front end's refusal.
pub(super) fn check_map_budget(w: &RunSpec) -> Result<(), Failure> {
    check_thread_budget(w).map_err(|e| Failure::fatal(format!("Invalid value for --threads: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_budget_leaves_room_for_the_maps_in_use() {
        // 65530 is Linux's default vm.max_map_count.
        assert_eq!(threads_that_fit(65530, 42, 4, 96), 16348);
        assert_eq!(threads_that_fit(100, 200, 4, 10), 0);
        assert_eq!(threads_that_fit(1000, 0, 0, 0), 1000);
    }
}
