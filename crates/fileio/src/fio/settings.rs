//! The supported subset of fio's options: one row per option
//! ([`OPTIONS`]) that the parser, `tankbench fio --help` and docs/fio.md all
//! read (the house pattern of `sysbench::args::OPTIONS`), and the typed
//! settings of one job ([`JobSettings`]) that the rows fill in, starting
//! from fio 3.33's defaults. Every option without a row is refused by name;
//! [`REFUSED`] gives some of them a reason.

use super::value::{
    parse_bool, parse_count, parse_percentage, parse_size, parse_time_us, ValueError,
};

/// fio's `rw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// `rw` / `readwrite`: sequential, mixed.
    ReadWrite,
    RandRw,
}

impl Rw {
    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::ReadWrite => "rw",
            Rw::RandRw => "randrw",
        }
    }
    pub fn reads(self) -> bool {
        !matches!(self, Rw::Write | Rw::RandWrite)
    }
    pub fn writes(self) -> bool {
        !matches!(self, Rw::Read | Rw::RandRead)
    }
    pub fn mixed(self) -> bool {
        matches!(self, Rw::ReadWrite | Rw::RandRw)
    }
}

/// fio's `ioengine`, the ones tankbench has an engine for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoEngine {
    /// read(2)/write(2) after lseek; run as pread/pwrite (the same I/O).
    Sync,
    Psync,
    IoUring,
    Mmap,
}

impl IoEngine {
    pub fn name(self) -> &'static str {
        match self {
            IoEngine::Sync => "sync",
            IoEngine::Psync => "psync",
            IoEngine::IoUring => "io_uring",
            IoEngine::Mmap => "mmap",
        }
    }
    /// Whether `iodepth` means anything: only a queueing engine keeps more
    /// than one I/O in flight (fio's synchronous engines complete each one
    /// before the next).
    pub fn queues(self) -> bool {
        self == IoEngine::IoUring
    }
}

/// fio's `sync` (open flags for writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenSync {
    None,
    /// O_SYNC
    Sync,
    /// O_DSYNC
    Dsync,
}

/// One job's settings, from fio 3.33's defaults (`fio --cmdhelp=NAME`).
#[derive(Debug, Clone, PartialEq)]
pub struct JobSettings {
    pub description: Option<String>,
    pub rw: Rw,
    pub rwmixread: u32,
    pub bs: u64,
    pub size: Option<u64>,
    pub filesize: Option<u64>,
    pub nrfiles: u64,
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub numjobs: u32,
    pub iodepth: u32,
    pub ioengine: IoEngine,
    pub direct: bool,
    pub sync: OpenSync,
    pub fsync: u64,
    pub fdatasync: u64,
    pub end_fsync: bool,
    pub runtime_us: u64,
    pub time_based: bool,
    pub ramp_time_us: u64,
    pub startdelay_us: u64,
    pub loops: u64,
    pub rate_iops: u64,
    pub group_reporting: bool,
    pub stonewall: bool,
    pub thread: bool,
    pub randrepeat: bool,
    pub buffer_compress_percentage: u32,
    pub refill_buffers: bool,
    pub zero_buffers: bool,
}

impl Default for JobSettings {
    fn default() -> JobSettings {
        JobSettings {
            description: None,
            rw: Rw::Read,
            rwmixread: 50,
            bs: 4096,
            size: None,
            filesize: None,
            nrfiles: 1,
            filename: None,
            directory: None,
            numjobs: 1,
            iodepth: 1,
            ioengine: IoEngine::Psync,
            direct: false,
            sync: OpenSync::None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            runtime_us: 0,
            time_based: false,
            ramp_time_us: 0,
            startdelay_us: 0,
            loops: 1,
            rate_iops: 0,
            group_reporting: false,
            stonewall: false,
            thread: false,
            randrepeat: true,
            buffer_compress_percentage: 0,
            refill_buffers: false,
            zero_buffers: false,
        }
    }
}

