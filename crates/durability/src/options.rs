//! The command lines of `durability write`, `record` and `verify`. Every
//! refusal is one line naming the option and what it accepts; nothing is
//! touched before all options are checked.
//!
//! The fileio options (`--file-num`, `--file-total-size`, `--file-block-size`,
//! `--threads`) are read by fileio's own option reader
//! ([`RunSpec::from_words`]), so they accept and refuse exactly what
//! `tankbench fileio` does.

use crate::error::{Command, DurabilityError};
use crate::journal::Commit;
use crate::record::SECTOR;
use crate::wire::Limits;

use fileio::spec::{Mode, RunSpec};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Where acknowledged writes are reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sink {
    /// A `durability record` listening at `addr`, reached with the key in
    /// the file `key` (read when the command starts, before anything else).
    Recorder { addr: String, key: PathBuf },
    /// A journal file (on other storage than the one under test).
    Journal(PathBuf),
}

#[derive(Debug, Clone)]
pub struct WriteOptions {
    pub dir: PathBuf,
    /// The validated fileio workload: the generator's input.
    pub spec: RunSpec,
    pub commit: Commit,
    pub direct: bool,
    pub sink: Sink,
    /// 0: until stopped or until the storage goes away.
    pub time_s: u64,
}

#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub listen: String,
    pub journal: PathBuf,
    /// The key file: created (mode 0600) when there is none.
    pub key: PathBuf,
    pub limits: Limits,
}

#[derive(Debug, Clone)]
pub struct VerifyOptions {
    pub dir: PathBuf,
    pub from: Sink,
    /// Examples kept per outcome.
    pub examples: usize,
    /// Read with O_DIRECT (past the page cache of this machine).
    pub direct: bool,
    /// `--save[=DIR]`.
    pub save: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub labels: Vec<String>,
    /// The largest journal a recorder's answer may be.
    pub max_journal_bytes: u64,
}

/// `--file-block-size` when none is given.
pub const DEFAULT_BLOCK_SIZE: u64 = 4096;

/// The largest block: a record numbers its sectors in 16 bits.
pub(crate) const MAX_BLOCK_SIZE: u64 = 65535 * SECTOR as u64;

