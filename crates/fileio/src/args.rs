//! The sysbench 1.0.20 command-line model: words -> [`ParsedArgs`].
//!
//! This is the first of two stages (ripgrep's model): here we only record what was
//! typed, with sysbench's syntax rules (`--name=value`, bare booleans, `-` and `_`
//! alike, last one wins, positionals for test and command). The second stage,
//! [`crate::options`], turns the words into typed, validated options, with
//! sysbench's messages and its order of checks.

use std::collections::HashMap;

/// Value types of sysbench options; they decide how a value is parsed and how a
/// parse failure is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    /// Base-10 32-bit signed integer; failures go to stderr as
    /// `Invalid value for the 'name' option: 'v'`.
    Int,
    /// Digits plus an optional K/M/G/T suffix; anything else reads as 0.
    Size,
    /// `strtod` rules, garbage reads as 0.
    Double,
    /// Bare, on/true/1, off/false/0; anything else is an invalid option.
    Bool,
    String,
    /// Comma-separated, empty items dropped.
    List,
}

/// Where an option comes from; decides in which help section it is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    General,
    Random,
    Log,
    FileIo,
    /// Options of tankbench that sysbench does not have.
    Extension,
    /// Accepted for compatibility, never listed.
    Hidden,
}

/// One known option.
#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    /// Canonical name with dashes.
    pub name: &'static str,
    pub ty: ArgType,
    /// Format shown in help after the name (`=N`, `=SIZE`, `[=on|off]`, ...).
    pub help_fmt: &'static str,
    pub description: &'static str,
    /// Default value as sysbench prints it in `[...]`; None prints no brackets.
    pub default: Option<&'static str>,
    pub section: Section,
}

macro_rules! opt {
    ($name:expr, $ty:ident, $fmt:expr, $desc:expr, $def:expr, $sec:ident) => {
        OptionSpec {
            name: $name,
            ty: ArgType::$ty,
            help_fmt: $fmt,
            description: $desc,
            default: $def,
            section: Section::$sec,
        }
    };
}