/// The kind of value an option takes (how it is read, and what `--help`
/// shows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A size: 4k, 64m.
    Size,
    /// A time, seconds without a unit.
    Time,
    /// A whole number in a range.
    Count { min: u64, max: u64 },
    /// 0 or 1; fio wants the value.
    Bool,
    /// 0 or 1, or the option alone for 1.
    Flag,
    /// 0 to 100.
    Percentage,
    /// One of a list of words.
    Choice(&'static [&'static str]),
    /// Any text.
    Text,
}

impl Kind {
    /// The value's name in a usage line (a man page, completions).
    pub fn value_name(self) -> &'static str {
        match self {
            Kind::Size => "SIZE",
            Kind::Time => "TIME",
            Kind::Count { .. } => "INT",
            Kind::Bool | Kind::Flag => "0|1",
            Kind::Percentage => "PERCENT",
            Kind::Choice(_) => "WORD",
            Kind::Text => "STR",
        }
    }

    /// The value's form in `--help` and the docs.
    pub fn form(self) -> String {
        match self {
            Kind::Size => "=SIZE".into(),
            Kind::Time => "=TIME".into(),
            Kind::Count { .. } => "=INT".into(),
            Kind::Bool => "=0|1".into(),
            Kind::Flag => "[=0|1]".into(),
            Kind::Percentage => "=PERCENT".into(),
            Kind::Choice(words) => format!("={}", words.join("|")),
            Kind::Text => "=STR".into(),
        }
    }
}

/// A value read by its option's [`Kind`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Number(u64),
    Bool(bool),
    Word(String),
}

impl Value {
    fn number(&self) -> u64 {
        match self {
            Value::Number(n) => *n,
            Value::Bool(b) => u64::from(*b),
            Value::Word(_) => 0,
        }
    }
    fn flag(&self) -> bool {
        matches!(self, Value::Bool(true))
    }
    fn word(&self) -> &str {
        match self {
            Value::Word(w) => w,
            _ => "",
        }
    }
}

/// A value the option takes in fio but tankbench does not: the problem and
/// what is accepted instead.
pub type Refusal = ValueError;

/// One supported option.
pub struct FioOption {
    pub name: &'static str,
    pub alias: Option<&'static str>,
    pub kind: Kind,
    /// fio's default, as `--help` shows it.
    pub default: &'static str,
    /// What the option does in tankbench.
    pub help: &'static str,
    pub apply: fn(&mut JobSettings, &Value) -> Result<(), Refusal>,
}

impl FioOption {
    /// Read `text` (`None` for a bare option) as this option's kind.
    pub fn read(&self, text: Option<&str>) -> Result<Value, ValueError> {
        fn need(t: Option<&str>, kind: Kind) -> Result<&str, ValueError> {
            t.ok_or_else(|| ValueError {
                problem: "a value is needed".into(),
                accepted: kind.form().trim_start_matches('=').to_string(),
            })
        }
        let need = |t| need(t, self.kind);
        let numeric = matches!(
            self.kind,
            Kind::Size | Kind::Time | Kind::Count { .. } | Kind::Percentage
        );
        if let Some(t) = text.filter(|_| numeric) {
            let t = t.trim();
            if t.contains(',') {
                return Err(ValueError {
                    problem: "separate values for reads, writes and trims are not supported".into(),
                    accepted: "one value for every direction".into(),
                });
            }
            // A leading '-' is a (refused) negative number, not a range.
            if t.contains(':') || t[1.min(t.len())..].contains('-') {
                return Err(ValueError {
                    problem: "a range is not supported".into(),
                    accepted: "one value".into(),
                });
            }
        }
        Ok(match self.kind {
            Kind::Size => Value::Number(parse_size(need(text)?)?),
            Kind::Time => Value::Number(parse_time_us(need(text)?, 1_000_000)?),
            Kind::Count { min, max } => Value::Number(parse_count(need(text)?, min, max)?),
            Kind::Bool => Value::Bool(parse_bool(text, None)?),
            Kind::Flag => Value::Bool(parse_bool(text, Some(true))?),
            Kind::Percentage => Value::Number(u64::from(parse_percentage(need(text)?)?)),
            Kind::Choice(words) => {
                let t = need(text)?;
                if !words.contains(&t) {
                    return Err(ValueError {
                        problem: "not one of the values".into(),
                        accepted: words.join(", "),
                    });
                }
                Value::Word(t.to_string())
            }
            Kind::Text => {
                let t = need(text)?;
                if t.is_empty() {
                    return Err(ValueError {
                        problem: "empty".into(),
                        accepted: "a non-empty text".into(),
                    });
                }
                Value::Word(t.to_string())
            }
        })
    }
}

