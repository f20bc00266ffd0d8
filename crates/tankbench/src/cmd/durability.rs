//! `tankbench durability write|record|verify`: do acknowledged writes survive
//! a crash? The logic is in the `durability` crate; this module parses, runs
//! and prints.

use anyhow::Context as _;
use durability::error::Command;
use durability::options::{parse_record, parse_verify, parse_write};
use durability::DurabilityError;
use report::atomic::{check_can_create_in, check_new_file, write_atomically, Existing};
use report::labels::{merge_labels, parse_labels, Labels};
use report::store::ResultStore;
use std::ffi::OsString;

const USAGE: &str = "\
usage:
  tankbench durability write DIR (--recorder ADDR:PORT --key FILE | --journal FILE) [--file-num N]
        [--file-total-size SIZE] [--file-block-size SIZE] [--threads N]
        [--file-test-mode rndwr|seqwr] [--commit fsync|fdatasync|osync|odsync] [--direct] [--time SECS]
  tankbench durability record --listen ADDR:PORT --journal FILE [--key FILE]
        [--max-journal-size SIZE] [--max-sessions N]
  tankbench durability verify DIR --from JOURNAL|ADDR:PORT [--key FILE] [--examples N] [--direct]
        [--max-journal-size SIZE]
        [--save[=DIR]] [--json FILE] [--label K=V]
See docs/durability.md.
";

pub fn durability_main(args: Vec<OsString>) -> anyhow::Result<i32> {
    let Some(sub) = args.first().map(|a| a.to_string_lossy().into_owned()) else {
        eprint!("{USAGE}");
        return Ok(1);
    };
    let rest = &args[1..];
    match sub.as_str() {
        "write" => write(rest),
        "record" => record(rest),
        "verify" => verify(rest),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(0)
        }
        other => anyhow::bail!(
            "durability: unknown command '{other}'; accepted: write, record, verify, help"
        ),
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
    let summary = durability::writer::write(&opts, &mut |l| eprintln!("{l}"))
        .map_err(|e| failed(Command::Write, e))?;
    println!("{}", summary.line(&opts.sink));
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
    for line in &v.lines {
        println!("{line}");
    }
    if let Some(path) = &opts.json {
        let mut doc = serde_json::to_string_pretty(&v.result)?;
        doc.push('\n');
        write_atomically(path, doc.as_bytes(), Existing::Keep)
            .map_err(|e| anyhow::anyhow!("durability verify: --json={}: {e}", path.display()))?;
    }
    if let Some(dir) = &opts.save {
        let store = ResultStore::open(dir.as_path()).context("--save")?;
        let path = store.save(&v.result).context("--save")?;
        eprintln!("saved {}", path.display());
    }
    Ok(if v.passed() { 0 } else { 1 })
}