/// Every option tankbench's fileio front end accepts. Order is help order.
pub const OPTIONS: &[OptionSpec] = &[
    // fileio options (sysbench 1.0.20 help order).
    opt!("file-num", Int, "=N", "number of files to create", Some("128"), FileIo),
    opt!("file-block-size", Size, "=N", "block size to use in all IO operations", Some("16384"), FileIo),
    opt!("file-total-size", Size, "=SIZE", "total size of files to create", Some("2G"), FileIo),
    opt!("file-test-mode", String, "=STRING", "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}", None, FileIo),
    opt!("file-io-mode", String, "=STRING", "file operations mode {sync,async,mmap}", Some("sync"), FileIo),
    opt!("file-async-backlog", Int, "=N", "number of asynchronous operatons to queue per thread", Some("128"), FileIo),
    opt!("file-extra-flags", List, "=[LIST,...]", "list of additional flags to use to open files {sync,dsync,direct}", Some(""), FileIo),
    opt!("file-fsync-freq", Int, "=N", "do fsync() after this number of requests (0 - don't use fsync())", Some("100"), FileIo),
    opt!("file-fsync-all", Bool, "[=on|off]", "do fsync() after each write operation", Some("off"), FileIo),
    opt!("file-fsync-end", Bool, "[=on|off]", "do fsync() at the end of test", Some("on"), FileIo),
    opt!("file-fsync-mode", String, "=STRING", "which method to use for synchronization {fsync, fdatasync}", Some("fsync"), FileIo),
    opt!("file-merged-requests", Int, "=N", "merge at most this number of IO requests if possible (0 - don't merge)", Some("0"), FileIo),
    opt!("file-rw-ratio", Double, "=N", "reads/writes ratio for combined test", Some("1.5"), FileIo),
    // General options.
    opt!("threads", Int, "=N", "number of threads to use", Some("1"), General),
    opt!("events", Int, "=N", "limit for total number of events", Some("0"), General),
    opt!("time", Int, "=N", "limit for total execution time in seconds", Some("10"), General),
    opt!("forced-shutdown", String, "=STRING", "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable", Some("off"), General),
    opt!("thread-stack-size", Size, "=SIZE", "size of stack per thread", Some("64K"), General),
    opt!("rate", Int, "=N", "average transactions rate. 0 for unlimited rate", Some("0"), General),
    opt!("report-interval", Int, "=N", "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports", Some("0"), General),
    opt!("report-checkpoints", List, "=[LIST,...]", "dump full statistics and reset all counters at specified points in time (seconds from the start, comma-separated)", Some(""), General),
    opt!("debug", Bool, "[=on|off]", "print more debugging info", Some("off"), General),
    opt!("validate", Bool, "[=on|off]", "perform validation checks where possible", Some("off"), General),
    opt!("help", Bool, "[=on|off]", "print help and exit", Some("off"), General),
    opt!("version", Bool, "[=on|off]", "print version and exit", Some("off"), General),
    opt!("config-file", String, "=FILENAME", "File containing command line options", None, General),
    opt!("tx-rate", Int, "=N", "deprecated alias for --rate", Some("0"), General),
    opt!("max-requests", Int, "=N", "deprecated alias for --events", Some("0"), General),
    opt!("max-time", Int, "=N", "deprecated alias for --time", Some("0"), General),
    opt!("num-threads", Int, "=N", "deprecated alias for --threads", Some("1"), General),
    // Random numbers (fileio's offsets are always uniform; values are still checked).
    opt!("rand-type", String, "=STRING", "random numbers distribution {uniform,gaussian,special,pareto}", Some("special"), Random),
    opt!("rand-spec-iter", Int, "=N", "number of iterations used for numbers generation", Some("12"), Random),
    opt!("rand-spec-pct", Int, "=N", "percentage of values to be treated as 'special' (for special distribution)", Some("1"), Random),
    opt!("rand-spec-res", Int, "=N", "percentage of 'special' values to use (for special distribution)", Some("75"), Random),
    opt!("rand-seed", Int, "=N", "seed for random number generator. When 0, the current time is used as a RNG seed.", Some("0"), Random),
    opt!("rand-pareto-h", Double, "=N", "parameter h for pareto distribution", Some("0.2"), Random),
    // Log options.
    opt!("verbosity", Int, "=N", "verbosity level {5 - debug, 0 - only critical messages}", Some("3"), Log),
    opt!("percentile", Int, "=N", "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations", Some("95"), Log),
    opt!("histogram", Bool, "[=on|off]", "print latency histogram in report", Some("off"), Log),
    // tankbench extensions.
    opt!("file-dir", String, "=DIR", "directory that holds the test files", Some("."), Extension),
    opt!("file-data", String, "=STRING", "what written blocks hold {zero, random}; zero matches sysbench, random defeats compression", Some("zero"), Extension),
    opt!("percentiles", List, "=[LIST,...]", "percentiles for the per-operation latency section, e.g. 50,95,99,99.9", None, Extension),
    opt!("format", String, "=STRING", "report format on stdout {text, json}", Some("text"), Extension),
    opt!("json", String, "=FILE", "also write the result as JSON to FILE", None, Extension),
    opt!("progress", String, "=STRING", "live progress line on stderr {auto, on, off}", Some("auto"), Extension),
    opt!("drop-caches", Bool, "[=on|off]", "drop the page cache before the run (root only)", Some("off"), Extension),
    opt!("save", String, "[=DIR]", "keep the result in a result store", None, Extension),
    opt!("label", List, "=[LIST,...]", "labels for the stored result, KEY=VALUE,...", None, Extension),
    opt!("repeat", Int, "=N", "run the workload N times", Some("1"), Extension),
    opt!("mpi-shared-files", Bool, "[=on|off]", "MPI job: the ranks split one file set instead of each using its own rank-N subdirectory", Some("off"), Extension),
    opt!("mpi-stonewall", Bool, "[=on|off]", "MPI job: stop every rank when the first one finishes", Some("off"), Extension),
    opt!("tb-rank-delay", Int, "=MS", "testing: rank N of an MPI job waits N x MS milliseconds before the start barrier", Some("0"), Hidden),
    opt!("tb-inject-latency", String, "=SPEC", "testing: replace I/O by delays, e.g. fixed:2ms or bimodal:1ms:10ms:0.1", None, Hidden),
];

/// Look up an option by any spelling (`file_num`, `file-num`).
pub fn find_option(name: &str) -> Option<&'static OptionSpec> {
    let canonical = canonical_name(name);
    OPTIONS.iter().find(|o| o.name == canonical)
}

/// sysbench treats `-` and `_` alike in option names.
pub fn canonical_name(name: &str) -> String {
    name.replace('_', "-")
}

/// What the user typed, before any typing or validation.
#[derive(Debug, Clone, Default)]
pub struct ParsedArgs {
    /// The test name (`fileio`), from the first positional or `--test`.
    pub test: Option<String>,
    /// The command (`prepare`, `run`, `cleanup`, `help`).
    pub command: Option<String>,
    /// Option values by canonical name; `None` for a bare flag.
    values: HashMap<String, Option<String>>,
    /// Options that are not known, as typed (`--foo=bar`), in order.
    pub unknown: Vec<String>,
    /// Messages sysbench writes to stderr while reading the command line.
    pub stderr_notes: Vec<String>,
    /// A third positional (sysbench refuses it).
    pub extra_positional: Option<String>,
}

