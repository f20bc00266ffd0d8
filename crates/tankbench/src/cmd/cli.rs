//! The command line of every command outside the sysbench-compatible front
//! end, as one clap definition. Parsing, `--help`, `--version`, the man
//! pages (`tankbench man`) and the shell completions (`tankbench
//! completions`) all come from it, so they cannot disagree.
//!
//! `tankbench fileio …` and the legacy `tankbench --test=fileio …` never
//! reach clap (see [`super::dispatch`]): they keep sysbench's parser, texts
//! and order. fileio is still a subcommand here, built from the front end's
//! option table, so that the man page and completions list its options.

use super::{completions, durability, lab, man, plan, probe, report, simulate, slog};
use clap::error::ErrorKind;
use clap::{Arg, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::ffi::OsString;

/// Measure, plan, predict and compare ZFS / NAS storage.
#[derive(Debug, Parser)]
#[command(
    name = "tankbench",
    version,
    propagate_version = true,
    subcommand_required = true,
    arg_required_else_help = true,
    after_help = "`tankbench --test=fileio [OPTIONS] COMMAND` is the fileio test in sysbench 0.4/0.5's \
                  syntax. A copy or symlink of the binary named `sysbench` behaves as `sysbench`."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: TopCommand,
}

/// The commands, in the order `tankbench --help` lists them.
#[derive(Debug, Subcommand)]
enum TopCommand {
    Quick(super::fileio::QuickArgs),
    Fileio(FileioOptions),
    Fio(FioOptions),
    Plan(plan::PlanArgs),
    Lab(lab::LabArgs),
    Simulate(simulate::SimulateArgs),
    Durability(durability::DurabilityArgs),
    Slog(slog::SlogArgs),
    Probe(probe::ProbeArgs),
    Results(report::ResultsArgs),
    Compare(report::CompareArgs),
    Report(report::ReportArgs),
    Chart(report::ChartArgs),
    Completions(completions::CompletionsArgs),
    Man(man::ManArgs),
}

/// `tankbench fileio`'s options. This definition is never used to parse: the words go to the
/// sysbench-compatible parser. It exists for the man page and the shell
/// completions, built from that parser's option table.
#[derive(Debug, Clone)]
pub(crate) struct FileioOptions;

impl FromArgMatches for FileioOptions {
    fn from_arg_matches(_: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(FileioOptions)
    }

    fn update_from_arg_matches(&mut self, _: &ArgMatches) -> Result<(), clap::Error> {
        Ok(())
    }
}

impl Args for FileioOptions {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        use fileio::sysbench::args::{Section, OPTIONS};
        // sysbench's own `--help` and `--version` are options of the table.
        let cmd = cmd
            .about("Drop-in for `sysbench fileio`: prepare, run or clean up a file I/O workload")
            .long_about(
                "Drop-in for `sysbench fileio`: prepare, run or clean up a file I/O workload.\n\n\
                 The options take sysbench's --name=value form; `tankbench fileio help` prints \
                 sysbench's own help, in its order. The legacy `tankbench --test=fileio ...` is \
                 the same command.",
            )
            .disable_help_flag(true)
            .disable_version_flag(true)
            .arg(
                Arg::new("command")
                    .value_name("COMMAND")
                    .value_parser(["prepare", "run", "cleanup", "help"])
                    .help("prepare the file set, run the workload, remove the files, or print sysbench's help"),
            );
        OPTIONS
            .iter()
            // Hidden options are for tests; the database options are accepted
            // for scripts that pass them to every sysbench call, never read.
            .filter(|o| !matches!(o.section, Section::Hidden | Section::Database))
            .fold(cmd, |cmd, o| cmd.arg(fileio_option(o)))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// `tankbench fio`'s options. Never used to parse (the words go to the fio
/// job-language parser, see [`super::dispatch`]); it lists the supported
/// fio options, one per row of their table, for the man page and the shell
/// completions.
#[derive(Debug, Clone)]
pub(crate) struct FioOptions;

impl FromArgMatches for FioOptions {
    fn from_arg_matches(_: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(FioOptions)
    }

