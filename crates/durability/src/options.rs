//! The command lines of `durability write`, `record` and `verify`. Every
//! refusal is one line naming the option and what it accepts; nothing is
//! touched before all options are checked.
//!
//! The fileio options (`--file-num`, `--file-total-size`, `--file-block-size`,
//! `--threads`, `--file-test-mode`) are checked by fileio's own
//! parser, so they accept and refuse exactly what `tankbench fileio` does.

use crate::journal::Commit;
use crate::record::SECTOR;
use crate::wire::Limits;
use fileio::options::{GeneralOptions, Mode, RunSpec};
use fileio::sysbench::args::ParsedArgs;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

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
pub const MAX_BLOCK_SIZE: u64 = 65535 * SECTOR as u64;

/// Positional words, and each option's values in order.
type Split = (Vec<OsString>, BTreeMap<String, Vec<OsString>>);

/// Split words into positionals and `--name[=value]` options. `flags` take no
/// value; every other known option takes one, inline or as the next word.
fn split(cmd: &str, args: &[OsString], valued: &[&str], flags: &[&str]) -> Result<Split, String> {
    let mut positionals = Vec::new();
    let mut opts: BTreeMap<String, Vec<OsString>> = BTreeMap::new();
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        let bytes = word.as_encoded_bytes();
        if !bytes.starts_with(b"--") {
            positionals.push(word.clone());
            i += 1;
            continue;
        }
        let text = word.to_string_lossy();
        let (name, inline) = match text.split_once('=') {
            Some((n, _)) => {
                let value = &bytes[n.len() + 1..];
                // SAFETY-free split: `value` is the original bytes after '='.
                (n.to_string(), Some(os_from_bytes(value)))
            }
            None => (text.to_string(), None),
        };
        let bare = name.trim_start_matches('-');
        if bare == "save" && valued.contains(&bare) {
            // `--save` alone: the default store; `--save=DIR`: that one
            // (as fileio's --save; a following word is never its value).
            opts.entry(bare.to_string())
                .or_default()
                .push(inline.unwrap_or_default());
        } else if flags.contains(&bare) {
            if inline.is_some() {
                return Err(format!("durability {cmd}: {name} takes no value"));
            }
            opts.entry(bare.to_string())
                .or_default()
                .push(OsString::new());
        } else if valued.contains(&bare) {
            let value = match inline {
                Some(v) => v,
                None => {
                    i += 1;
                    args.get(i)
                        .cloned()
                        .ok_or_else(|| format!("durability {cmd}: {name} needs a value"))?
                }
            };
            if value.is_empty() {
                return Err(format!("durability {cmd}: {name} needs a value"));
            }
            opts.entry(bare.to_string()).or_default().push(value);
        } else {
            let mut accepted: Vec<String> = valued.iter().map(|v| format!("--{v}")).collect();
            accepted.extend(flags.iter().map(|f| format!("--{f}")));
            return Err(format!(
                "durability {cmd}: unknown option '{name}'; accepted: {}",
                accepted.join(", ")
            ));
        }
        i += 1;
    }
    Ok((positionals, opts))
}

fn os_from_bytes(b: &[u8]) -> OsString {
    use std::os::unix::ffi::OsStrExt as _;
    std::ffi::OsStr::from_bytes(b).to_owned()
}

/// The one value of an option given at most once.
fn single<'a>(
    cmd: &str,
    opts: &'a BTreeMap<String, Vec<OsString>>,
    name: &str,
) -> Result<Option<&'a OsString>, String> {
    match opts.get(name).map(Vec::as_slice) {
        None | Some([]) => Ok(None),
        Some([v]) => Ok(Some(v)),
        Some(_) => Err(format!(
            "durability {cmd}: --{name} is given more than once"
        )),
    }
}

fn text<'a>(
    cmd: &str,
    opts: &'a BTreeMap<String, Vec<OsString>>,
    name: &str,
) -> Result<Option<&'a str>, String> {
    match single(cmd, opts, name)? {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(Some)
            .ok_or_else(|| format!("durability {cmd}: --{name}: the value is not UTF-8 text")),
    }
}

