//! The sysbench 1.0.20 command-line model: words -> [`ParsedArgs`].
//!
//! This is the first of two stages (ripgrep's model): here we only record what was
//! typed, with sysbench's syntax rules (`--name=value`, bare booleans, `-` and `_`
//! alike, last one wins, positionals for test and command). The second stage,
//! [`crate::options`], turns the words into typed, validated options, with
//! sysbench's messages and its order of checks.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::spec::{DataPattern, FsyncMode, IoMode, Mode};
use crate::text::printable;

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
    /// sysbench's database options. sysbench 1.0.20 registers them for every
    /// test, so `sysbench fileio` accepts them (and checks their booleans) but
    /// never reads them; scripts that pass them to every sysbench call keep
    /// working. Never listed.
    Database,
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
    /// The names the option takes, when it takes one of a list (the
    /// setting's own table, e.g. `Mode::NAMES`); empty otherwise. What
    /// tankbench's man page and shell completions offer.
    pub values: &'static [&'static str],
}

macro_rules! opt {
    ($name:expr, $ty:ident, $fmt:expr, $desc:expr, $def:expr, $sec:ident) => {
        opt!($name, $ty, $fmt, $desc, $def, $sec, &[])
    };
    ($name:expr, $ty:ident, $fmt:expr, $desc:expr, $def:expr, $sec:ident, $values:expr) => {
        OptionSpec {
            name: $name,
            ty: ArgType::$ty,
            help_fmt: $fmt,
            description: $desc,
            default: $def,
            section: Section::$sec,
            values: $values,
        }
    };
}