    fn update_from_arg_matches(&mut self, _: &ArgMatches) -> Result<(), clap::Error> {
        Ok(())
    }
}

impl Args for FioOptions {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let cmd = cmd
            .about(
                "Run fio job files (a supported subset of fio's options) with tankbench's engines",
            )
            .disable_help_flag(true)
            .arg(
                Arg::new("jobfile")
                    .value_name("JOB.fio")
                    .num_args(0..)
                    .help("fio job files; or the jobs as options, --name=JOB --OPTION=VALUE ..."),
            )
            .arg(
                Arg::new("output-format")
                    .long("output-format")
                    .value_parser(["normal", "json", "json+"])
                    .require_equals(true)
                    .help("report format [default: normal]"),
            )
            .arg(
                Arg::new("output")
                    .long("output")
                    .value_name("FILE")
                    .require_equals(true)
                    .help("write the report to the new file FILE"),
            )
            .arg(
                Arg::new("parse-only")
                    .long("parse-only")
                    .num_args(0)
                    .help("check the jobs and run nothing"),
            );
        fileio::fio::settings::OPTIONS.iter().fold(cmd, |cmd, o| {
            let optional = o.kind.form().starts_with('[');
            let arg = Arg::new(o.name)
                .long(o.name)
                .help(o.help)
                .help_heading("fio job options")
                .value_name(o.kind.value_name())
                .require_equals(true);
            cmd.arg(if optional {
                arg.num_args(0..=1)
            } else {
                arg.num_args(1)
            })
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// One row of fileio's option table as a clap argument: `--name=VALUE`, or
/// `--name[=VALUE]` where the value may be left out (booleans, `--save`).
fn fileio_option(o: &fileio::sysbench::args::OptionSpec) -> Arg {
    use fileio::sysbench::args::Section;
    let heading = match o.section {
        Section::FileIo => "fileio options",
        Section::General => "General options",
        Section::Random => "Pseudo-Random Numbers Generator options",
        Section::Log => "Log options",
        _ => "tankbench options",
    };
    let help = match o.default {
        Some(d) if !d.is_empty() => format!("{} [default: {d}]", o.description),
        _ => o.description.to_string(),
    };
    // The table writes `=N`, `=[LIST,...]`, or `[=on|off]` for a value that
    // may be left out.
    let optional = o.help_fmt.starts_with('[');
    let value_name = o
        .help_fmt
        .trim_start_matches(['[', '='])
        .trim_start_matches('[')
        .trim_end_matches(']');
    let mut arg = Arg::new(o.name)
        .long(o.name)
        .help(help)
        .help_heading(heading)
        .value_name(value_name)
        .require_equals(true);
    if !o.values.is_empty() {
        // For the completions and the man page; sysbench's help text
        // already lists them between braces.
        arg = arg
            .value_parser(clap::builder::PossibleValuesParser::new(o.values))
            .hide_possible_values(true);
    }
    if optional {
        arg.num_args(0..=1)
    } else {
        arg.num_args(1)
    }
}

/// The whole command line's definition (for parsing, the man pages and
/// completions), every command's examples at the end of its help.
pub(crate) fn command() -> clap::Command {
    super::examples::with_examples(Cli::command(), "")
}

/// The widest help clap prints on a wide terminal (its own default): long
/// lines of prose read badly.
const HELP_MAX_WIDTH: usize = 100;

/// `--help` wrapped to the same width as tables and prose: the terminal's
/// (up to [`HELP_MAX_WIDTH`]); in a pipe not at all (0 is clap's "no
/// limit"), as tables keep every column there: what reads the text (a
/// pager, a script) does its own wrapping.
fn with_screen_width(definition: clap::Command, width: ::fileio::terminal::Width) -> clap::Command {
    definition.term_width(width.limit().map_or(0, |w| w.min(HELP_MAX_WIDTH)))
}

/// Parse the words after the program name and run the command they name.
pub(crate) fn run(words: Vec<OsString>) -> anyhow::Result<i32> {
    // fileio answers `--help` with its own parser's text; `help fileio`
    // gives the same text rather than the placeholder definition.
    if let [help, name] = words.as_slice() {
        if help == "help" && name == "fileio" {
            return super::fileio::sysbench_main(vec!["fileio".into(), "help".into()]);
        }
    }
    let mut definition = with_screen_width(command(), super::stdout_screen().width);
    let parsed = definition
        .try_get_matches_from_mut(
            std::iter::once(OsString::from("tankbench")).chain(words.iter().cloned()),
        )
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return answer(&e, &definition, &words),
    };
    match cli.command {
        TopCommand::Quick(q) => super::fileio::quick(&q),
        // dispatch sends `fileio` to the front end before clap sees it; a
        // line clap still read as fileio goes there too, whole.
        TopCommand::Fileio(_) => super::fileio::sysbench_main(words),
        // As fileio: dispatch sends `fio` to its own parser first.
        TopCommand::Fio(_) => super::fio::run(&words_after(&words, 1)),
        TopCommand::Plan(a) => plan::run(&a),
        TopCommand::Lab(a) => lab::run(a),
        TopCommand::Simulate(a) => simulate::run(a),
        TopCommand::Durability(a) => durability::run(&a, &words_after(&words, 2)),
        TopCommand::Slog(a) => slog::run(&a),
        TopCommand::Probe(a) => probe::run(&a),
        TopCommand::Results(a) => report::results(a),
        TopCommand::Compare(a) => report::compare(&a),
        TopCommand::Report(a) => report::report(&a),
        TopCommand::Chart(a) => report::chart(&a),
        TopCommand::Completions(a) => completions::run(&a, command()),
        TopCommand::Man(a) => man::run(&a, command()),
    }
}

/// The words after the first `depth` command names (`durability write` …),
/// as typed: durability's options are read by the durability crate's own
/// reader from the words clap checked.
fn words_after(words: &[OsString], depth: usize) -> Vec<OsString> {
    let mut rest = words.to_vec();
    for _ in 0..depth {
        if let Some(i) = rest
            .iter()
            .position(|w| !w.to_string_lossy().starts_with('-'))
        {
            rest.remove(i);
        }
    }
    rest
}

/// What a clap refusal becomes: help and version texts print and exit 0;
/// help shown because nothing was given exits 1 (the command did nothing);
/// anything else is one line for main to print, exit status 1 (clap's own
/// is 2; the project's rule for bad input is 1).
fn answer(e: &clap::Error, definition: &clap::Command, words: &[OsString]) -> anyhow::Result<i32> {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            print_clap_text(e)?;
            Ok(0)
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            print_clap_text(e)?;
            Ok(1)
        }
        _ => Err(usage_error(e, definition, words)),
    }
}

/// Print a help or version text where clap sends it, with its colours, by
/// the rules of [`super::write_stdout`]: a closed pipe is fine, a full
/// stdout is the command's failure.
fn print_clap_text(e: &clap::Error) -> anyhow::Result<()> {
    match e.print() {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe && !e.use_stderr() => {
            Err(anyhow::Error::new(err).context("writing to stdout"))
        }
        _ => Ok(()),
    }
}

/// A clap refusal as one line: the command that refused it, clap's message
/// and tips, and for an unknown option or command the ones accepted there.
fn usage_error(e: &clap::Error, definition: &clap::Command, words: &[OsString]) -> anyhow::Error {
    let path = command_path(definition, words);
    let at = path.last().copied().unwrap_or(definition);
    let mut line = clap_error_line(e);
    let accepted: Vec<String> = match e.kind() {
        ErrorKind::UnknownArgument => at
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter_map(|a| a.get_long())
            .filter(|l| !matches!(*l, "help" | "version"))
            .map(|l| format!("--{l}"))
            .collect(),
        ErrorKind::InvalidSubcommand => at
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name().to_string())
            .collect(),
        _ => Vec::new(),
    };
    if !accepted.is_empty() {
        line.push_str(&format!("; accepted: {}", accepted.join(", ")));
    }
    let names: Vec<&str> = path.iter().map(|c| c.get_name()).collect();
    if names.is_empty() {
        anyhow::anyhow!("{line}")
    } else {
        anyhow::anyhow!("{}: {line}", names.join(" "))
    }
}

