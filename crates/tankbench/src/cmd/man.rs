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

/// The page of `cmd` and, below it, of every visible subcommand.
fn pages(cmd: clap::Command, into: &mut Vec<Page>) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages(sub.clone(), into)?;
    }
    let man = page_of(cmd.clone());
    let mut roff = Vec::new();
    man.render(&mut roff)?;
    into.push(Page {
        file: man.get_filename(),
        title: cmd.get_display_name().unwrap_or(cmd.get_name()).to_string(),
        roff,
    });
    Ok(())
}

/// The page of `cmd`, its footer naming tankbench and its version (clap_mangen
/// would name the subcommand alone, "plan 0.1.0").
fn page_of(cmd: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(cmd).source(format!("tankbench {}", env!("CARGO_PKG_VERSION")))
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
        let mut roff = Vec::new();
        page_of(cmd).render(&mut roff)?;
        super::write_stdout(&roff)?;
        return Ok(0);
    };
    let mut all = Vec::new();
    pages(cmd, &mut all)?;
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