/// `u32` of a count whose row bounds it to `u32`.
fn small(v: &Value) -> u32 {
    u32::try_from(v.number()).unwrap_or(u32::MAX)
}

fn refuse(problem: impl Into<String>, accepted: impl Into<String>) -> Refusal {
    ValueError {
        problem: problem.into(),
        accepted: accepted.into(),
    }
}

const RW_WORDS: &[&str] = &[
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
    "trim",
    "randtrim",
    "trimwrite",
    "randtrimwrite",
];
const RW_ACCEPTED: &str = "read, write, randread, randwrite, rw, readwrite, randrw";
const ENGINES_ACCEPTED: &str = "sync, psync, io_uring, mmap";
const UINT_MAX: u64 = u32::MAX as u64;

fn set_rw(s: &mut JobSettings, v: &Value) -> Result<(), Refusal> {
    s.rw = match v.word() {
        "read" => Rw::Read,
        "write" => Rw::Write,
        "randread" => Rw::RandRead,
        "randwrite" => Rw::RandWrite,
        "rw" | "readwrite" => Rw::ReadWrite,
        "randrw" => Rw::RandRw,
        other => {
            return Err(refuse(
                format!("{other} is not supported (tankbench has no trim)"),
                RW_ACCEPTED,
            ))
        }
    };
    Ok(())
}

fn set_ioengine(s: &mut JobSettings, v: &Value) -> Result<(), Refusal> {
    s.ioengine = match v.word() {
        "sync" => IoEngine::Sync,
        "psync" => IoEngine::Psync,
        "io_uring" => IoEngine::IoUring,
        "mmap" => IoEngine::Mmap,
        "libaio" => {
            return Err(refuse(
                "libaio is not supported: tankbench's asynchronous engine is io_uring; write ioengine=io_uring (with the same iodepth)",
                ENGINES_ACCEPTED,
            ))
        }
        other => {
            return Err(refuse(
                format!("engine {other} is not supported"),
                ENGINES_ACCEPTED,
            ))
        }
    };
    Ok(())
}

fn set_sync(s: &mut JobSettings, v: &Value) -> Result<(), Refusal> {
    s.sync = match v.word() {
        "0" | "none" => OpenSync::None,
        "1" | "sync" => OpenSync::Sync,
        _ => OpenSync::Dsync,
    };
    Ok(())
}

fn set_random_distribution(_: &mut JobSettings, v: &Value) -> Result<(), Refusal> {
    match v.word() {
        "random" => Ok(()),
        other => Err(refuse(
            format!("{other} is not supported (fileio draws offsets uniformly)"),
            "random",
        )),
    }
}

fn set_compress(s: &mut JobSettings, v: &Value) -> Result<(), Refusal> {
    match v.number() {
        n @ (0 | 100) => {
            s.buffer_compress_percentage = small(&Value::Number(n));
            Ok(())
        }
        _ => Err(refuse(
            "fileio's data patterns are incompressible random bytes or zeros",
            "0 (random bytes) or 100 (zeros)",
        )),
    }
}

fn set_bs(s: &mut JobSettings, v: &Value) -> Result<(), Refusal> {
    match v.number() {
        0 => Err(refuse("no I/O has 0 bytes", "a size of 1 byte or more")),
        bs => {
            s.bs = bs;
            Ok(())
        }
    }
}

fn set_filename(s: &mut JobSettings, v: &Value) -> Result<(), Refusal> {
    s.filename = Some(v.word().to_string());
    Ok(())
}

fn set_directory(s: &mut JobSettings, v: &Value) -> Result<(), Refusal> {
    let d = v.word();
    if d.contains(':') {
        return Err(refuse(
            "several directories (or an nfs:// address) are not supported",
            "one local directory",
        ));
    }
    s.directory = Some(d.to_string());
    Ok(())
}