fn one_dir(cmd: &str, positionals: Vec<OsString>) -> Result<PathBuf, String> {
    let mut it = positionals.into_iter();
    let dir = it
        .next()
        .ok_or_else(|| format!("durability {cmd}: the directory under test is missing; usage: tankbench durability {cmd} DIR ..."))?;
    if let Some(extra) = it.next() {
        return Err(format!(
            "durability {cmd}: unexpected argument '{}'; one directory only",
            extra.to_string_lossy()
        ));
    }
    let dir = PathBuf::from(dir);
    if !dir.is_dir() {
        return Err(format!(
            "durability {cmd}: DIR {} is not a directory",
            dir.display()
        ));
    }
    Ok(dir)
}

/// An ADDR:PORT the recorder listens on or is reached at.
fn check_addr(cmd: &str, option: &str, addr: &str) -> Result<String, String> {
    use std::net::ToSocketAddrs as _;
    if addr.parse::<SocketAddr>().is_ok() {
        return Ok(addr.to_string());
    }
    // A host name: resolvable now, and with a port.
    match addr.to_socket_addrs().map(|mut a| a.next().is_some()) {
        Ok(true) => Ok(addr.to_string()),
        _ => Err(format!(
            "durability {cmd}: {option} '{addr}' is not ADDR:PORT (e.g. 192.0.2.7:7878 or recorder.example:7878)"
        )),
    }
}