/// Positional words, and each option's values in order.
type Split = (Vec<OsString>, BTreeMap<&'static str, Vec<OsString>>);

/// Split words into positionals and `--name[=value]` options. `flags` take no
/// value; every other known option takes one, inline or as the next word.
fn split(
    command: Command,
    args: &[OsString],
    valued: &[&'static str],
    flags: &[&'static str],
) -> Result<Split, DurabilityError> {
    let mut positionals = Vec::new();
    let mut opts: BTreeMap<&'static str, Vec<OsString>> = BTreeMap::new();
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        let bytes = word.as_encoded_bytes();
        let Some(body) = bytes.strip_prefix(b"--") else {
            positionals.push(word.clone());
            i += 1;
            continue;
        };
        // The name is the bytes up to '=', the value the original bytes after it.
        let (name, inline) = match body.iter().position(|b| *b == b'=') {
            Some(eq) => (&body[..eq], Some(os_from_bytes(&body[eq + 1..]))),
            None => (body, None),
        };
        let known = |list: &[&'static str]| list.iter().copied().find(|o| o.as_bytes() == name);
        if let Some(option) = known(valued).filter(|o| *o == "save") {
            // `--save` alone: the default store; `--save=DIR`: that one
            // (as fileio's --save; a following word is never its value).
            opts.entry(option)
                .or_default()
                .push(inline.unwrap_or_default());
        } else if let Some(option) = known(flags) {
            if inline.is_some() {
                return Err(DurabilityError::UnexpectedValue { command, option });
            }
            opts.entry(option).or_default().push(OsString::new());
        } else if let Some(option) = known(valued) {
            let value = match inline {
                Some(v) => v,
                None => {
                    i += 1;
                    args.get(i)
                        .cloned()
                        .ok_or(DurabilityError::MissingValue { command, option })?
                }
            };
            if value.is_empty() {
                return Err(DurabilityError::MissingValue { command, option });
            }
            opts.entry(option).or_default().push(value);
        } else {
            let accepted = valued
                .iter()
                .chain(flags)
                .map(|o| format!("--{o}"))
                .collect();
            let option = match inline {
                Some(_) => String::from_utf8_lossy(&bytes[..2 + name.len()]).into_owned(),
                None => word.to_string_lossy().into_owned(),
            };
            return Err(DurabilityError::UnknownOption {
                command,
                option,
                accepted,
            });
        }
        i += 1;
    }
    Ok((positionals, opts))
}

fn os_from_bytes(b: &[u8]) -> OsString {
    use std::os::unix::ffi::OsStrExt as _;
    std::ffi::OsStr::from_bytes(b).to_owned()
}

/// The options of one command line, split.
struct Given {
    command: Command,
    opts: BTreeMap<&'static str, Vec<OsString>>,
}

impl Given {
    /// The one value of an option given at most once.
    fn single(&self, option: &'static str) -> Result<Option<&OsString>, DurabilityError> {
        match self.opts.get(option).map(Vec::as_slice) {
            None | Some([]) => Ok(None),
            Some([v]) => Ok(Some(v)),
            Some(_) => Err(DurabilityError::RepeatedOption {
                command: self.command,
                option,
            }),
        }
    }

    fn text(&self, option: &'static str) -> Result<Option<&str>, DurabilityError> {
        match self.single(option)? {
            None => Ok(None),
            Some(v) => v.to_str().map(Some).ok_or(DurabilityError::NotText {
                command: self.command,
                option,
            }),
        }
    }

    fn has(&self, option: &str) -> bool {
        self.opts.contains_key(option)
    }

    /// A refusal of `value` for `option`.
    fn refuse(&self, option: &'static str, value: &str, accepted: &'static str) -> DurabilityError {
        DurabilityError::Option {
            command: self.command,
            option,
            value: value.to_string(),
            accepted,
        }
    }

    /// A whole number within `range`, or `default` when not given.
    fn number<T: std::str::FromStr + PartialOrd>(
        &self,
        option: &'static str,
        range: std::ops::RangeInclusive<T>,
        default: T,
        accepted: &'static str,
    ) -> Result<T, DurabilityError> {
        match self.text(option)? {
            None => Ok(default),
            Some(t) => t
                .parse::<T>()
                .ok()
                .filter(|n| range.contains(n))
                .ok_or_else(|| self.refuse(option, t, accepted)),
        }
    }
}

fn one_dir(command: Command, positionals: Vec<OsString>) -> Result<PathBuf, DurabilityError> {
    let mut it = positionals.into_iter();
    let dir = it.next().ok_or(DurabilityError::Required {
        command,
        what: "DIR",
        why: "the directory under test; usage: tankbench durability write|verify DIR ...",
    })?;
    if let Some(extra) = it.next() {
        return Err(DurabilityError::UnexpectedArgument {
            command,
            word: extra.to_string_lossy().into_owned(),
            accepted: "one directory only",
        });
    }
    let dir = PathBuf::from(dir);
    if !dir.is_dir() {
        return Err(DurabilityError::NotADirectory { command, dir });
    }
    Ok(dir)
}

/// An ADDR:PORT the recorder listens on or is reached at.
fn check_addr(
    command: Command,
    option: &'static str,
    addr: &str,
) -> Result<String, DurabilityError> {
    use std::net::ToSocketAddrs as _;
    if addr.parse::<SocketAddr>().is_ok() {
        return Ok(addr.to_string());
    }
    // A host name: resolvable now, and with a port.
    match addr.to_socket_addrs().map(|mut a| a.next().is_some()) {
        Ok(true) => Ok(addr.to_string()),
        _ => Err(DurabilityError::Address {
            command,
            option,
            value: addr.to_string(),
        }),
    }
}

/// Where `write` reports acknowledged writes.
fn write_sink(g: &Given) -> Result<Sink, DurabilityError> {
    let command = g.command;
    let recorder = g.text("recorder")?;
    let journal = g.single("journal")?;
    let key = g.single("key")?;
    if journal.is_some() && key.is_some() {
        return Err(DurabilityError::Conflict {
            command,
            first: "--key",
            second: "--journal FILE",
            why: "--key is for a recorder, --recorder ADDR:PORT",
        });
    }
    match (recorder, journal) {
        (Some(_), Some(_)) => Err(DurabilityError::Conflict {
            command,
            first: "--recorder ADDR:PORT",
            second: "--journal FILE",
            why: "acknowledged writes are reported to one place",
        }),
        (Some(a), None) => Ok(Sink::Recorder {
            addr: check_addr(command, "recorder", a)?,
            key: key.map(PathBuf::from).ok_or(DurabilityError::Required {
                command,
                what: "--key FILE with --recorder",
                why: "the key file the recorder printed at its start",
            })?,
        }),
        (None, Some(j)) => Ok(Sink::Journal(PathBuf::from(j))),
        (None, None) => Err(DurabilityError::Required {
            command,
            what: "--recorder ADDR:PORT or --journal FILE",
            why: "where acknowledged writes are reported",
        }),
    }
}

const WRITE_VALUED: [&str; 10] = [
    "file-num",
    "file-total-size",
    "file-block-size",
    "threads",
    "file-test-mode",
    "commit",
    "recorder",
    "journal",
    "time",
    "key",
];

/// The fileio options of `write`, passed on to fileio as they were given.
const WRITE_FILEIO: [&str; 4] = ["file-num", "file-total-size", "file-block-size", "threads"];

/// `durability write DIR [options]`.
pub fn parse_write(args: &[OsString]) -> Result<WriteOptions, DurabilityError> {
    let command = Command::Write;
    let (positionals, opts) = split(command, args, &WRITE_VALUED, &["direct"])?;
    let g = Given { command, opts };
    let dir = one_dir(command, positionals)?;
    let commit = match g.text("commit")? {
        None => Commit::Fsync,
        Some(c) => Commit::parse(c).ok_or_else(|| g.refuse("commit", c, Commit::ACCEPTED))?,
    };
    let mode = match g.text("file-test-mode")? {
        None => Mode::RndWr,
        Some(m) => Mode::parse(m)
            .filter(|m| accepted_mode(*m))
            .ok_or_else(|| g.refuse("file-test-mode", m, "rndwr, seqwr"))?,
    };
    // The duration syntax every tankbench option shares (5, 5s, 2m, 1h).
    let time_s = match g.text("time")? {
        None => 0,
        Some(t) => fileio::duration::whole_seconds(t).ok_or_else(|| {
            g.refuse(
                "time",
                t,
                "whole seconds as 5, 5s, 2m or 1h (0: until stopped)",
            )
        })?,
    };
    let direct = g.has("direct");
    let spec = write_spec(&g, mode, direct, &dir)?;
    let sink = write_sink(&g)?;
    Ok(WriteOptions {
        dir,
        spec,
        commit,
        direct,
        sink,
        time_s,
    })
}

/// The writer's fileio workload. The fileio options go to fileio's own
/// option reader (`RunSpec::from_words`), so they take the same syntax and
/// get the same refusals as `tankbench fileio`; the rest is the writer's.
fn write_spec(g: &Given, mode: Mode, direct: bool, dir: &Path) -> Result<RunSpec, DurabilityError> {
    let mut words = vec![format!("--file-test-mode={}", mode.short_name())];
    for option in WRITE_FILEIO {
        if let Some(v) = g.text(option)? {
            words.push(format!("--{option}={v}"));
        }
    }
    // 4 KiB, not fileio's 16 KiB: the page size and the usual file system
    // block, so a torn page shows as a torn record.
    if !g.has("file-block-size") {
        words.push(format!("--file-block-size={DEFAULT_BLOCK_SIZE}"));
    }
    // Each write is committed by the writer itself (--commit), never by
    // fileio's periodic fsync requests.
    words.push("--file-fsync-freq=0".into());
    if direct {
        words.push("--file-extra-flags=direct".into());
    }
    let mut spec = RunSpec::from_words(&words)?;
    let bs = spec.files.block_size;
    if bs < SECTOR as u64 || !bs.is_multiple_of(SECTOR as u64) || bs > MAX_BLOCK_SIZE {
        return Err(DurabilityError::BlockSize {
            block_size: bs,
            sector: SECTOR,
            max: MAX_BLOCK_SIZE,
        });
    }
    let file_size = spec.files.file_size;
    if file_size < bs {
        return Err(DurabilityError::FileSmallerThanBlock {
            file_size,
            block_size: bs,
        });
    }
    if !file_size.is_multiple_of(bs) {
        return Err(DurabilityError::FilesNotWholeBlocks {
            file_size,
            block_size: bs,
        });
    }
    if u32::try_from(spec.files.file_num).is_err() {
        return Err(DurabilityError::TooManyFiles {
            file_num: spec.files.file_num,
        });
    }
    spec.files.dir = dir.to_path_buf();
    debug_assert!(accepted_mode(spec.mode));
    Ok(spec)
}

/// `--max-journal-size SIZE` of `record` and `verify`.
fn max_journal(g: &Given) -> Result<u64, DurabilityError> {
    match g.text("max-journal-size")? {
        None => Ok(crate::wire::DEFAULT_MAX_JOURNAL_BYTES),
        Some(t) => parse_size(t)
            .filter(|n| *n > 0)
            .ok_or_else(|| g.refuse("max-journal-size", t, "a size above 0 (e.g. 64M, 2G)")),
    }
}

/// A size as fileio's options write one: digits and an optional K, M, G or T
/// (any case, powers of 1024). Unlike sysbench's rule, anything else after
/// the digits is refused, not read as 0, and a size past 64 bits is refused.
fn parse_size(text: &str) -> Option<u64> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let shift = match &text[digits..] {
        "" => 0,
        "k" | "K" => 10,
        "m" | "M" => 20,
        "g" | "G" => 30,
        "t" | "T" => 40,
        _ => return None,
    };
    text[..digits].parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// `durability record --listen ADDR:PORT --journal FILE [--key FILE]
/// [--max-journal-size SIZE] [--max-sessions N]`.
pub fn parse_record(args: &[OsString]) -> Result<RecordOptions, DurabilityError> {
    let command = Command::Record;
    let (positionals, opts) = split(
        command,
        args,
        &[
            "listen",
            "journal",
            "key",
            "max-journal-size",
            "max-sessions",
        ],
        &[],
    )?;
    let g = Given { command, opts };
    if let Some(p) = positionals.first() {
        return Err(DurabilityError::UnexpectedArgument {
            command,
            word: p.to_string_lossy().into_owned(),
            accepted:
                "usage: tankbench durability record --listen ADDR:PORT --journal FILE [--key FILE]",
        });
    }
    let listen = g.text("listen")?.ok_or(DurabilityError::Required {
        command,
        what: "--listen ADDR:PORT",
        why: "e.g. 0.0.0.0:7878",
    })?;
    let listen = check_addr(command, "listen", listen)?;
    let journal = PathBuf::from(g.single("journal")?.ok_or(DurabilityError::Required {
        command,
        what: "--journal FILE",
        why: "on storage other than the one under test",
    })?);
    let key = match g.single("key")? {
        Some(k) => PathBuf::from(k),
        None => {
            let mut k = journal.clone().into_os_string();
            k.push(".key");
            PathBuf::from(k)
        }
    };
    let mut limits = Limits::from_env();
    limits.max_journal_bytes = max_journal(&g)?;
    limits.max_sessions = g.number("max-sessions", 1..=1024, limits.max_sessions, "1 to 1024")?;
    Ok(RecordOptions {
        listen,
        journal,
        key,
        limits,
    })
}

/// `durability verify DIR --from JOURNAL|ADDR:PORT`.
pub fn parse_verify(args: &[OsString]) -> Result<VerifyOptions, DurabilityError> {
    let command = Command::Verify;
    let (positionals, opts) = split(
        command,
        args,
        &[
            "from",
            "examples",
            "save",
            "json",
            "label",
            "key",
            "max-journal-size",
        ],
        &["direct"],
    )?;
    let g = Given { command, opts };
    let dir = one_dir(command, positionals)?;
    let key = g.single("key")?.map(PathBuf::from);
    let from = g.single("from")?.ok_or(DurabilityError::Required {
        command,
        what: "--from JOURNAL|ADDR:PORT",
        why: "the journal file or the recorder",
    })?;
    let from = {
        let p = PathBuf::from(from);
        let t = from.to_str().unwrap_or("");
        if p.exists() {
            Sink::Journal(p)
        } else if t.contains(':') && !t.contains('/') {
            Sink::Recorder {
                addr: check_addr(command, "from", t)?,
                key: key.clone().ok_or(DurabilityError::Required {
                    command,
                    what: "--key FILE with --from ADDR:PORT",
                    why: "the key file the recorder printed at its start",
                })?,
            }
        } else {
            return Err(DurabilityError::NoSuchJournal { path: p });
        }
    };
    if matches!(from, Sink::Journal(_)) && key.is_some() {
        return Err(DurabilityError::Conflict {
            command,
            first: "--key",
            second: "--from JOURNAL",
            why: "--key is for a recorder, --from ADDR:PORT",
        });
    }
    let max_journal_bytes = max_journal(&g)?;
    let examples = g.number("examples", 0..=10_000, 10, "0 to 10000")?;
    let labels = match g.opts.get("label") {
        None => Vec::new(),
        Some(v) => v
            .iter()
            .map(|l| {
                l.to_str()
                    .map(str::to_string)
                    .ok_or(DurabilityError::NotText {
                        command,
                        option: "label",
                    })
            })
            .collect::<Result<_, _>>()?,
    };
    Ok(VerifyOptions {
        dir,
        from,
        examples,
        direct: g.has("direct"),
        save: g.single("save")?.map(|d| {
            if d.is_empty() {
                PathBuf::from(report::store::DEFAULT_DIR)
            } else {
                PathBuf::from(d)
            }
        }),
        json: g.single("json")?.map(PathBuf::from),
        labels,
        max_journal_bytes,
    })
}

/// Whether `mode` is one the writer accepts.
pub(crate) fn accepted_mode(mode: Mode) -> bool {
    WRITE_MODES.contains(&mode)
}

/// The modes `durability write --file-test-mode` takes: the writing modes
/// whose blocks a verify can find again.
pub const WRITE_MODES: [Mode; 2] = [Mode::RndWr, Mode::SeqWr];

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<OsString> {
        w.iter().map(OsString::from).collect()
    }

    fn write_err(w: &[&str]) -> String {
        let d = tempfile::tempdir().unwrap();
        let mut all = vec![d.path().to_str().unwrap().to_string()];
        all.extend(w.iter().map(|s| s.to_string()));
        let args: Vec<OsString> = all.into_iter().map(OsString::from).collect();
        let e = parse_write(&args).unwrap_err();
        assert!(e.is_usage(), "{e:?}");
        let e = e.to_string();
        assert!(!e.contains('\n'), "{e}");
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "nothing written"
        );
        e
    }

    #[test]
    fn write_options_map_to_a_fileio_workload() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().to_str().unwrap();
        let o = parse_write(&words(&[
            dir,
            "--file-num=2",
            "--file-total-size",
            "1M",
            "--file-block-size=8K",
            "--threads=3",
            "--commit=odsync",
            "--journal=/tmp/j",
            "--time=5",
        ]))
        .unwrap();
        assert_eq!(o.spec.files.file_num, 2);
        assert_eq!(o.spec.files.file_size, 512 * 1024);
        assert_eq!(o.spec.files.block_size, 8192);
        assert_eq!(o.spec.threads, 3);
        assert_eq!(o.spec.mode, Mode::RndWr);
        assert_eq!(o.spec.fsync_freq, 0);
        assert_eq!(o.commit, Commit::ODsync);
        assert_eq!(o.sink, Sink::Journal("/tmp/j".into()));
        assert_eq!(o.time_s, 5);
        let o = parse_write(&words(&[dir, "--journal", "j", "--time=2m"])).unwrap();
        assert_eq!(o.time_s, 120, "the one duration syntax");
    }

    #[test]
    fn bad_write_options_name_the_option() {
        let j = "--journal=/tmp/x";
        assert!(write_err(&[j, "--commit=sometimes"]).contains("--commit"));
        assert!(write_err(&[j, "--file-test-mode=rndrd"]).contains("--file-test-mode"));
        assert!(write_err(&[j, "--file-block-size=1000"]).contains("--file-block-size"));
        assert!(write_err(&[j, "--file-num=0"]).contains("file-num"));
        assert!(write_err(&[j, "--file-num=3", "--file-total-size=1M"]).contains("whole number"));
        assert!(write_err(&[j, "--time=soon"]).contains("--time"));
        assert!(write_err(&[j, "--bogus=1"]).contains("'--bogus'"));
        assert!(write_err(&[]).contains("--recorder"));
        assert!(write_err(&[j, "--recorder=1.2.3.4:5"]).contains("not both"));
        assert!(write_err(&["--recorder=nowhere", "--key=k"]).contains("--recorder"));
        assert!(write_err(&["--recorder=127.0.0.1:9"]).contains("--key"));
        assert!(write_err(&[j, "--key=k"]).contains("--key"));
    }

    #[test]
    fn verify_needs_a_source_and_a_directory() {
        assert!(parse_verify(&words(&["/nonexistent-dir-h23"]))
            .unwrap_err()
            .to_string()
            .contains("not a directory"));
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().to_str().unwrap();
        assert!(parse_verify(&words(&[dir]))
            .unwrap_err()
            .to_string()
            .contains("--from"));
        assert!(parse_verify(&words(&[dir, "--from=/no/such/journal"]))
            .unwrap_err()
            .to_string()
            .contains("no such journal"));
        assert!(parse_verify(&words(&[dir, "--from", "127.0.0.1:9"]))
            .unwrap_err()
            .to_string()
            .contains("--key"));
        let o = parse_verify(&words(&[dir, "--from", "127.0.0.1:9", "--key=k"])).unwrap();
        assert_eq!(
            o.from,
            Sink::Recorder {
                addr: "127.0.0.1:9".into(),
                key: "k".into()
            }
        );
        assert_eq!(o.max_journal_bytes, crate::wire::DEFAULT_MAX_JOURNAL_BYTES);
        assert!(parse_verify(&words(&[
            dir,
            "--from=127.0.0.1:9",
            "--key=k",
            "--max-journal-size=x"
        ]))
        .unwrap_err()
        .to_string()
        .contains("--max-journal-size"));
    }

    /// Issue 20: refusals are typed; fileio's come as fileio's own error.
    #[test]
    fn refusals_are_typed_with_the_option_and_value() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().to_str().unwrap();
        let e = parse_write(&words(&[dir, "--journal=/tmp/j", "--threads=0"])).unwrap_err();
        assert!(
            matches!(
                e,
                DurabilityError::Workload(fileio::workload::WorkloadError::Threads { value: 0 })
            ),
            "{e:?}"
        );
        assert_eq!(e.option(), Some("threads"));
        assert_eq!(
            e.to_string(),
            "durability write: Invalid value for --threads: 0."
        );
        let e = parse_write(&words(&[dir, "--journal=/tmp/j", "--commit=never"])).unwrap_err();
        assert!(
            matches!(
                &e,
                DurabilityError::Option {
                    command: Command::Write,
                    option: "commit",
                    value,
                    ..
                } if value == "never"
            ),
            "{e:?}"
        );
        let e =
            parse_write(&words(&[dir, "--journal=/tmp/j", "--file-block-size=1000"])).unwrap_err();
        assert!(
            matches!(
                e,
                DurabilityError::BlockSize {
                    block_size: 1000,
                    ..
                }
            ),
            "{e:?}"
        );
        let e = parse_record(&words(&[
            "--listen=127.0.0.1:0",
            "--journal=j",
            "--max-sessions=0",
        ]))
        .unwrap_err();
        assert_eq!(e.option(), Some("max-sessions"));
    }

    #[test]
    fn sizes_take_a_suffix_and_nothing_else() {
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("4MB"), None);
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("99999999999T"), None);
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().to_str().unwrap();
        let o = parse_verify(&words(&[
            dir,
            "--from=127.0.0.1:9",
            "--key=k",
            "--max-journal-size=64M",
        ]))
        .unwrap();
        assert_eq!(o.max_journal_bytes, 64 << 20);
    }
}