/// Every option tankbench's fileio front end accepts. Order is help order.
pub const OPTIONS: &[OptionSpec] = &[
    // fileio options (sysbench 1.0.20 help order).
    opt!("file-num", Int, "=N", "number of files to create", Some("128"), FileIo),
    opt!("file-block-size", Size, "=N", "block size to use in all IO operations", Some("16384"), FileIo),
    opt!("file-total-size", Size, "=SIZE", "total size of files to create", Some("2G"), FileIo),
    opt!("file-test-mode", String, "=STRING", "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}", None, FileIo, &Mode::NAMES),
    opt!("file-io-mode", String, "=STRING", "file operations mode {sync,async,mmap}", Some("sync"), FileIo, &IoMode::NAMES),
    opt!("file-async-backlog", Int, "=N", "number of asynchronous operatons to queue per thread", Some("128"), FileIo),
    opt!("file-extra-flags", List, "=[LIST,...]", "list of additional flags to use to open files {sync,dsync,direct}", Some(""), FileIo),
    opt!("file-fsync-freq", Int, "=N", "do fsync() after this number of requests (0 - don't use fsync())", Some("100"), FileIo),
    opt!("file-fsync-all", Bool, "[=on|off]", "do fsync() after each write operation", Some("off"), FileIo),
    opt!("file-fsync-end", Bool, "[=on|off]", "do fsync() at the end of test", Some("on"), FileIo),
    opt!("file-fsync-mode", String, "=STRING", "which method to use for synchronization {fsync, fdatasync}", Some("fsync"), FileIo, &FsyncMode::NAMES),
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
    opt!("file-data", String, "=STRING", "what written blocks hold {zero, random}; zero matches sysbench, random defeats compression", Some("zero"), Extension, &DataPattern::NAMES),
    opt!("percentiles", List, "=[LIST,...]", "percentiles for the per-operation latency section, e.g. 50,95,99,99.9", None, Extension),
    opt!("format", String, "=STRING", "report format on stdout {text, json}", Some("text"), Extension),
    opt!("json", String, "=FILE", "also write the result as JSON to FILE", None, Extension),
    opt!("csv", String, "=FILE", "append one row per run to the CSV file FILE (the header when FILE is new)", None, Extension),
    opt!("intervals", String, "=FILE", "write each report interval as a JSON line to the new file FILE as the run goes (every second unless --report-interval is given)", None, Extension),
    opt!("openmetrics", String, "=FILE", "write the run's figures to FILE in Prometheus text format, for node_exporter's textfile collector", None, Extension),
    opt!("progress", String, "=STRING", "live progress line on stderr {auto, on, off}", Some("auto"), Extension),
    opt!("drop-caches", Bool, "[=on|off]", "drop the page cache before the run (root only)", Some("off"), Extension),
    opt!("save", String, "[=DIR]", "keep the result in a result store", None, Extension),
    opt!("label", List, "=[LIST,...]", "labels for the stored result, KEY=VALUE,...", None, Extension),
    opt!("repeat", Int, "=N", "run the workload N times", Some("1"), Extension),
    opt!("warmup", String, "=DURATION", "run this long first (5, 5s, 2m), left out of the figures; --time and --events count after it", Some("0"), Extension),
    opt!("mpi-shared-files", Bool, "[=on|off]", "MPI job: the ranks split one file set instead of each using its own rank-N subdirectory", Some("off"), Extension),
    opt!("mpi-stonewall", Bool, "[=on|off]", "MPI job: stop every rank when the first one finishes", Some("off"), Extension),
    opt!("tb-rank-delay", Int, "=MS", "testing: rank N of an MPI job waits N x MS milliseconds before the start barrier", Some("0"), Hidden),
    opt!("tb-inject-latency", String, "=SPEC", "testing: replace I/O by delays, e.g. fixed:2ms or bimodal:1ms:10ms:0.1", None, Hidden),
    // Database options of `sysbench --help` (1.0.20), with its types: accepted, never read.
    opt!("db-driver", String, "=STRING", "database driver (ignored by fileio)", Some("mysql"), Database),
    opt!("db-ps-mode", String, "=STRING", "prepared statements usage mode (ignored by fileio)", Some("auto"), Database),
    opt!("db-debug", Bool, "[=on|off]", "database debug output (ignored by fileio)", Some("off"), Database),
    opt!("mysql-host", List, "=[LIST,...]", "MySQL server host (ignored by fileio)", Some("localhost"), Database),
    opt!("mysql-port", List, "=[LIST,...]", "MySQL server port (ignored by fileio)", Some("3306"), Database),
    opt!("mysql-socket", List, "=[LIST,...]", "MySQL socket (ignored by fileio)", None, Database),
    opt!("mysql-user", String, "=STRING", "MySQL user (ignored by fileio)", Some("sbtest"), Database),
    opt!("mysql-password", String, "=STRING", "MySQL password (ignored by fileio)", Some(""), Database),
    opt!("mysql-db", String, "=STRING", "MySQL database name (ignored by fileio)", Some("sbtest"), Database),
    opt!("mysql-ssl", Bool, "[=on|off]", "MySQL SSL connections (ignored by fileio)", Some("off"), Database),
    opt!("mysql-ssl-cipher", String, "=STRING", "MySQL SSL cipher (ignored by fileio)", Some(""), Database),
    opt!("mysql-compression", Bool, "[=on|off]", "MySQL compression (ignored by fileio)", Some("off"), Database),
    opt!("mysql-debug", Bool, "[=on|off]", "MySQL client library trace (ignored by fileio)", Some("off"), Database),
    opt!("mysql-ignore-errors", List, "=[LIST,...]", "MySQL errors to ignore (ignored by fileio)", Some("1213,1020,1205"), Database),
    opt!("mysql-dry-run", Bool, "[=on|off]", "MySQL dry run (ignored by fileio)", Some("off"), Database),
    opt!("pgsql-host", String, "=STRING", "PostgreSQL server host (ignored by fileio)", Some("localhost"), Database),
    // INT in sysbench, but a bad value is never reported: sysbench checks an INT
    // only when a test reads it, and fileio never does.
    opt!("pgsql-port", Int, "=N", "PostgreSQL server port (ignored by fileio)", Some("5432"), Database),
    opt!("pgsql-user", String, "=STRING", "PostgreSQL user (ignored by fileio)", Some("sbtest"), Database),
    opt!("pgsql-password", String, "=STRING", "PostgreSQL password (ignored by fileio)", Some(""), Database),
    opt!("pgsql-db", String, "=STRING", "PostgreSQL database name (ignored by fileio)", Some("sbtest"), Database),
];

