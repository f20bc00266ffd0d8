//! `tankbench fio`: the words after `fio` to a report, through the stages
//! of this module's siblings. Printing is the caller's ([`Output`]), so the
//! binary decides how stdout and stderr are written.

use super::error::FioError;
use super::job::Jobs;
use super::parse::{
    parse_command_line, read_job_file, Expansion, Invocation, JobText, OutputFormat,
};
use super::plan::Plan;
use super::report::{json, text, Report};
use super::settings::help_text;
use std::io::Write as _;
use std::path::Path;

/// Where the command's text goes.
pub trait Output {
    /// Report text for stdout.
    fn stdout(&mut self, text: &str);
    /// One line for stderr (a note, a warning, progress).
    fn stderr_line(&mut self, line: &str);
    /// The `--help` text for stdout: a front end may add to it (the
    /// binary's examples).
    fn help(&mut self, text: &str) {
        self.stdout(text);
    }
}

/// What the words ask for, checked: jobs read and mapped, nothing run.
pub struct Checked {
    pub invocation: Invocation,
    pub jobs: Jobs,
    pub plan: Plan,
}

/// The usage line of `--help`.
const USAGE: &str = "Usage: tankbench fio [--output-format=normal|json|json+] [--output=FILE] [--parse-only] JOB.fio [JOB.fio...]\n       tankbench fio [...] [--GLOBAL_OPTION=V...] --name=JOB --OPTION=V [...] [--name=JOB2 ...]\n\nRuns fio job files with tankbench's engines: fio's job language and report,\nfor the supported subset of fio's options (docs/fio.md).\n\n";

/// The help text.
pub fn help() -> String {
    format!("{USAGE}{}", help_text())
}

/// What the words ask for before any job is read.
pub enum Asked {
    Help,
    Version,
    Jobs(Box<Checked>),
}

/// Read and check everything the words name.
pub fn check(words: &[String], expansion: &Expansion) -> Result<Asked, FioError> {
    let invocation = parse_command_line(words, expansion)?;
    if invocation.help {
        return Ok(Asked::Help);
    }
    if invocation.version {
        return Ok(Asked::Version);
    }
    let mut texts: Vec<JobText> = Vec::new();
    if let Some(jobs) = &invocation.command_line_jobs {
        if !invocation.job_files.is_empty() {
            return Err(FioError::Usage(
                "job files and job options on the command line cannot be mixed (accepted: job files, or options with --name=JOB)".into(),
            ));
        }
        texts.push(jobs.clone());
    }
    for path in &invocation.job_files {
        texts.push(read_job_file(path, expansion)?);
    }
    let jobs = Jobs::from_texts(&texts)?;
    let plan = Plan::of(&jobs)?;
    if let Some(out) = &invocation.output {
        if std::fs::symlink_metadata(out).is_ok() {
            return Err(FioError::Usage(format!(
                "--output={}: the file exists; tankbench writes only a new file (accepted: a name that does not exist)",
                crate::text::printable(&out.display().to_string())
            )));
        }
    }
    Ok(Asked::Jobs(Box::new(Checked {
        invocation,
        jobs,
        plan,
    })))
}

/// Run the command; the exit code (0, or 130 after Ctrl-C).
pub fn execute(words: &[String], out: &mut dyn Output) -> Result<i32, FioError> {
    let checked = match check(words, &Expansion::of_this_machine())? {
        Asked::Help => {
            out.help(&help());
            return Ok(0);
        }
        Asked::Version => {
            out.stdout(&format!(
                "tankbench-fio {}\n",
                crate::result::ToolInfo::tankbench().version
            ));
            return Ok(0);
        }
        Asked::Jobs(checked) => checked,
    };
    let Checked {
        invocation,
        jobs,
        plan,
    } = *checked;
    for note in &plan.notes {
        out.stderr_line(&format!("tankbench fio: note: {note}"));
    }
    if invocation.parse_only {
        return Ok(0);
    }
    let mut report_text = String::new();
    if invocation.format == OutputFormat::Normal {
        let header = text::header(&jobs, &plan);
        if invocation.output.is_some() {
            report_text.push_str(&header);
        } else {
            out.stdout(&header);
        }
    }
    let outcome = super::execute::run(&plan, &mut |line| {
        out.stderr_line(&format!("tankbench fio: {line}"));
    })?;
    let report = Report::new(&jobs, &outcome, plan.notes.clone());
    report_text.push_str(&match invocation.format {
        OutputFormat::Normal => text::render(&report),
        OutputFormat::Json => json::render(&report, false),
        OutputFormat::JsonPlus => json::render(&report, true),
    });
    match &invocation.output {
        Some(path) => write_new(path, &report_text)?,
        None => out.stdout(&report_text),
    }
    if invocation.format == OutputFormat::Normal {
        for w in &report.additions.warnings {
            out.stderr_line(&format!("WARNING: {} ({})", w.message, w.hint));
        }
    }
    Ok(if outcome.interrupted { 130 } else { 0 })
}

/// `--output=FILE`: a new file only.
fn write_new(path: &Path, text: &str) -> Result<(), FioError> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()).map(|()| f))
        .map_err(|e| {
            FioError::Run(format!(
                "--output={}: {e}",
                crate::text::printable(&path.display().to_string())
            ))
        })?;
    f.flush()
        .map_err(|e| FioError::Run(format!("--output: {e}")))
}