fn sink(
    cmd: &str,
    opts: &BTreeMap<String, Vec<OsString>>,
    recorder_name: &str,
) -> Result<Sink, String> {
    let recorder = text(cmd, opts, recorder_name)?;
    let journal = single(cmd, opts, "journal")?;
    let key = single(cmd, opts, "key")?;
    if journal.is_some() && key.is_some() {
        return Err(format!(
            "durability {cmd}: --key is for a recorder (--{recorder_name} ADDR:PORT), not for --journal FILE"
        ));
    }
    match (recorder, journal) {
        (Some(_), Some(_)) => Err(format!(
            "durability {cmd}: give either --{recorder_name} ADDR:PORT or --journal FILE, not both"
        )),
        (Some(a), None) => Ok(Sink::Recorder {
            addr: check_addr(cmd, &format!("--{recorder_name}"), a)?,
            key: key.map(PathBuf::from).ok_or_else(|| {
                format!(
                    "durability {cmd}: --key FILE is required with --{recorder_name}: the key file the recorder printed at its start"
                )
            })?,
        }),
        (None, Some(j)) => Ok(Sink::Journal(PathBuf::from(j))),
        (None, None) => Err(format!(
            "durability {cmd}: say where acknowledged writes {}: --{recorder_name} ADDR:PORT or --journal FILE",
            if cmd == "write" { "are reported" } else { "were recorded" }
        )),
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

/// `durability write DIR [options]`.
pub fn parse_write(args: &[OsString]) -> Result<WriteOptions, String> {
    let (positionals, opts) = split("write", args, &WRITE_VALUED, &["direct"])?;
    let dir = one_dir("write", positionals)?;
    let commit = match text("write", &opts, "commit")? {
        None => Commit::Fsync,
        Some(c) => Commit::parse(c).ok_or_else(|| {
            format!(
                "durability write: --commit '{c}' is unknown; accepted: {}",
                Commit::ACCEPTED
            )
        })?,
    };
    let mode = text("write", &opts, "file-test-mode")?.unwrap_or("rndwr");
    if !matches!(mode, "rndwr" | "seqwr") {
        return Err(format!(
            "durability write: --file-test-mode '{mode}' is not accepted; accepted: rndwr, seqwr"
        ));
    }
    let time_s = match text("write", &opts, "time")? {
        None => 0,
        Some(t) => t.parse::<u64>().map_err(|_| {
            format!("durability write: --time '{t}' is not a whole number of seconds (0: until stopped)")
        })?,
    };
    let direct = opts.contains_key("direct");
    // The fileio options go through fileio's parser: the same defaults and refusals.
    let mut words = vec!["fileio".to_string(), format!("--file-test-mode={mode}")];
    for name in ["file-num", "file-total-size", "file-block-size", "threads"] {
        if let Some(v) = text("write", &opts, name)? {
            words.push(format!("--{name}={v}"));
        }
    }
    // 4 KiB, not fileio's 16 KiB: the page size and the usual file system
    // block, so a torn page shows as a torn record.
    if !opts.contains_key("file-block-size") {
        words.push(format!("--file-block-size={DEFAULT_BLOCK_SIZE}"));
    }
    // Each write is committed by the writer itself (--commit), never by
    // fileio's periodic fsync requests.
    words.push("--file-fsync-freq=0".into());
    if direct {
        words.push("--file-extra-flags=direct".into());
    }
    words.push("run".into());
    let mut parsed = ParsedArgs::parse(words.iter().map(String::as_str));
    let fileio_err = |f: fileio::options::Failure| {
        let line = f.summary();
        let first = line
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("FATAL: ")
            .to_string();
        format!("durability write: {first}")
    };
    let general = GeneralOptions::from_args(&mut parsed).map_err(fileio_err)?;
    let mut spec = RunSpec::from_args(&parsed, &general).map_err(fileio_err)?;
    spec.check_runnable().map_err(fileio_err)?;
    let bs = spec.files.block_size;
    if bs < SECTOR as u64 || !bs.is_multiple_of(SECTOR as u64) || bs > MAX_BLOCK_SIZE {
        return Err(format!(
            "durability write: --file-block-size {bs} is not accepted; accepted: a multiple of {SECTOR} bytes from {SECTOR} to {MAX_BLOCK_SIZE} (every sector carries the record header)"
        ));
    }
    if spec.files.file_size < bs {
        return Err(format!(
            "durability write: --file-total-size / --file-num gives files of {} bytes, smaller than one block ({bs}); accepted: at least one block per file",
            spec.files.file_size
        ));
    }
    if !spec.files.file_size.is_multiple_of(bs) {
        return Err(format!(
            "durability write: --file-total-size / --file-num gives files of {} bytes, not a whole number of {bs}-byte blocks; accepted: a total size that is --file-num x a multiple of --file-block-size",
            spec.files.file_size
        ));
    }
    if u32::try_from(spec.files.file_num).is_err() {
        return Err("durability write: --file-num is too large".into());
    }
    spec.files.dir.clone_from(&dir);
    debug_assert!(matches!(spec.mode, Mode::RndWr | Mode::SeqWr));
    let sink = sink("write", &opts, "recorder")?;
    Ok(WriteOptions {
        dir,
        spec,
        commit,
        direct,
        sink,
        time_s,
    })
}

/// `--max-journal-size SIZE` of `record` and `verify`.
fn max_journal(cmd: &str, opts: &BTreeMap<String, Vec<OsString>>) -> Result<u64, String> {
    match text(cmd, opts, "max-journal-size")? {
        None => Ok(crate::wire::DEFAULT_MAX_JOURNAL_BYTES),
        Some(t) => match fileio::sysbench::args::parse_size(t) {
            0 => Err(format!(
                "durability {cmd}: --max-journal-size '{t}' is not accepted; accepted: a size above 0 (e.g. 64M, 2G)"
            )),
            n => Ok(n),
        },
    }
}

/// `durability record --listen ADDR:PORT --journal FILE [--key FILE]
/// [--max-journal-size SIZE] [--max-sessions N]`.
pub fn parse_record(args: &[OsString]) -> Result<RecordOptions, String> {
    let (positionals, opts) = split(
        "record",
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
    if let Some(p) = positionals.first() {
        return Err(format!(
            "durability record: unexpected argument '{}'; usage: tankbench durability record --listen ADDR:PORT --journal FILE [--key FILE]",
            p.to_string_lossy()
        ));
    }
    let listen = text("record", &opts, "listen")?
        .ok_or("durability record: --listen ADDR:PORT is required (e.g. 0.0.0.0:7878)")?;
    let listen = check_addr("record", "--listen", listen)?;
    let journal = PathBuf::from(single("record", &opts, "journal")?.ok_or(
        "durability record: --journal FILE is required (on storage other than the one under test)",
    )?);
    let key = match single("record", &opts, "key")? {
        Some(k) => PathBuf::from(k),
        None => {
            let mut k = journal.clone().into_os_string();
            k.push(".key");
            PathBuf::from(k)
        }
    };
    let mut limits = Limits::from_env();
    limits.max_journal_bytes = max_journal("record", &opts)?;
    if let Some(n) = text("record", &opts, "max-sessions")? {
        limits.max_sessions = n
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=1024).contains(n))
            .ok_or_else(|| {
                format!(
                    "durability record: --max-sessions '{n}' is not accepted; accepted: 1 to 1024"
                )
            })?;
    }
    Ok(RecordOptions {
        listen,
        journal,
        key,
        limits,
    })
}

/// `durability verify DIR --from JOURNAL|ADDR:PORT`.
pub fn parse_verify(args: &[OsString]) -> Result<VerifyOptions, String> {
    let (positionals, opts) = split(
        "verify",
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
    let dir = one_dir("verify", positionals)?;
    let key = single("verify", &opts, "key")?.map(PathBuf::from);
    let from = match single("verify", &opts, "from")? {
        None => {
            return Err(
                "durability verify: --from JOURNAL|ADDR:PORT is required (the journal file or the recorder)".into(),
            )
        }
        Some(v) => {
            let p = PathBuf::from(v);
            if p.exists() {
                Sink::Journal(p)
            } else {
                let t = v.to_str().unwrap_or("");
                if t.contains(':') && !t.contains('/') {
                    Sink::Recorder {
                        addr: check_addr("verify", "--from", t)?,
                        key: key.clone().ok_or(
                            "durability verify: --key FILE is required with --from ADDR:PORT: the key file the recorder printed at its start",
                        )?,
                    }
                } else {
                    return Err(format!(
                        "durability verify: --from {}: no such journal file, and not ADDR:PORT",
                        p.display()
                    ));
                }
            }
        }
    };
    if matches!(from, Sink::Journal(_)) && key.is_some() {
        return Err(
            "durability verify: --key is for a recorder (--from ADDR:PORT), not for a journal file"
                .into(),
        );
    }
    let max_journal_bytes = max_journal("verify", &opts)?;
    let examples = match text("verify", &opts, "examples")? {
        None => 10,
        Some(n) => n
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= 10_000)
            .ok_or_else(|| {
                format!("durability verify: --examples '{n}' is not accepted; accepted: 0 to 10000")
            })?,
    };
    let labels = match opts.get("label") {
        None => Vec::new(),
        Some(v) => v
            .iter()
            .map(|l| {
                l.to_str().map(str::to_string).ok_or_else(|| {
                    "durability verify: --label: the value is not UTF-8 text".to_string()
                })
            })
            .collect::<Result<_, _>>()?,
    };
    Ok(VerifyOptions {
        dir,
        from,
        examples,
        direct: opts.contains_key("direct"),
        save: single("verify", &opts, "save")?.map(|d| {
            if d.is_empty() {
                PathBuf::from(report::store::DEFAULT_DIR)
            } else {
                PathBuf::from(d)
            }
        }),
        json: single("verify", &opts, "json")?.map(PathBuf::from),
        labels,
        max_journal_bytes,
    })
}

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
            .contains("not a directory"));
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().to_str().unwrap();
        assert!(parse_verify(&words(&[dir])).unwrap_err().contains("--from"));
        assert!(parse_verify(&words(&[dir, "--from=/no/such/journal"]))
            .unwrap_err()
            .contains("no such journal"));
        assert!(parse_verify(&words(&[dir, "--from", "127.0.0.1:9"]))
            .unwrap_err()
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
        .contains("--max-journal-size"));
    }
}
