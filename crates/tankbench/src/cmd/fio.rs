//! `tankbench fio JOB.fio ...` and `tankbench fio --name=x --rw=... ...`:
//! fio's job language run with tankbench's engines. The job language, the
//! run and the report are in `fileio::fio`; this prints.

use std::ffi::OsString;

/// The library's text to the process's streams; the first failed write to
/// stdout is kept (a report that did not arrive must not exit 0).
#[derive(Default)]
struct Streams {
    failed: Option<anyhow::Error>,
}

impl fileio::fio::command::Output for Streams {
    fn stdout(&mut self, text: &str) {
        if self.failed.is_none() {
            self.failed = super::write_stdout(text.as_bytes()).err();
        }
    }
    fn stderr_line(&mut self, line: &str) {
        super::write_stderr_line(line);
    }
    /// fio's own help, then the examples every command's help ends with.
    fn help(&mut self, text: &str) {
        let examples = super::examples::text("fio").unwrap_or_default();
        self.stdout(&format!(
            "{}

{examples}
",
            text.trim_end()
        ));
    }
}

/// Run the words after `fio`; the exit code.
pub fn run(words: &[OsString]) -> anyhow::Result<i32> {
    let mut text = Vec::with_capacity(words.len());
    for w in words {
        match w.to_str() {
            Some(s) => text.push(s.to_string()),
            None => anyhow::bail!(
                "fio: '{}' is not UTF-8 text (accepted: job options and file names in UTF-8)",
                w.to_string_lossy()
            ),
        }
    }
    let mut streams = Streams::default();
    let code = fileio::fio::command::execute(&text, &mut streams)
        .map_err(|e| anyhow::anyhow!("fio: {e}"))?;
    match streams.failed {
        Some(e) => Err(e),
        None => Ok(code),
    }
}

/// The one workload of the fio job file `job`, as `tankbench fio` would run
/// it (fileio's fio front end); `what` names the option or field in
/// refusals.
pub(crate) fn job_spec(
    job: &std::path::Path,
    what: &str,
) -> anyhow::Result<fileio::options::RunSpec> {
    let words = vec![job.to_string_lossy().into_owned()];
    let expansion = fileio::fio::parse::Expansion::of_this_machine();
    let fileio::fio::command::Asked::Jobs(checked) =
        fileio::fio::command::check(&words, &expansion)
            .map_err(|e| anyhow::anyhow!("{what}: {e}"))?
    else {
        anyhow::bail!("{what}: needs a job file (accepted: a fio job file's name)");
    };
    checked
        .plan
        .as_one_workload()
        .map_err(|e| anyhow::anyhow!("{e}"))
}