/// Look up an option by any spelling (`file_num`, `file-num`).
pub(crate) fn find_option(name: &str) -> Option<&'static OptionSpec> {
    let canonical = canonical_name(name);
    OPTIONS.iter().find(|o| o.name == canonical)
}

/// sysbench treats `-` and `_` alike in option names.
pub(crate) fn canonical_name(name: &str) -> String {
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
    /// Words sysbench refuses with `invalid option: WORD`, as typed, in
    /// command-line order: unknown names (`--foo=bar`) and booleans with a value
    /// other than on/true/1/off/false/0 (`--debug=ON`). sysbench reports the first
    /// of them, after its header; a bad boolean is refused even when a later
    /// word sets the option again.
    pub unknown: Vec<String>,
    /// Messages sysbench writes to stderr while reading the command line.
    pub stderr_notes: Vec<String>,
    /// A third positional (sysbench refuses it).
    pub extra_positional: Option<String>,
    /// The exact bytes of the file-name options typed on the command line
    /// (see [`FILE_NAME_OPTIONS`]), by canonical name; `values` holds their
    /// text, which is lossy when the name is not UTF-8.
    file_names: HashMap<String, OsString>,
}

/// Options whose values are file or directory names. A file name is bytes and
/// need not be UTF-8, so these keep the exact bytes typed; every other option
/// value is text.
pub(crate) const FILE_NAME_OPTIONS: [&str; 7] = [
    "config-file",
    "file-dir",
    "json",
    "save",
    "csv",
    "intervals",
    "openmetrics",
];

/// Command-line words as text, with the exact bytes of file-name values.
#[derive(Debug, Clone, Default)]
pub(crate) struct CommandWords {
    pub text: Vec<String>,
    /// Canonical option name -> the bytes of its last value on the command line.
    pub file_names: HashMap<String, OsString>,
}

