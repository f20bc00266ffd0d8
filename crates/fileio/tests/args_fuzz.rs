//! Property test of the fileio parser (`options::check_command_line`, words to
//! validated options) over generated argument vectors: it never panics, a
//! refusal is one line with exit code 1 that names an option or argument of the
//! command line, and what it accepts is within what the I/O code can hold.
//!
//! The words mix every known option name (in `-` and `_` spellings), unknown
//! names, positionals, and values chosen at the edges of sysbench's types
//! (empty, negative, 2^31, 2^64, bad suffixes, control characters) with random
//! text. 2000 cases run in well under a second.

use fileio::options::{check_command_line, Action, CommandLine};
use fileio::sysbench::args::OPTIONS;
use fileio::text::{printable, printable_word};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// Values at the edges of INT, SIZE, DOUBLE, BOOL, LIST and the option-specific
/// keywords.
const EDGE_VALUES: &[&str] = &[
    "",
    "0",
    "1",
    "-1",
    "+7",
    " 5",
    "5 ",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "16777216T",
    "8388607T",
    "1Q",
    "4K",
    "4kib",
    "1.5G",
    "0x10",
    "on",
    "off",
    "ON",
    "true",
    "yes",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "50%",
    "-50%",
    "%",
    "off",
    "OFF",
    "direct",
    "sync,dsync,direct",
    "direct,foo",
    ",,",
    "rndrw",
    "seqwr",
    "seqrd",
    "async",
    "mmap",
    "fdatasync",
    "json",
    "random",
    "fixed:1ms",
    "fixed:1e300s",
    "bimodal:1ms:10ms:0.5",
    "a\nb",
    "\u{1b}[2J",
    "é",
];

fn option_names() -> Vec<String> {
    let mut names: Vec<String> = OPTIONS.iter().map(|o| o.name.to_string()).collect();
    names.extend(["test", "foo", "warmup-time", "init-rng", ""].map(String::from));
    names
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(EDGE_VALUES).prop_map(String::from),
        1 => "[0-9]{1,25}[kKmMgGtTqQ]?",
        1 => "-?[0-9]{1,12}%?",
        1 => any::<String>(),
    ]
}

fn option_word() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(option_names()),
        any::<bool>(),
        proptest::option::of(value()),
    )
        .prop_map(|(name, underscores, value)| {
            let name = if underscores {
                name.replace('-', "_")
            } else {
                name
            };
            match value {
                Some(v) => format!("--{name}={v}"),
                None => format!("--{name}"),
            }
        })
}

/// Words of a command line, mostly shaped like a real one (test name, options,
/// command) so that most cases get past the positional checks to the options.
fn command_line() -> impl Strategy<Value = Vec<String>> {
    (
        proptest::bool::weighted(0.9),
        proptest::option::weighted(
            0.7,
            proptest::sample::select(&["seqwr", "seqrd", "rndrw"][..]),
        ),
        proptest::collection::vec(option_word(), 0..8),
        proptest::option::weighted(0.1, any::<String>()),
        proptest::sample::select(&["run", "run", "prepare", "cleanup", "help", "cpu", ""][..]),
        proptest::bool::weighted(0.9),
    )
        .prop_map(|(lead, mode, options, stray, command, with_command)| {
            let mut words = Vec::new();
            if lead {
                words.push("fileio".to_string());
            }
            if let Some(m) = mode {
                words.push(format!("--file-test-mode={m}"));
            }
            words.extend(options);
            if let Some(w) = stray {
                words.push(w);
            }
            if with_command {
                words.push(command.to_string());
            }
            words
        })
}

/// The option name of `--name[=value]`, in both spellings, and its value.
fn split_option(word: &str) -> Option<(String, String, Option<&str>)> {
    let body = word.strip_prefix("--")?;
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    Some((name.replace('_', "-"), name.replace('-', "_"), value))
}

/// Does `line` name something the user typed (or the argument that is missing)?
fn names_an_option_or_argument(line: &str, words: &[String]) -> bool {
    if line.contains("command argument") || line.contains("--file-test-mode") {
        return true;
    }
    words.iter().any(|w| match split_option(w) {
        Some((dashed, underscored, value)) => {
            (!dashed.is_empty() && (line.contains(&dashed) || line.contains(&underscored)))
                || value.is_some_and(|v| !v.is_empty() && line.contains(&*printable(v)))
                || line.contains(&*printable(w))
        }
        None => line.contains(&*printable_word(w)),
    })
}

proptest! {
    #![proptest_config(Config {
        cases: 2000,
        // A failure prints the smallest failing command line; nothing is
        // written into the source tree.
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn parser_never_panics_and_refuses_in_one_line(words in command_line()) {
        match check_command_line(&words) {
            Err(f) => {
                prop_assert_eq!(f.exit_code, 1);
                let text: Vec<&str> = f
                    .lines
                    .iter()
                    .map(|(_, l)| l.as_str())
                    .filter(|l| !l.is_empty())
                    .collect();
                prop_assert_eq!(text.len(), 1, "{:?}: {:?}", words, f.lines);
                let line = text[0];
                prop_assert!(
                    !line.contains(['\n', '\r']),
                    "{:?}: the message spans lines: {:?}",
                    words,
                    line
                );
                prop_assert!(
                    names_an_option_or_argument(line, &words),
                    "{:?}: the message names nothing typed: {}",
                    words,
                    line
                );
            }
            Ok(CommandLine::Command(settings)) => {
                let (w, run) = match &settings.action {
                    Action::Run(spec) => (&spec.files, Some(spec)),
                    Action::Prepare(files) | Action::Cleanup(files) => (files, None),
                };
                let g = &settings.general;
                prop_assert!(w.file_num >= 1 && w.file_num <= i32::MAX as u64);
                prop_assert!(w.block_size >= 1 && w.block_size <= i32::MAX as u64);
                prop_assert!(w.total_size >= 1 && w.total_size <= i64::MAX as u64);
                prop_assert!(w.file_size <= w.total_size);
                prop_assert!(run.is_none_or(|r| r.request_size() <= i32::MAX as u64));
                prop_assert!(g.threads >= 1);
                prop_assert!(g.time_s <= i32::MAX as u64 && g.events <= i32::MAX as u64);
                prop_assert!(g.report_checkpoints_s.iter().all(|&c| c >= 1 && c <= i32::MAX as u64));
            }
            Ok(_) => {}
        }
    }
}

/// The generator reaches the cases the properties are about (a generator that
/// never produced a refusal would make the property test pass vacuously).
#[test]
fn the_edges_are_refused_in_one_line() {
    for words in [
        &[
            "fileio",
            "--file-total-size=18446744073709551616",
            "prepare",
        ][..],
        &["fileio", "--thread-stack-size=1Q", "run"],
        &["fileio", "--file-test-mode=", "run"],
        &["fileio", "--file-test-mode=a\nb", "run"],
        &["fileio", "--events=-1", "run"],
        &["fileio", "--debug=ON", "run"],
    ] {
        let f = check_command_line(words).expect_err("refused");
        let text: Vec<&str> = f
            .lines
            .iter()
            .map(|(_, l)| l.as_str())
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(text.len(), 1, "{words:?}: {:?}", f.lines);
        assert!(!text[0].contains('\n'), "{words:?}");
        let owned: Vec<String> = words.iter().map(|s| s.to_string()).collect();
        assert!(names_an_option_or_argument(text[0], &owned), "{}", text[0]);
    }
}
