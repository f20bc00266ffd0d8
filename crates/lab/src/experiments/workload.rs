//! A workload's fileio options, read with fileio's typed workload API before
//! anything is built: checked as the three commands a run gives them
//! ([`check_workload`]) and read for what the run will do ([`run_shape`]).
//! Both the run ([`super::run`]) and the account of the server
//! ([`super::server`]) need them, so they live here rather than in either.

use crate::LabError;

/// What a workload's `run` will do, as fileio reads its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunShape {
    /// `--file-total-size`, bytes.
    pub file_total_size: u64,
    /// `--time`, seconds (0: no time limit).
    pub time_s: u64,
    /// `--events` (`--max-requests`), 0: no limit.
    pub events: u64,
}

/// The shape of a workload's `run`; None when fileio refuses the options
/// (which [`check_workload`] reports). The file set is read as `prepare`
/// reads it, so options without a test mode still have one.
pub(crate) fn run_shape(args: &[String]) -> Option<RunShape> {
    let args = strip_format(args);
    let files = fileio::spec::FileSet::from_words(&args).ok()?;
    let (time_s, events) =
        fileio::spec::RunSpec::from_words(&args).map_or((0, 0), |spec| (spec.time_s, spec.events));
    Some(RunShape {
        file_total_size: files.total_size,
        time_s,
        events,
    })
}

/// Options that choose the output format are the lab's business.
pub(crate) fn strip_format(args: &[String]) -> Vec<String> {
    args.iter()
        .filter(|a| !a.starts_with("--format=") && !a.starts_with("--json="))
        .cloned()
        .collect()
}

/// Check the fileio options of a workload with fileio's own checks, before
/// anything is built: a typo must cost nothing (building a lab takes a
/// minute and root). The run that [`super::run::run_workload`] makes of them
/// is the strictest of its three commands (prepare and cleanup read the file
/// set only), so a workload `RunSpec::from_words` accepts runs.
pub fn check_workload(args: &[String]) -> Result<(), LabError> {
    let args = strip_format(args);
    if let Some(verb) = args
        .iter()
        .find(|a| matches!(a.as_str(), "prepare" | "run" | "cleanup" | "help"))
    {
        return Err(LabError::Spec(format!(
            "fileio options: '{verb}': give options only; the lab runs prepare, run and cleanup itself"
        )));
    }
    fileio::spec::RunSpec::from_words(&args).map_err(|source| LabError::Workload {
        context: "fileio options",
        source,
    })?;
    Ok(())
}