impl CommandWords {
    /// Split the words the operating system gave into text and file names. A
    /// word that is not UTF-8 is accepted only as the value of a file-name
    /// option; anything else is refused with one line naming the word.
    pub(crate) fn from_os(words: &[OsString]) -> Result<CommandWords, String> {
        let mut out = CommandWords::default();
        for word in words {
            let bytes = word.as_bytes();
            let option_value = bytes
                .strip_prefix(b"--")
                .and_then(|body| {
                    body.iter()
                        .position(|&b| b == b'=')
                        .map(|i| (&body[..i], &body[i + 1..]))
                })
                .and_then(|(name, value)| {
                    let name = std::str::from_utf8(name).ok()?;
                    let canonical = canonical_name(name);
                    FILE_NAME_OPTIONS
                        .contains(&canonical.as_str())
                        .then(|| (name.to_string(), canonical, OsStr::from_bytes(value)))
                });
            match (word.to_str(), option_value) {
                (text, Some((name, canonical, value))) => {
                    out.file_names.insert(canonical, value.to_owned());
                    out.text.push(match text {
                        Some(t) => t.to_string(),
                        None => format!("--{name}={}", value.to_string_lossy()),
                    });
                }
                (Some(text), None) => out.text.push(text.to_string()),
                (None, None) => {
                    return Err(format!(
                        "FATAL: argument '{}' is not valid UTF-8 (only the file names of --{} may be other bytes)",
                        printable(&word.to_string_lossy()),
                        FILE_NAME_OPTIONS.join(", --")
                    ))
                }
            }
        }
        Ok(out)
    }
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
                match find_option(&canonical) {
                    Some(spec)
                        if spec.ty == ArgType::Bool && bool_value(value.as_deref()).is_none() =>
                    {
                        // Not stored: the option keeps its earlier value, so the
                        // checks before the header see a valid one.
                        parsed.unknown.push(word.to_string());
                    }
                    Some(_) => {
                        parsed.values.insert(canonical, value);
                    }
                    None => parsed.unknown.push(word.to_string()),
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

    /// Attach the exact bytes of the file-name options (from [`CommandWords`]).
    pub(crate) fn with_file_names(mut self, file_names: HashMap<String, OsString>) -> ParsedArgs {
        self.file_names = file_names;
        self
    }

    /// A file-name option's value as a path: the exact bytes typed on the
    /// command line, else its text (a config file's value, or a default).
    pub fn path(&self, name: &str) -> Option<PathBuf> {
        match self.file_names.get(name) {
            Some(bytes) => Some(PathBuf::from(bytes)),
            None => self.string(name).map(PathBuf::from),
        }
    }

    /// The raw value: `None` if not given, `Some(None)` for a bare flag.
    pub fn raw(&self, name: &str) -> Option<Option<&str>> {
        self.values.get(name).map(|v| v.as_deref())
    }

    /// Set or replace a value (used for the legacy aliases).
    pub fn set(&mut self, name: &str, value: &str) {
        self.values
            .insert(name.to_string(), Some(value.to_string()));
    }
}

/// Why a value could not be read. The first two use sysbench's exact wording
/// (its option parser writes them to stderr); sysbench has no message for the
/// third, where it silently wraps the number around.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueError {
    /// `Invalid value for the 'file_num' option: 'abc'` (stderr).
    BadInt { name: String, value: String },
    /// `invalid option: --file-fsync-all=ON` (stderr).
    BadBool { typed: String },
    /// A SIZE above what the option can hold (`--file-total-size=16777216T`).
    SizeTooLarge {
        name: String,
        value: String,
        max: u64,
    },
}

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValueError::BadInt { name, value } => write!(
                f,
                "Invalid value for the '{}' option: '{}'",
                name.replace('-', "_"),
                printable(value)
            ),
            ValueError::BadBool { typed } => write!(f, "invalid option: {}", printable(typed)),
            ValueError::SizeTooLarge { name, value, max } => write!(
                f,
                "Invalid value for {name}: {} (too large; accepted: 1 to {max} bytes, digits with an optional K, M, G or T suffix)",
                printable(value)
            ),
        }
    }
}

/// sysbench's boolean words (exact and case-sensitive since 1.0.15); `None`
/// (bare `--name`) means on; anything else is not a boolean.
fn bool_value(value: Option<&str>) -> Option<bool> {
    match value {
        None | Some("on" | "true" | "1") => Some(true),
        Some("off" | "false" | "0") => Some(false),
        Some(_) => None,
    }
}

/// An INT value the way sysbench reads one (`strtol(text, &end, 10)`, then
/// the whole text must be used and the number must fit a C `int`): leading
/// white space and a sign are allowed, nothing may follow the digits.
pub(crate) fn parse_c_int(text: &str) -> Option<i32> {
    text.trim_start_matches(C_SPACE).parse::<i32>().ok()
}

