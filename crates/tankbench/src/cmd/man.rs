//! `tankbench man [DIR]`: manual pages made by clap_mangen from the same
//! definition the command line is parsed with, one per command and
//! subcommand (`tankbench-simulate-matrix.1`).

use anyhow::Context as _;
use clap::Args;
use report::atomic::{write_atomically, Existing};
use std::path::{Path, PathBuf};

/// Write tankbench's manual pages: tankbench.1 and one page per command.
///
/// Without DIR, tankbench.1 alone goes to stdout (`tankbench man | man -l -`).
/// A page already in DIR is replaced only if it is the same command's page.
#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// Directory for the pages (e.g. /usr/local/share/man/man1); made if missing.
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// One page: its file name, its title (the command, `tankbench-plan`) and
/// its roff text.
struct Page {
    file: String,
    title: String,
    roff: Vec<u8>,
}

/// The page of `cmd` and, below it, of every visible subcommand; `path`
/// is `cmd`'s command path below tankbench ("" for tankbench itself).
fn pages(cmd: clap::Command, path: &str, into: &mut Vec<Page>) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let sub_path = if path.is_empty() {
            sub.get_name().to_string()
        } else {
            format!("{path} {}", sub.get_name())
        };
        pages(sub.clone(), &sub_path, into)?;
    }
    let man = page_of(cmd.clone());
    into.push(Page {
        file: man.get_filename(),
        title: cmd.get_display_name().unwrap_or(cmd.get_name()).to_string(),
        roff: render(&cmd, &man, path)?,
    });
    Ok(())
}

/// The page of `cmd`, its footer naming tankbench and its version (clap_mangen
/// would name the subcommand alone, "plan 0.1.0").
fn page_of(cmd: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(cmd).source(format!("tankbench {}", env!("CARGO_PKG_VERSION")))
}

/// What a command's exit status means beyond the 0 and 1 of every command
/// (`EXIT STATUS`), by command path; one row per command with more to say.
const EXIT_STATUS: &[(&str, &str)] = &[
    ("", "With no command, the help is printed and the exit status is 1."),
    (
        "quick",
        "128 + N: stopped by signal N (130 for Ctrl-C); the scratch directory is removed first.",
    ),
    (
        "fileio",
        "130: a run stopped by SIGINT (Ctrl-C); the report of what ran is printed, marked interrupted.",
    ),
    (
        "slog",
        "128 + N: stopped by signal N (130 for Ctrl-C); the sizes measured so far are reported and the scratch file removed.",
    ),
    (
        "probe",
        "128 + N: stopped by signal N (130 for Ctrl-C); the operations measured so far are reported.",
    ),
    (
        "durability write",
        "2: the storage failed under the writer (an I/O error, the file system gone): what a crash test expects.",
    ),
    (
        "durability verify",
        "1 also when an acknowledged write was lost, torn or corrupt, or when there was nothing to verify.",
    ),
    (
        "lab durability",
        "1 also when a cell did not show what it must (a loss where the writes were protected, none in a negative control).",
    ),
];

/// Text for roff: backslashes and hyphens escaped, a leading `.` or `'`
/// (a roff request) made plain text.
fn roff_text(line: &str) -> String {
    let escaped = line.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// The page of `cmd`: clap_mangen's title, name, synopsis, description,
/// options, subcommands and version, then what the help ends with, as
/// NOTES and EXAMPLES (the examples of `super::examples`, one indented
/// command under each explanation), and EXIT STATUS.
fn render(cmd: &clap::Command, man: &clap_mangen::Man, path: &str) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out)?;
    }
    let after = cmd
        .get_after_help()
        .map(ToString::to_string)
        .unwrap_or_default();
    let (notes, examples) = match after.split_once(super::examples::HEADING) {
        Some((notes, examples)) => (notes.trim(), examples),
        None => (after.trim(), ""),
    };
    let mut roff = String::new();
    if !notes.is_empty() {
        roff.push_str(".SH NOTES\n");
        for line in notes.lines() {
            roff.push_str(&roff_text(line));
            roff.push('\n');
        }
    }
    if !examples.trim().is_empty() {
        roff.push_str(".SH EXAMPLES\n");
        for line in examples.lines().filter(|l| !l.trim().is_empty()) {
            match line.trim().strip_prefix("# ") {
                Some(what) => {
                    roff.push_str(&format!(".PP\n{}\n", roff_text(what)));
                }
                None => roff.push_str(&format!(
                    ".RS 4\n.nf\n{}\n.fi\n.RE\n",
                    roff_text(line.trim())
                )),
            }
        }
    }
    roff.push_str(".SH \"EXIT STATUS\"\n.TP\n0\nSuccess.\n.TP\n1\nAn error: bad input (one line naming the option and what it accepts; nothing is written or deleted), or a failure while running, named on standard error.\n");
    if let Some((_, more)) = EXIT_STATUS.iter().find(|(p, _)| *p == path) {
        roff.push_str(&format!(".PP\n{}\n", roff_text(more)));
    }
    out.extend_from_slice(roff.as_bytes());
    if cmd.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok(out)
}

/// Whether the file at `path` is a page of the command `title`: the `.TH`
/// line clap_mangen writes names it. Only a regular file is read: opening a
/// FIFO would block for ever, a device could be anything.
fn is_page_of(path: &Path, title: &str) -> bool {
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    regular
        && std::fs::read(path).is_ok_and(|bytes| {
            String::from_utf8_lossy(&bytes)
                .lines()
                .take(10)
                .any(|l| l.split_whitespace().take(2).eq([".TH", title]))
        })
}

/// The directories `create_dir_all(dir)` would make, outermost first.
fn missing_ancestors(dir: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = dir
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .take_while(|a| std::fs::symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    missing
}

/// The pages of `definition`, tankbench's whole command line.
pub(crate) fn run(a: &ManArgs, definition: clap::Command) -> anyhow::Result<i32> {
    // The `help` subcommand clap adds has no page of its own.
    let mut cmd = definition.disable_help_subcommand(true);
    cmd.build();
    let Some(dir) = &a.dir else {
        let roff = render(&cmd, &page_of(cmd.clone()), "")?;
        super::write_stdout(&roff)?;
        return Ok(0);
    };
    let mut all = Vec::new();
    pages(cmd, "", &mut all)?;
    // Every page is checked before any is written: a refusal writes nothing.
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!("man: {}: not a directory", dir.display());
    }
    let mut new_pages = Vec::new();
    for page in &all {
        let path = dir.join(&page.file);
        let exists = std::fs::symlink_metadata(&path).is_ok();
        if !exists {
            new_pages.push(path.clone());
        }
        if exists && !is_page_of(&path, &page.title) {
            anyhow::bail!(
                "man: {}: exists and is not the page of {}; refusing to replace it",
                path.display(),
                page.title
            );
        }
    }
    let made_dirs = missing_ancestors(dir);
    let written = std::fs::create_dir_all(dir)
        .with_context(|| format!("man: {}", dir.display()))
        .and_then(|()| {
            all.iter().try_for_each(|page| {
                let path = dir.join(&page.file);
                write_atomically(&path, &page.roff, Existing::Replace)
                    .with_context(|| format!("man: {}", path.display()))
            })
        });
    if let Err(e) = written {
        // A failure (a full file system) leaves nothing of this run behind:
        // the pages it added and the directories it made, deepest first.
        for path in &new_pages {
            let _ = std::fs::remove_file(path);
        }
        for d in made_dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
        return Err(e);
    }
    super::write_stderr_line(&format!("wrote {} pages to {}", all.len(), dir.display()));
    Ok(0)
}
