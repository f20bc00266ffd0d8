//! A workload's fileio options, read with fileio's own parser before
//! anything is built: checked as the three commands a run gives them
//! ([`check_workload`]) and read for what the run will do ([`run_shape`]).
//! Both the run ([`super::run`]) and the account of the server
//! ([`super::server`]) need them, so they live here rather than in either.

use crate::LabError;

/// What a workload's `run` will do, as fileio's parser reads its options.
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
    use fileio::options::{check_command_line, Action, CommandLine};
    let action = |verb: &str| {
        let mut words = vec!["fileio".to_string()];
        words.extend(strip_format(args));
        words.push(verb.into());
        match check_command_line(&words).ok()? {
            CommandLine::Command(settings) => Some(settings.action),
            _ => None,
        }
    };
    let Some(Action::Prepare(files)) = action("prepare") else {
        return None;
    };
    let (time_s, events) = match action("run") {
        Some(Action::Run(spec)) => (spec.time_s, spec.events),
        _ => (0, 0),
    };
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

/// Check the fileio options of a workload with fileio's own parser, as the
/// three commands [`super::run::run_workload`] will give them, before anything is built:
/// a typo must cost nothing (building a lab takes a minute and root).
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
    for (verb, extra) in [
        ("prepare", None),
        ("run", Some("--format=json")),
        ("cleanup", None),
    ] {
        let mut words = vec!["fileio".to_string()];
        words.extend(args.iter().cloned());
        words.extend(extra.map(str::to_string));
        words.push(verb.to_string());
        fileio::sysbench::cli::check_words(&words)
            .map_err(|e| LabError::Spec(format!("fileio options: {e}")))?;
    }
    Ok(())
}