impl ParsedArgs {
    fn default_of(name: &str) -> Option<&'static str> {
        find_option(name).and_then(|o| o.default)
    }

    /// INT: see [`parse_c_int`]. Unset reads as the default; an empty value
    /// (`--events=`) reads as 0, because sysbench then drops the default too.
    pub fn int(&self, name: &str) -> Result<i64, ValueError> {
        let text = match self.raw(name) {
            None => Self::default_of(name).unwrap_or("0"),
            Some(None) | Some(Some("")) => return Ok(0),
            Some(Some(v)) => v,
        };
        parse_c_int(text)
            .map(i64::from)
            .ok_or_else(|| ValueError::BadInt {
                name: name.to_string(),
                value: text.to_string(),
            })
    }

    /// SIZE: see [`size_value`]; 0 when it is not a size (sysbench's reading,
    /// reported by the option's own check), an error when it is above `max`,
    /// the most the option can hold.
    pub fn size(&self, name: &str, max: u64) -> Result<u64, ValueError> {
        let text = match self.raw(name) {
            None => Self::default_of(name).unwrap_or("0"),
            Some(None) => "",
            Some(Some(v)) => v,
        };
        match size_value(text) {
            Some(v) if v <= max => Ok(v),
            _ => Err(ValueError::SizeTooLarge {
                name: name.to_string(),
                value: text.to_string(),
                max,
            }),
        }
    }

    pub fn double(&self, name: &str) -> f64 {
        match self.raw(name) {
            None => parse_strtod(Self::default_of(name).unwrap_or("0")),
            Some(None) => 0.0,
            Some(Some(v)) => parse_strtod(v),
        }
    }

    /// BOOL. A bad value typed on the command line is never stored (it is in
    /// [`ParsedArgs::unknown`]); one stored with [`ParsedArgs::set`] is an error.
    pub fn bool(&self, name: &str) -> Result<bool, ValueError> {
        match self.raw(name) {
            None => Ok(Self::default_of(name) == Some("on")),
            Some(v) => bool_value(v).ok_or_else(|| ValueError::BadBool {
                typed: format!("--{name}={}", v.unwrap_or_default()),
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
}

/// sysbench's SIZE rule (`sb_opt_to_size` in sb_options.c, observed with the
/// 1.0.20 binary): leading decimal digits, then an optional K/M/G/T suffix (any
/// case); any other suffix character makes the whole value 0; characters after
/// a valid suffix are ignored (`4MB` = `4M`); no leading digit reads as 0.
///
/// `None` when the number does not fit in 64 bits. sysbench computes it modulo
/// 2^64 instead: `18446744073709551616` reads as 0 and 2^64 + 4096 as 4096, so
/// a typo can turn into a size that fills the disk.
pub fn size_value(text: &str) -> Option<u64> {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if digits_end == 0 {
        return Some(0);
    }
    let multiplier: u64 = match text[digits_end..].chars().next() {
        None => 1,
        Some('k' | 'K') => 1 << 10,
        Some('m' | 'M') => 1 << 20,
        Some('g' | 'G') => 1 << 30,
        Some('t' | 'T') => 1 << 40,
        // Checked before the digits: an unknown suffix reads as 0 however
        // long the number is.
        Some(_) => return Some(0),
    };
    let number: u64 = text[..digits_end].parse().ok()?;
    number.checked_mul(multiplier)
}

/// [`size_value`] for callers that only need a positive size: 0 when the text
/// is not a size or does not fit in 64 bits.
pub fn parse_size(text: &str) -> u64 {
    size_value(text).unwrap_or(0)
}

/// The white space of C's `isspace()` in the "C" locale.
const C_SPACE: [char; 6] = [' ', '\t', '\n', '\u{b}', '\u{c}', '\r'];

/// C `strtod` on the longest valid prefix, as sysbench reads a DOUBLE (no error
/// check: no valid prefix reads as 0, trailing junk is ignored). Decimal forms,
/// `inf`, `infinity` and `nan` in any case; C's hexadecimal floats (`0x1p3`) are
/// not recognised and read as 0. One pass, so a huge argument costs no more
/// than its length.
pub(crate) fn parse_strtod(text: &str) -> f64 {
    let t = text.trim_start_matches(C_SPACE);
    let b = t.as_bytes();
    let mut i = 0;
    let negative = b.first() == Some(&b'-');
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let word =
        |w: &str| b.len() >= i + w.len() && b[i..i + w.len()].eq_ignore_ascii_case(w.as_bytes());
    if word("inf") {
        return if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    if word("nan") {
        // glibc keeps the sign: `-nan` reads as a NaN with its sign bit set
        // (and sysbench prints it back as `-nan`).
        return if negative { -f64::NAN } else { f64::NAN };
    }
    let digits = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let int_end = digits(i);
    let mut end = int_end;
    let mut mantissa_digits = int_end - i;
    if b.get(end) == Some(&b'.') {
        let frac_end = digits(end + 1);
        mantissa_digits += frac_end - (end + 1);
        end = frac_end;
    }
    if mantissa_digits == 0 {
        return 0.0;
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let mut j = end + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp_end = digits(j);
        // An exponent needs digits; otherwise the number ends before the `e`.
        if exp_end > j {
            end = exp_end;
        }
    }
    t[..end].parse::<f64>().unwrap_or(0.0)
}

// Exact float comparisons in these tests: strtod(3) of these literals gives exactly the nearest double, which is
// what the expected literal denotes, so equality is the precise check.
#[cfg(test)]
#[allow(clippy::float_cmp)]
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
        assert_eq!(parse_size("1Q"), 0, "unknown suffix");
        assert_eq!(
            parse_size("4kib"),
            4096,
            "only the first suffix letter counts"
        );
        assert_eq!(parse_size("-1"), 0, "no leading digit");
    }

    #[test]
    fn sizes_beyond_64_bits_are_not_sizes() {
        // sysbench wraps these modulo 2^64 (2^64 reads as 0, 2^64 + 4096 as 4096).
        assert_eq!(size_value("18446744073709551615"), Some(u64::MAX));
        assert_eq!(size_value("18446744073709551616"), None);
        assert_eq!(size_value("18446744073709555712"), None);
        assert_eq!(size_value("99999999999999999999999"), None);
        assert_eq!(size_value("16777215T"), Some(16777215 << 40));
        assert_eq!(size_value("16777216T"), None, "2^64 through the suffix");
        assert_eq!(size_value("17179869184G"), None);
        // An unknown suffix reads as 0 however long the number is, as in sysbench.
        assert_eq!(size_value("99999999999999999999999X"), Some(0));
        assert_eq!(parse_size("18446744073709551616"), 0);
    }

    #[test]
    fn size_options_name_the_option_and_the_limit() {
        let p = ParsedArgs::parse([
            "--file-total-size=18446744073709551616",
            "--thread-stack-size=2G",
            "--file-block-size=1Q",
        ]);
        let e = p.size("file-total-size", i64::MAX as u64).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid value for file-total-size: 18446744073709551616 (too large; accepted: 1 to 9223372036854775807 bytes, digits with an optional K, M, G or T suffix)"
        );
        assert!(p.size("thread-stack-size", i32::MAX as u64).is_err());
        assert_eq!(p.size("thread-stack-size", u64::MAX), Ok(2 << 30));
        assert_eq!(p.size("file-block-size", i32::MAX as u64), Ok(0));
        assert_eq!(p.size("file-num", u64::MAX), Ok(128), "the default");
    }

    #[test]
    fn ints_follow_strtol() {
        assert_eq!(parse_c_int("42"), Some(42));
        assert_eq!(parse_c_int(" \t42"), Some(42), "leading white space");
        assert_eq!(parse_c_int("+42"), Some(42));
        assert_eq!(parse_c_int("-42"), Some(-42));
        assert_eq!(parse_c_int("42 "), None, "trailing white space");
        assert_eq!(parse_c_int("2147483647"), Some(i32::MAX));
        assert_eq!(parse_c_int("2147483648"), None);
        assert_eq!(parse_c_int("-2147483649"), None);
        assert_eq!(parse_c_int("99999999999999999999999"), None);
        assert_eq!(parse_c_int("0x10"), None);
        assert_eq!(parse_c_int(" "), None);
        assert_eq!(parse_c_int("-"), None);
    }

    #[test]
    fn control_characters_are_escaped_in_messages() {
        assert_eq!(printable("rndrd"), "rndrd");
        assert_eq!(printable("a\nb\u{1b}[2J"), "a\\nb\\u{1b}[2J");
        let p = ParsedArgs::parse(["--file-num=1\n2"]);
        let msg = p.int("file-num").unwrap_err().to_string();
        assert_eq!(msg, "Invalid value for the 'file_num' option: '1\\n2'");
        assert_eq!(msg.lines().count(), 1);
    }

    #[test]
    fn strtod_takes_the_longest_prefix() {
        assert_eq!(parse_strtod("1.5"), 1.5);
        assert_eq!(parse_strtod("2abc"), 2.0);
        assert_eq!(parse_strtod("abc"), 0.0);
        assert_eq!(parse_strtod("1e"), 1.0);
        assert_eq!(parse_strtod("-1"), -1.0);
        assert_eq!(parse_strtod(" .5x"), 0.5);
        assert_eq!(parse_strtod("1.e2"), 100.0);
        assert_eq!(parse_strtod("2e+"), 2.0);
        assert_eq!(parse_strtod("-"), 0.0);
        assert_eq!(parse_strtod("."), 0.0);
        assert_eq!(parse_strtod("INFINITY"), f64::INFINITY);
        assert_eq!(parse_strtod("-infx"), f64::NEG_INFINITY);
        assert!(parse_strtod("nan(1)").is_nan());
        // One pass: a value as long as an argument can be is read at once.
        assert_eq!(parse_strtod(&"7".repeat(131_072)), f64::INFINITY);
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
        assert_eq!(p.unknown, vec!["--file-fsync-end=ON"]);
        assert!(
            p.bool("file-fsync-end").unwrap(),
            "the bad value is not stored"
        );
        assert_eq!(p.list("file-extra-flags"), vec!["direct", "sync"]);
        assert_eq!(p.int("events").unwrap(), 0);
        assert_eq!(p.int("time").unwrap(), 10, "default");
        assert!(!p.bool("validate").unwrap());
    }

    #[test]
    fn invalid_options_keep_command_line_order() {
        // sysbench reports the first bad word, unknown or bad boolean, and a bad
        // boolean even when a later word sets the option again.
        let p = ParsedArgs::parse(["--debug=x", "--foo=1", "--validate=y", "--debug=on"]);
        assert_eq!(p.unknown, vec!["--debug=x", "--foo=1", "--validate=y"]);
        assert!(p.bool("debug").unwrap());
        let p = ParsedArgs::parse(["--foo=1", "--debug=x"]);
        assert_eq!(p.unknown.first().map(String::as_str), Some("--foo=1"));
        assert_eq!(
            ParsedArgs::parse(["--debug="]).unknown,
            vec!["--debug="],
            "an empty value is not a boolean"
        );
    }

    #[test]
    fn database_options_are_accepted_and_their_booleans_checked() {
        // What sysbench 1.0.20 accepts with fileio (observed): every option of
        // its database sections; INT values are never read, booleans are checked.
        let p = ParsedArgs::parse([
            "--db-driver=pgsql",
            "--db-ps-mode=disable",
            "--db-debug",
            "--mysql-host=a,b",
            "--mysql-port=1",
            "--mysql-socket=/s",
            "--mysql-user=u",
            "--mysql-password=p",
            "--mysql-db=d",
            "--mysql-ssl=on",
            "--mysql-ssl-cipher=c",
            "--mysql-compression",
            "--mysql-debug=off",
            "--mysql-ignore-errors=all",
            "--mysql-dry-run",
            "--pgsql-host=h",
            "--pgsql-port=abc",
            "--pgsql-user=u",
            "--pgsql-password=p",
            "--pgsql-db=d",
        ]);
        assert!(p.unknown.is_empty(), "{:?}", p.unknown);
        let p = ParsedArgs::parse(["--mysql-ssl=ON", "--cpu-max-prime=5"]);
        assert_eq!(p.unknown, vec!["--mysql-ssl=ON", "--cpu-max-prime=5"]);
    }
}