impl ParsedArgs {
    /// Read the words the sysbench way.
    pub fn parse<I, S>(words: I) -> ParsedArgs
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut parsed = ParsedArgs::default();
        for word in words {
            let word = word.as_ref();
            if let Some(body) = word.strip_prefix("--") {
                let (name, value) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (body, None),
                };
                let canonical = canonical_name(name);
                if canonical == "test" {
                    parsed.stderr_notes.push(
                        "WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options."
                            .to_string(),
                    );
                    // The value replaces any test name already seen; a command
                    // word taken as the test name is lost (sysbench's quirk).
                    parsed.test = value;
                    continue;
                }
                if find_option(&canonical).is_some() {
                    parsed.values.insert(canonical, value);
                } else {
                    parsed.unknown.push(word.to_string());
                }
            } else if parsed.test.is_none() {
                parsed.test = Some(word.to_string());
            } else if parsed.command.is_none() {
                parsed.command = Some(word.to_string());
            } else if parsed.extra_positional.is_none() {
                parsed.extra_positional = Some(word.to_string());
            }
        }
        parsed
    }

    /// The raw value: `None` if not given, `Some(None)` for a bare flag.
    pub fn raw(&self, name: &str) -> Option<Option<&str>> {
        self.values.get(name).map(|v| v.as_deref())
    }

    pub fn is_set(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// Set or replace a value (used for the legacy aliases).
    pub fn set(&mut self, name: &str, value: &str) {
        self.values
            .insert(name.to_string(), Some(value.to_string()));
    }
}

/// Why a value could not be read; rendered with sysbench's exact wording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueError {
    /// `Invalid value for the 'file_num' option: 'abc'` (stderr).
    BadInt { name: String, value: String },
    /// `invalid option: --file-fsync-all=ON` (stderr).
    BadBool { typed: String },
}

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValueError::BadInt { name, value } => write!(
                f,
                "Invalid value for the '{}' option: '{}'",
                name.replace('-', "_"),
                value
            ),
            ValueError::BadBool { typed } => write!(f, "invalid option: {typed}"),
        }
    }
}

impl ParsedArgs {
    fn default_of(name: &str) -> Option<&'static str> {
        find_option(name).and_then(|o| o.default)
    }

    /// INT: a whole-string base-10 integer that fits i32; empty or unset reads as
    /// the default (sysbench reads an empty value as 0).
    pub fn int(&self, name: &str) -> Result<i64, ValueError> {
        let text = match self.raw(name) {
            None => Self::default_of(name).unwrap_or("0"),
            Some(None) | Some(Some("")) => return Ok(0),
            Some(Some(v)) => v,
        };
        text.parse::<i32>()
            .map(i64::from)
            .map_err(|_| ValueError::BadInt {
                name: name.to_string(),
                value: text.to_string(),
            })
    }

    /// SIZE: see [`parse_size`].
    pub fn size(&self, name: &str) -> u64 {
        match self.raw(name) {
            None => parse_size(Self::default_of(name).unwrap_or("0")),
            Some(None) => 0,
            Some(Some(v)) => parse_size(v),
        }
    }

    pub fn double(&self, name: &str) -> f64 {
        match self.raw(name) {
            None => parse_strtod(Self::default_of(name).unwrap_or("0")),
            Some(None) => 0.0,
            Some(Some(v)) => parse_strtod(v),
        }
    }

    pub fn bool(&self, name: &str) -> Result<bool, ValueError> {
        match self.raw(name) {
            None => Ok(Self::default_of(name) == Some("on")),
            Some(None) => Ok(true),
            Some(Some("on" | "true" | "1")) => Ok(true),
            Some(Some("off" | "false" | "0")) => Ok(false),
            Some(Some(v)) => Err(ValueError::BadBool {
                typed: format!("--{name}={v}"),
            }),
        }
    }

    pub fn string(&self, name: &str) -> Option<String> {
        match self.raw(name) {
            None => Self::default_of(name).map(str::to_string),
            Some(None) => Some(String::new()),
            Some(Some(v)) => Some(v.to_string()),
        }
    }

    /// LIST: comma-separated, empty items dropped.
    pub fn list(&self, name: &str) -> Vec<String> {
        self.string(name)
            .unwrap_or_default()
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// Every boolean given on the command line, checked in one go (sysbench
    /// rejects a bad boolean as an invalid option).
    pub fn check_bools(&self) -> Result<(), ValueError> {
        for (name, _) in self.values.iter() {
            if let Some(spec) = find_option(name) {
                if spec.ty == ArgType::Bool {
                    self.bool(name)?;
                }
            }
        }
        Ok(())
    }
}