macro_rules! row {
    ($name:expr, $alias:expr, $kind:expr, $default:expr, $help:expr, |$s:ident, $v:ident| $body:expr) => {
        FioOption {
            name: $name,
            alias: $alias,
            kind: $kind,
            default: $default,
            help: $help,
            apply: {
                #[allow(unused_variables)]
                fn apply($s: &mut JobSettings, $v: &Value) -> Result<(), Refusal> {
                    $body;
                    Ok(())
                }
                apply
            },
        }
    };
    ($name:expr, $alias:expr, $kind:expr, $default:expr, $help:expr, $f:expr) => {
        FioOption {
            name: $name,
            alias: $alias,
            kind: $kind,
            default: $default,
            help: $help,
            apply: $f,
        }
    };
}

/// Every supported option, in the order `--help` and docs/fio.md list them.
pub const OPTIONS: &[FioOption] = &[
    row!("description", None, Kind::Text, "", "text describing the job (shown in the JSON report)", |s, v| s.description = Some(v.word().to_string())),
    row!("rw", Some("readwrite"), Kind::Choice(RW_WORDS), "read", "read, write, randread, randwrite, rw (sequential mix), randrw (random mix)", set_rw),
    row!("rwmixread", None, Kind::Percentage, "50", "share of reads in a mix, percent", |s, v| s.rwmixread = small(v)),
    row!("rwmixwrite", None, Kind::Percentage, "50", "share of writes in a mix, percent (rwmixread = 100 - this)", |s, v| s.rwmixread = 100 - small(v)),
    row!("bs", Some("blocksize"), Kind::Size, "4096", "bytes per I/O, reads and writes alike", set_bs),
    row!("size", None, Kind::Size, "", "bytes of the job's files together, and of I/O without time_based", |s, v| s.size = Some(v.number())),
    row!("filesize", None, Kind::Size, "", "bytes of each file (size then bounds the I/O)", |s, v| s.filesize = Some(v.number())),
    row!("nrfiles", Some("nr_files"), Kind::Count { min: 1, max: UINT_MAX }, "1", "files per job", |s, v| s.nrfiles = v.number()),
    row!("filename", None, Kind::Text, "", "file name(s), ':'-separated, shared by every clone; tankbench creates them and removes them at the end", set_filename),
    row!("directory", None, Kind::Text, "", "directory of the files (default: the current one)", set_directory),
    row!("numjobs", None, Kind::Count { min: 1, max: 4096 }, "1", "clones of the job, each a thread with its own files (unless filename is given)", |s, v| s.numjobs = small(v)),
    row!("iodepth", None, Kind::Count { min: 1, max: 32768 }, "1", "I/Os in flight per job (io_uring; fio's synchronous engines ignore it)", |s, v| s.iodepth = small(v)),
    row!("ioengine", None, Kind::Text, "psync", "sync, psync (pread/pwrite), io_uring, mmap; libaio is refused (use io_uring)", set_ioengine),
    row!("direct", None, Kind::Bool, "0", "O_DIRECT", |s, v| s.direct = v.flag()),
    row!("buffered", None, Kind::Bool, "1", "0 for O_DIRECT (the opposite of direct)", |s, v| s.direct = !v.flag()),
    row!("sync", None, Kind::Choice(&["none", "0", "sync", "1", "dsync"]), "none", "open flags for writes: O_SYNC (sync, 1) or O_DSYNC (dsync)", set_sync),
    row!("fsync", None, Kind::Count { min: 0, max: UINT_MAX }, "0", "fsync before the next I/O once the writes reach a multiple of this (fio's rule: a read after the Nth write is synced before too)", |s, v| s.fsync = v.number()),
    row!("fdatasync", None, Kind::Count { min: 0, max: UINT_MAX }, "0", "as fsync, with fdatasync(2)", |s, v| s.fdatasync = v.number()),
    row!("end_fsync", None, Kind::Bool, "0", "fsync every file of the job when it ends (inside its runtime, not in the sync figures)", |s, v| s.end_fsync = v.flag()),
    row!("runtime", Some("timeout"), Kind::Time, "0", "stop after this long (whole seconds); 0: no limit", |s, v| s.runtime_us = v.number()),
    row!("time_based", None, Kind::Flag, "0", "run for runtime, going over the files again", |s, v| s.time_based = v.flag()),
    row!("ramp_time", None, Kind::Time, "0", "run this long first, left out of the figures (whole seconds; with time_based)", |s, v| s.ramp_time_us = v.number()),
    row!("startdelay", None, Kind::Time, "0", "wait this long before starting the job", |s, v| s.startdelay_us = v.number()),
    row!("loops", None, Kind::Count { min: 1, max: UINT_MAX }, "1", "go over the I/O this many times (without time_based)", |s, v| s.loops = v.number()),
    row!("rate_iops", None, Kind::Count { min: 0, max: UINT_MAX }, "0", "I/Os per second per job, evenly spaced (fio's rate_process=linear); reads-only or writes-only jobs", |s, v| s.rate_iops = v.number()),
    row!("group_reporting", None, Kind::Flag, "0", "report the jobs of a group together", |s, v| s.group_reporting = v.flag()),
    row!("stonewall", Some("wait_for_previous"), Kind::Flag, "0", "wait for the jobs before to end; starts a new group", |s, v| s.stonewall = v.flag()),
    row!("thread", None, Kind::Flag, "0", "jobs as threads (tankbench always runs threads)", |s, v| s.thread = v.flag()),
    row!("randrepeat", None, Kind::Bool, "1", "the same random offsets on every run", |s, v| s.randrepeat = v.flag()),
    row!("random_distribution", None, Kind::Text, "random", "random (uniform) only", set_random_distribution),
    row!("buffer_compress_percentage", None, Kind::Percentage, "0", "0: random bytes; 100: zeros (fileio has no partly compressible data)", set_compress),
    row!("refill_buffers", None, Kind::Flag, "0", "fresh random bytes before every write", |s, v| s.refill_buffers = v.flag()),
    row!("zero_buffers", None, Kind::Flag, "0", "write zeros", |s, v| s.zero_buffers = v.flag()),
];