/// The (sub)commands the words name, outermost first (`simulate`,
/// `matrix`): where a refusal happened, for its prefix.
fn command_path<'a>(definition: &'a clap::Command, words: &[OsString]) -> Vec<&'a clap::Command> {
    let mut path = Vec::new();
    let mut at = definition;
    for word in words.iter().filter_map(|w| w.to_str()) {
        if word == "--" {
            break;
        }
        if let Some(sub) = at.find_subcommand(word) {
            path.push(sub);
            at = sub;
        }
    }
    path
}

/// clap's message and tips on one line, without its `error: ` label, usage
/// block and help hint (the command's `--help` has those).
pub(crate) fn clap_error_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let mut parts = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .map(|l| l.strip_prefix("error: ").unwrap_or(l));
    let mut line = parts.next().unwrap_or_default().to_string();
    for part in parts {
        // A tip is a sentence of its own; a continuation (the list of
        // missing arguments) belongs to the message before it.
        line.push_str(if part.starts_with("tip:") { "; " } else { " " });
        line.push_str(part);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn every_fileio_option_of_the_table_is_listed_once() {
        let cmd = command();
        let fileio = cmd.find_subcommand("fileio").expect("fileio");
        for name in [
            "file-test-mode",
            "file-num",
            "threads",
            "save",
            "percentile",
        ] {
            assert!(
                fileio.get_arguments().any(|a| a.get_long() == Some(name)),
                "--{name}"
            );
        }
        assert!(!fileio
            .get_arguments()
            .any(|a| a.get_long() == Some("mysql-host")));
    }

    fn refusal(words: &[&str]) -> String {
        let words: Vec<OsString> = words.iter().map(OsString::from).collect();
        format!("{:#}", run(words).unwrap_err())
    }

    #[test]
    fn an_unknown_option_is_one_line_with_the_command_and_the_accepted_options() {
        let line = refusal(&["compare", "a", "b", "--formt=csv"]);
        assert!(
            line.starts_with("compare: unexpected argument '--formt'"),
            "{line}"
        );
        assert!(
            line.contains("accepted: --dir, --format, --alpha"),
            "{line}"
        );
        assert!(!line.contains('\n'), "{line}");
        let line = refusal(&["simulate", "matrix", "m.toml", "--bogus"]);
        assert!(line.starts_with("simulate matrix: "), "{line}");
    }

    #[test]
    fn an_unknown_command_lists_the_commands() {
        let line = refusal(&["frobnicate"]);
        assert!(line.contains("'frobnicate'"), "{line}");
        assert!(
            line.contains("accepted: quick, fileio, fio, plan, lab, simulate"),
            "{line}"
        );
        let line = refusal(&["lab", "frobnicate"]);
        assert!(line.starts_with("lab: "), "{line}");
        assert!(line.contains("up, run, status, down"), "{line}");
        assert!(!line.contains("__daemon"), "{line}");
    }

    #[test]
    fn a_missing_argument_is_named_on_the_same_line() {
        let line = refusal(&["plan"]);
        assert!(
            line.starts_with("plan: the following required arguments were not provided: --disks"),
            "{line}"
        );
    }

    #[test]
    fn durability_words_lose_only_the_command_names() {
        let words: Vec<OsString> = ["durability", "write", "d", "--journal", "write"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(words_after(&words, 2), ["d", "--journal", "write"]);
    }
}