/// sysbench's SIZE rule: leading decimal digits, then an optional K/M/G/T suffix
/// (any case); any other suffix character makes the whole value 0; characters
/// after a valid suffix are ignored (`4MB` = `4M`). No overflow check in sysbench;
/// we saturate.
pub fn parse_size(text: &str) -> u64 {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if digits_end == 0 {
        return 0;
    }
    let number: u64 = text[..digits_end].parse().unwrap_or(u64::MAX);
    let multiplier: u64 = match text[digits_end..].chars().next() {
        None => 1,
        Some('k' | 'K') => 1 << 10,
        Some('m' | 'M') => 1 << 20,
        Some('g' | 'G') => 1 << 30,
        Some('t' | 'T') => 1 << 40,
        Some(_) => return 0,
    };
    number.saturating_mul(multiplier)
}

/// C `strtod` on the longest valid prefix; no valid prefix reads as 0.
pub fn parse_strtod(text: &str) -> f64 {
    let t = text.trim_start();
    // Try successively shorter prefixes: values are short, so this is cheap.
    let mut end = t.len();
    while end > 0 {
        if t.is_char_boundary(end) {
            let prefix = &t[..end];
            if !prefix.ends_with(['e', 'E', '+', '-']) {
                if let Ok(v) = prefix.parse::<f64>() {
                    if !prefix.eq_ignore_ascii_case("inf") && !prefix.eq_ignore_ascii_case("nan")
                        || prefix.len() == t.len()
                    {
                        return v;
                    }
                }
            }
        }
        end -= 1;
    }
    0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_rules_match_sysbench() {
        assert_eq!(parse_size("4K"), 4096);
        assert_eq!(parse_size("4k"), 4096);
        assert_eq!(parse_size("4MB"), 4 << 20);
        assert_eq!(parse_size("2G"), 2 << 30);
        assert_eq!(parse_size("1T"), 1 << 40);
        assert_eq!(parse_size("1.5G"), 0);
        assert_eq!(parse_size("0x10"), 0);
        assert_eq!(parse_size("12X"), 0);
        assert_eq!(parse_size("G"), 0);
        assert_eq!(parse_size("16384"), 16384);
    }

    #[test]
    fn strtod_takes_the_longest_prefix() {
        assert_eq!(parse_strtod("1.5"), 1.5);
        assert_eq!(parse_strtod("2abc"), 2.0);
        assert_eq!(parse_strtod("abc"), 0.0);
        assert_eq!(parse_strtod("1e"), 1.0);
        assert_eq!(parse_strtod("-1"), -1.0);
    }

    #[test]
    fn positionals_options_and_the_test_quirk() {
        let p = ParsedArgs::parse(["fileio", "--file_num=4", "run", "--file-num=5"]);
        assert_eq!(p.test.as_deref(), Some("fileio"));
        assert_eq!(p.command.as_deref(), Some("run"));
        assert_eq!(p.int("file-num").unwrap(), 5, "last one wins");

        let p = ParsedArgs::parse(["run", "--test=fileio"]);
        assert_eq!(p.test.as_deref(), Some("fileio"));
        assert_eq!(
            p.command, None,
            "run was taken as the test name and replaced"
        );

        let p = ParsedArgs::parse(["--test=fileio", "run"]);
        assert_eq!(p.command.as_deref(), Some("run"));
        assert_eq!(p.stderr_notes.len(), 1);
    }

    #[test]
    fn typed_values() {
        let p = ParsedArgs::parse([
            "--file-num=abc",
            "--file-fsync-all",
            "--file-fsync-end=ON",
            "--file-extra-flags=direct,,sync",
            "--events=",
        ]);
        assert_eq!(
            p.int("file-num").unwrap_err().to_string(),
            "Invalid value for the 'file_num' option: 'abc'"
        );
        assert!(p.bool("file-fsync-all").unwrap());
        assert_eq!(
            p.bool("file-fsync-end").unwrap_err().to_string(),
            "invalid option: --file-fsync-end=ON"
        );
        assert_eq!(p.list("file-extra-flags"), vec!["direct", "sync"]);
        assert_eq!(p.int("events").unwrap(), 0);
        assert_eq!(p.int("time").unwrap(), 10, "default");
        assert!(!p.bool("validate").unwrap());
        assert!(p.bool("file-fsync-end").is_err());
    }
}