/// Options fio has that tankbench refuses, with the reason (every other
/// option without a row is refused too, without one).
pub const REFUSED: &[(&str, &str)] = &[
    ("bssplit", "one block size per job"),
    ("bsrange", "one block size per job"),
    (
        "io_size",
        "the I/O is size bytes (or runtime with time_based)",
    ),
    (
        "number_ios",
        "the I/O is size bytes (or runtime with time_based)",
    ),
    ("offset", "jobs start at the beginning of their files"),
    ("verify", "tankbench fio does not verify data"),
    ("rate", "use rate_iops"),
    (
        "rate_process",
        "tankbench spaces rate_iops evenly (fio's linear)",
    ),
    ("thinktime", "jobs do not pause between I/Os"),
    (
        "norandommap",
        "counts are the same with or without fio's random map; tankbench has none",
    ),
    ("percentage_random", "a job is all random or all sequential"),
    (
        "file_service_type",
        "tankbench's jobs go through their files in order",
    ),
    ("kb_base", "sizes are read with fio's default, kb_base=1024"),
    ("unlink", "tankbench always removes the files it created"),
    (
        "overwrite",
        "tankbench lays files out as fio does without it",
    ),
    (
        "fallocate",
        "files are laid out with fallocate(2) as fio's default, native",
    ),
    ("invalidate", "the page cache is left as it is"),
    ("new_group", "use stonewall"),
    ("name", "a job file names a job with its [section]"),
    (
        "lat_percentiles",
        "the report's percentiles are of each I/O's whole latency",
    ),
    (
        "percentile_list",
        "the report gives fio's default percentiles",
    ),
    ("create_on_open", "files are laid out before the jobs start"),
    ("exitall", "every job of a group runs to its own end"),
];

/// The row of `name` (its name or alias; fio's names are case-sensitive).
pub fn find(name: &str) -> Option<&'static FioOption> {
    OPTIONS
        .iter()
        .find(|o| o.name == name || o.alias == Some(name))
}

