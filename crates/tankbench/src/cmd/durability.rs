//! `tankbench durability write|record|verify`: do acknowledged writes survive
//! a crash? The logic is in the `durability` crate; this module parses, runs
//! and prints.

use anyhow::Context as _;
use clap::{Args, Subcommand};
use durability::error::Command;
use durability::journal::Commit;
use durability::options::{parse_record, parse_verify, parse_write};
use durability::DurabilityError;
use report::atomic::{check_can_create_in, check_new_file, write_atomically, Existing};
use report::labels::{merge_labels, parse_labels, Labels};
use report::store::ResultStore;
use std::ffi::OsString;

/// Do acknowledged writes survive a crash? (write, record, verify)
///
/// A writer reports every write the storage acknowledged to a recorder on
/// another machine (or a journal on other storage); after the crash,
/// verify reads back what was acknowledged. See docs/durability.md.
#[derive(Debug, Args)]
#[command(subcommand_required = true, arg_required_else_help = true)]
pub(crate) struct DurabilityArgs {
    #[command(subcommand)]
    command: DurabilityCommand,
}

// The options' values are read by the durability crate's own reader
// (`durability::options`) from the words clap checked, so its refusals and
// defaults stay the library's; these definitions give the names, the help,
// the man page and the completions. A test below keeps the two in step.
#[derive(Debug, Subcommand)]
enum DurabilityCommand {
    Write(WriteArgs),
    Record(RecordArgs),
    Verify(VerifyArgs),
}

/// Write blocks to a file set in DIR and report each acknowledged one.
#[derive(Debug, Args)]
struct WriteArgs {
    /// The directory under test.
    #[arg(value_name = "DIR")]
    dir: OsString,
    /// The recorder to report to (`durability record` on another machine).
    #[arg(long, value_name = "ADDR:PORT")]
    recorder: Option<OsString>,
    /// The key file the recorder printed at its start (with --recorder).
    #[arg(long, value_name = "FILE")]
    key: Option<OsString>,
    /// Report to this journal file instead of a recorder (on other storage).
    #[arg(long, value_name = "FILE")]
    journal: Option<OsString>,
    /// Number of files (as for `tankbench fileio`).
    #[arg(long, value_name = "N")]
    file_num: Option<OsString>,
    /// Total size of the files (as for `tankbench fileio`).
    #[arg(long, value_name = "SIZE")]
    file_total_size: Option<OsString>,
    /// Block size, a multiple of 512 [default: 4096].
    #[arg(long, value_name = "SIZE")]
    file_block_size: Option<OsString>,
    /// Writer threads (as for `tankbench fileio`).
    #[arg(long, value_name = "N")]
    threads: Option<OsString>,
    /// Where the blocks go [default: rndwr].
    #[arg(long, value_name = "MODE", value_parser = super::choices::offered(
        super::choices::names(&durability::options::WRITE_MODES, fileio::spec::Mode::name)))]
    file_test_mode: Option<String>,
    /// How each write is made durable before it is reported [default: fsync].
    #[arg(long, value_name = "HOW", value_parser = super::choices::offered(
        super::choices::names(&Commit::ALL, Commit::name)))]
    commit: Option<String>,
    /// Open the files with O_DIRECT.
    #[arg(long)]
    direct: bool,
    /// How long to write, as 30, 30s, 5m or 1h; 0: until stopped or until the storage goes away [default: 0].
    #[arg(long, value_name = "DURATION")]
    time: Option<OsString>,
}

/// Receive acknowledged writes over the network and keep them in a journal.
#[derive(Debug, Args)]
struct RecordArgs {
    /// Address to listen on, e.g. 0.0.0.0:7878.
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<OsString>,
    /// The journal file (on storage other than the one under test).
    #[arg(long, value_name = "FILE")]
    journal: Option<OsString>,
    /// The key file, made (mode 0600) if missing [default: JOURNAL.key].
    #[arg(long, value_name = "FILE")]
    key: Option<OsString>,
    /// The largest journal to keep (e.g. 64M, 2G).
    #[arg(long, value_name = "SIZE")]
    max_journal_size: Option<OsString>,
    /// Most writer sessions at once, 1 to 1024.
    #[arg(long, value_name = "N")]
    max_sessions: Option<OsString>,
}

/// Read back every acknowledged write in DIR and say what survived.
#[derive(Debug, Args)]
struct VerifyArgs {
    /// The directory under test.
    #[arg(value_name = "DIR")]
    dir: OsString,
    /// The journal file, or the recorder's ADDR:PORT.
    #[arg(long, value_name = "JOURNAL|ADDR:PORT")]
    from: Option<OsString>,
    /// The recorder's key file (with --from ADDR:PORT).
    #[arg(long, value_name = "FILE")]
    key: Option<OsString>,
    /// Examples kept per outcome, 0 to 10000 [default: 10].
    #[arg(long, value_name = "N")]
    examples: Option<OsString>,
    /// Read with O_DIRECT, past this machine's page cache.
    #[arg(long)]
    direct: bool,
    /// The largest journal a recorder may answer with (e.g. 64M, 2G).
    #[arg(long, value_name = "SIZE")]
    max_journal_size: Option<OsString>,
    /// Keep the result in a result store [default DIR: ./tankbench-results].
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true)]
    save: Option<OsString>,
    /// Also write the result as JSON to FILE (a new file).
    #[arg(long, value_name = "FILE")]
    json: Option<OsString>,
    /// Labels for the stored result, KEY=VALUE[,...] (repeatable; needs --save).
    #[arg(long, value_name = "KEY=VALUE")]
    label: Vec<OsString>,
}