/// Why `name` is refused, when [`REFUSED`] says.
pub fn refusal_reason(name: &str) -> Option<&'static str> {
    REFUSED.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

/// The option list of `tankbench fio --help`.
pub fn help_text() -> String {
    let mut out = String::from("Supported fio options (every other option is refused):\n");
    for o in OPTIONS {
        let name = match o.alias {
            Some(a) => format!("{}{} ({a})", o.name, o.kind.form()),
            None => format!("{}{}", o.name, o.kind.form()),
        };
        let default = if o.default.is_empty() {
            String::new()
        } else {
            format!(" [{}]", o.default)
        };
        out.push_str(&format!("  {name}\n      {}{default}\n", o.help));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(name: &str, text: Option<&str>) -> Result<JobSettings, ValueError> {
        let mut s = JobSettings::default();
        let o = find(name).unwrap();
        let v = o.read(text)?;
        (o.apply)(&mut s, &v)?;
        Ok(s)
    }

    #[test]
    fn every_row_has_a_unique_name_and_help() {
        let mut names: Vec<&str> = OPTIONS
            .iter()
            .flat_map(|o| std::iter::once(o.name).chain(o.alias))
            .collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a name or alias twice");
        assert!(OPTIONS.iter().all(|o| !o.help.is_empty()));
        for (name, _) in REFUSED {
            assert!(find(name).is_none(), "{name} is both supported and refused");
        }
    }

    #[test]
    fn rows_fill_the_settings() {
        assert_eq!(apply("bs", Some("8k")).unwrap().bs, 8192);
        assert_eq!(apply("blocksize", Some("1m")).unwrap().bs, 1 << 20);
        assert_eq!(apply("rw", Some("randrw")).unwrap().rw, Rw::RandRw);
        assert_eq!(
            apply("readwrite", Some("readwrite")).unwrap().rw,
            Rw::ReadWrite
        );
        assert_eq!(apply("rwmixwrite", Some("30")).unwrap().rwmixread, 70);
        assert!(apply("time_based", None).unwrap().time_based);
        assert!(apply("direct", None).is_err(), "fio: requires an argument");
        assert!(!apply("buffered", Some("1")).unwrap().direct);
        assert_eq!(
            apply("runtime", Some("2m")).unwrap().runtime_us,
            120_000_000
        );
        assert_eq!(apply("sync", Some("dsync")).unwrap().sync, OpenSync::Dsync);
        assert_eq!(apply("sync", Some("1")).unwrap().sync, OpenSync::Sync);
    }

    #[test]
    fn refused_values_say_why_and_what_instead() {
        let e = apply("ioengine", Some("libaio")).unwrap_err();
        assert!(e.problem.contains("io_uring"), "{e:?}");
        assert!(apply("rw", Some("trim")).is_err());
        assert!(
            apply("rw", Some("READ")).is_err(),
            "fio's words are lower case"
        );
        assert!(apply("random_distribution", Some("zipf:1.2")).is_err());
        assert!(apply("buffer_compress_percentage", Some("50")).is_err());
        assert!(apply("directory", Some("/a:/b")).is_err());
    }

    /// docs/fio.md lists every supported option and every refusal with a
    /// reason, so the table, the help and the docs cannot drift apart.
    #[test]
    fn the_docs_list_every_row() {
        let docs = include_str!("../../../../docs/fio.md");
        for o in OPTIONS {
            assert!(
                docs.contains(&format!("`{}`", o.name)),
                "docs/fio.md lacks `{}`",
                o.name
            );
            if let Some(a) = o.alias {
                assert!(docs.contains(&format!("`{a}`")), "docs/fio.md lacks `{a}`");
            }
        }
        for (name, _) in REFUSED {
            assert!(
                docs.contains(&format!("`{name}`")),
                "docs/fio.md lacks `{name}`"
            );
        }
    }

    #[test]
    fn help_lists_every_row() {
        let h = help_text();
        for o in OPTIONS {
            assert!(h.contains(&format!("  {}", o.name)), "{}", o.name);
        }
    }
}