/// `tankbench durability write|record|verify`; `words` are the words after
/// the subcommand's name, as typed.
pub(crate) fn run(a: &DurabilityArgs, words: &[OsString]) -> anyhow::Result<i32> {
    match a.command {
        DurabilityCommand::Write(_) => write(words),
        DurabilityCommand::Record(_) => record(words),
        DurabilityCommand::Verify(_) => verify(words),
    }
}

/// The error as printed: a command-line refusal names its command already;
/// anything else gets the command in front. Either way exit status 1.
fn failed(command: Command, e: DurabilityError) -> anyhow::Error {
    if e.is_usage() {
        anyhow::Error::new(e)
    } else {
        anyhow::Error::new(e).context(format!("durability {command}"))
    }
}

fn write(args: &[OsString]) -> anyhow::Result<i32> {
    let opts = parse_write(args).map_err(|e| failed(Command::Write, e))?;
    durability::writer::install_stop_handlers();
    let summary = durability::writer::write(&opts, &mut |l| super::write_stderr_line(l))
        .map_err(|e| failed(Command::Write, e))?;
    super::write_stdout(format!("{}\n", summary.line(&opts.sink)).as_bytes())?;
    Ok(summary.exit_code())
}

fn record(args: &[OsString]) -> anyhow::Result<i32> {
    let opts = parse_record(args).map_err(|e| failed(Command::Record, e))?;
    durability::writer::install_stop_handlers();
    durability::recorder::run(&opts).map_err(|e| failed(Command::Record, e))?;
    Ok(0)
}

fn verify(args: &[OsString]) -> anyhow::Result<i32> {
    let opts = parse_verify(args).map_err(|e| failed(Command::Verify, e))?;
    let mut labels = Labels::new();
    for text in &opts.labels {
        merge_labels(&mut labels, parse_labels(text)?)?;
    }
    if !labels.is_empty() && opts.save.is_none() {
        anyhow::bail!(
            "durability verify: --label needs --save: labels are kept with stored results"
        );
    }
    // Destinations are checked before the check runs: nothing is written
    // when one of them is refused.
    if let Some(dir) = &opts.save {
        check_can_create_in(dir)
            .map_err(|e| anyhow::anyhow!("durability verify: --save={}: {e}", dir.display()))?;
    }
    if let Some(path) = &opts.json {
        check_new_file(path)
            .map_err(|e| anyhow::anyhow!("durability verify: --json={}: {e}", path.display()))?;
    }
    let journal = durability::verify::load_journal(&opts.from, opts.max_journal_bytes)
        .map_err(|e| failed(Command::Verify, e))?;
    let mut v =
        durability::verify::verify(&opts, &journal).map_err(|e| failed(Command::Verify, e))?;
    v.result.labels.extend(labels);
    // The lines quote a journal, which may come from a recorder elsewhere.
    let text: String = v.lines.iter().map(|l| format!("{l}\n")).collect();
    super::write_stdout(report::escape::terminal_lines(&text).as_bytes())?;
    if let Some(path) = &opts.json {
        let mut doc = serde_json::to_string_pretty(&v.result)?;
        doc.push('\n');
        write_atomically(path, doc.as_bytes(), Existing::Keep)
            .map_err(|e| anyhow::anyhow!("durability verify: --json={}: {e}", path.display()))?;
    }
    if let Some(dir) = &opts.save {
        let store = ResultStore::open(dir.as_path()).context("--save")?;
        let path = store.save(&v.result).context("--save")?;
        super::write_stderr_line(&format!("saved {}", path.display()));
    }
    Ok(if v.passed() { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The long options clap defines for `durability NAME`.
    fn clap_options(name: &str) -> Vec<String> {
        let cmd = crate::cmd::cli::command();
        let sub = cmd
            .find_subcommand("durability")
            .and_then(|d| d.find_subcommand(name))
            .unwrap_or_else(|| panic!("durability {name}"));
        let mut names: Vec<String> = sub
            .get_arguments()
            .filter_map(|a| a.get_long())
            .filter(|l| !matches!(*l, "help" | "version"))
            .map(|l| format!("--{l}"))
            .collect();
        names.sort();
        names
    }

    /// The options the durability crate's reader accepts, as its refusal of
    /// an unknown one lists them.
    fn reader_options(refusal: Result<(), DurabilityError>) -> Vec<String> {
        match refusal {
            Err(DurabilityError::UnknownOption { mut accepted, .. }) => {
                accepted.sort();
                accepted
            }
            other => panic!("not refused as unknown: {other:?}"),
        }
    }

    #[test]
    fn the_definitions_name_the_options_the_reader_reads() {
        let unknown = [OsString::from("--no-such-option")];
        let reader = [
            (
                "write",
                durability::options::parse_write(&unknown).map(drop),
            ),
            (
                "record",
                durability::options::parse_record(&unknown).map(drop),
            ),
            (
                "verify",
                durability::options::parse_verify(&unknown).map(drop),
            ),
        ];
        for (name, refusal) in reader {
            assert_eq!(
                clap_options(name),
                reader_options(refusal),
                "durability {name}"
            );
        }
    }
}
