//! The journal: the record of acknowledged writes, kept outside the storage
//! under test. One text line per entry, the same lines the writer sends the
//! recorder over TCP, so a journal file written by the writer itself
//! (`--journal`) and one kept by `durability record` read the same.
//!
//! ```text
//! tankbench-durability-journal 1
//! S run=<32 hex> fileset=<32 hex> generation=3 block_size=4096 file_num=4 file_size=1048576 mode=rndwr commit=fsync direct=0 threads=2 started=2026-12-01T12:00:00Z
//! A <run> <file> <block> <seq> <checksum, 8 hex>
//! E <run> acknowledged=<n> reason=<word>
//! ```
//!
//! A line that does not end in a newline is the tail of a write the crash cut
//! short and is ignored.

use crate::record::RunId;
use fileio::text::printable;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The first line of every journal file.
pub const JOURNAL_HEADER: &str = "tankbench-durability-journal 1";

pub use fileio::result::Commit;

/// Why journal bytes are not a journal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JournalError {
    #[error("not a journal (its first line is not '{JOURNAL_HEADER}')")]
    NotAJournal,
    #[error("the journal is empty (not even its header line)")]
    Empty,
}

/// Why a journal line does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("not a session line")]
    NotSession,
    #[error("not an acknowledgement line")]
    NotAck,
    #[error("'{}' is not key=value", printable(word))]
    NotKeyValue { word: String },
    #[error("{line} line lacks {field}")]
    Missing {
        line: &'static str,
        field: &'static str,
    },
    #[error("{line} {field} is not {expected}")]
    Malformed {
        line: &'static str,
        field: &'static str,
        expected: &'static str,
    },
    #[error("session line has an empty file layout")]
    EmptyLayout,
    #[error("end line without a run id")]
    EndWithoutRun,
    #[error("unknown line '{}'", printable(start))]
    Unknown { start: String },
}

/// A writer session: the hello a writer sends, the `S` line of the journal.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub run: RunId,
    /// The file set's id (from its marker file): which directory this is about.
    pub fileset: RunId,
    pub generation: u32,
    pub block_size: u64,
    pub file_num: u64,
    pub file_size: u64,
    /// rndwr or seqwr.
    pub mode: String,
    pub commit: Commit,
    pub direct: bool,
    pub threads: u32,
    /// RFC 3339 UTC.
    pub started: String,
}

impl Session {
    /// The `S` line, without the newline.
    pub fn line(&self) -> String {
        format!(
            "S run={} fileset={} generation={} block_size={} file_num={} file_size={} mode={} commit={} direct={} threads={} started={}",
            self.run,
            self.fileset,
            self.generation,
            self.block_size,
            self.file_num,
            self.file_size,
            self.mode,
            self.commit.name(),
            u8::from(self.direct),
            self.threads,
            self.started
        )
    }

    /// Parse an `S` line (without the newline).
    pub fn parse(line: &str) -> Result<Session, LineError> {
        let rest = line.strip_prefix("S ").ok_or(LineError::NotSession)?;
        let mut fields = BTreeMap::new();
        for word in rest.split(' ') {
            let (k, v) = word.split_once('=').ok_or_else(|| LineError::NotKeyValue {
                word: word.chars().take(40).collect(),
            })?;
            fields.insert(k, v);
        }
        let get = |field: &'static str| {
            fields.get(field).copied().ok_or(LineError::Missing {
                line: "session",
                field,
            })
        };
        let malformed = |field: &'static str, expected: &'static str| LineError::Malformed {
            line: "session",
            field,
            expected,
        };
        let num = |field: &'static str| -> Result<u64, LineError> {
            get(field)?
                .parse::<u64>()
                .map_err(|_| malformed(field, "a number"))
        };
        let small = |field: &'static str| -> Result<u32, LineError> {
            u32::try_from(num(field)?).map_err(|_| malformed(field, "a 32-bit number"))
        };
        let id = |field: &'static str| {
            RunId::parse_hex(get(field)?).ok_or_else(|| malformed(field, "32 hex digits"))
        };
        let s = Session {
            run: id("run")?,
            fileset: id("fileset")?,
            generation: small("generation")?,
            block_size: num("block_size")?,
            file_num: num("file_num")?,
            file_size: num("file_size")?,
            mode: get("mode")?.to_string(),
            commit: Commit::parse(get("commit")?)
                .ok_or_else(|| malformed("commit", Commit::ACCEPTED))?,
            direct: get("direct")? == "1",
            threads: small("threads")?,
            started: get("started")?.to_string(),
        };
        if s.block_size == 0 || s.file_num == 0 || s.file_size < s.block_size {
            return Err(LineError::EmptyLayout);
        }
        Ok(s)
    }
}

/// One acknowledged write, the `A` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    pub run: RunId,
    pub file: u32,
    pub block: u64,
    pub seq: u64,
    pub checksum: u32,
}

impl Ack {
    /// Append the `A` line with its newline to `out`.
    pub fn write_line(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "A {} {} {} {} {:08x}",
            self.run, self.file, self.block, self.seq, self.checksum
        );
    }

    pub fn parse(line: &str) -> Result<Ack, LineError> {
        let mut w = line.split(' ');
        if w.next() != Some("A") {
            return Err(LineError::NotAck);
        }
        let mut next =
            |field: &'static str| w.next().ok_or(LineError::Missing { line: "ack", field });
        let malformed = |field: &'static str, expected: &'static str| LineError::Malformed {
            line: "ack",
            field,
            expected,
        };
        let run =
            RunId::parse_hex(next("run")?).ok_or_else(|| malformed("run", "32 hex digits"))?;
        let file = next("file")?
            .parse()
            .map_err(|_| malformed("file", "a number"))?;
        let block = next("block")?
            .parse()
            .map_err(|_| malformed("block", "a number"))?;
        let seq = next("seq")?
            .parse()
            .map_err(|_| malformed("seq", "a number"))?;
        let checksum = u32::from_str_radix(next("checksum")?, 16)
            .map_err(|_| malformed("checksum", "8 hex digits"))?;
        Ok(Ack {
            run,
            file,
            block,
            seq,
            checksum,
        })
    }
}

/// The `E` line: how a session ended, when the writer lived to say so.
pub(crate) fn end_line(run: &RunId, acknowledged: u64, reason: &str) -> String {
    let reason: String = reason
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect();
    format!("E {run} acknowledged={acknowledged} reason={reason}")
}

/// What kind of line a line is; checked by the recorder before it appends.
pub(crate) fn check_line(line: &str) -> Result<(), LineError> {
    match line.as_bytes().first() {
        Some(b'S') => Session::parse(line).map(|_| ()),
        Some(b'A') => Ack::parse(line).map(|_| ()),
        Some(b'E') if line.starts_with("E ") && !line.contains('\n') => Ok(()),
        _ => Err(LineError::Unknown {
            start: line.chars().take(40).collect(),
        }),
    }
}

/// A journal read back: sessions in the order they started, and their acks.
#[derive(Debug, Default)]
pub struct Journal {
    pub sessions: Vec<Session>,
    pub acks: Vec<Ack>,
    /// `E` lines: (run, text after the run id).
    pub ends: Vec<(RunId, String)>,
    /// Lines that did not parse (with their line numbers), skipped.
    pub bad_lines: Vec<(usize, LineError)>,
    /// Whether the last line was cut short (no newline) and skipped.
    pub truncated_tail: bool,
}

impl Journal {
    /// Parse a whole journal. Its first line must be [`JOURNAL_HEADER`].
    pub fn parse(text: &[u8]) -> Result<Journal, JournalError> {
        let text = String::from_utf8_lossy(text);
        let mut lines = text.split_inclusive('\n');
        match lines.next() {
            Some(l) if l.strip_suffix('\n').unwrap_or(l) == JOURNAL_HEADER => {}
            Some(_) => return Err(JournalError::NotAJournal),
            None => return Err(JournalError::Empty),
        }
        let mut j = Journal::default();
        for (i, raw) in lines.enumerate() {
            let Some(line) = raw.strip_suffix('\n') else {
                j.truncated_tail = true;
                break;
            };
            let number = i + 2;
            let parsed = match line.as_bytes().first() {
                Some(b'S') => Session::parse(line).map(|s| j.sessions.push(s)),
                Some(b'A') => Ack::parse(line).map(|a| j.acks.push(a)),
                Some(b'E') => {
                    let mut w = line.splitn(3, ' ');
                    w.next();
                    match w.next().and_then(RunId::parse_hex) {
                        Some(run) => {
                            j.ends.push((run, w.next().unwrap_or("").to_string()));
                            Ok(())
                        }
                        None => Err(LineError::EndWithoutRun),
                    }
                }
                _ => Err(LineError::Unknown {
                    start: line.chars().take(40).collect(),
                }),
            };
            if let Err(e) = parsed {
                j.bad_lines.push((number, e));
            }
        }
        Ok(j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        Session {
            run: RunId([1; 16]),
            fileset: RunId([2; 16]),
            generation: 3,
            block_size: 4096,
            file_num: 2,
            file_size: 1 << 20,
            mode: "rndwr".into(),
            commit: Commit::Fdatasync,
            direct: true,
            threads: 4,
            started: "2026-12-01T12:00:00Z".into(),
        }
    }

    #[test]
    fn lines_round_trip() {
        let s = session();
        assert_eq!(Session::parse(&s.line()).unwrap(), s);
        let a = Ack {
            run: s.run,
            file: 1,
            block: 77,
            seq: 12345,
            checksum: 0xdead_beef,
        };
        let mut text = String::new();
        a.write_line(&mut text);
        assert_eq!(Ack::parse(text.trim_end()).unwrap(), a);
        assert!(check_line(text.trim_end()).is_ok());
        assert!(check_line(&s.line()).is_ok());
        assert!(check_line("X nonsense").is_err());
        assert!(check_line("A 12 3").is_err());
    }

    #[test]
    fn a_journal_skips_its_cut_tail_and_counts_bad_lines() {
        let s = session();
        let mut text = format!("{JOURNAL_HEADER}\n{}\n", s.line());
        let a = Ack {
            run: s.run,
            file: 0,
            block: 1,
            seq: 1,
            checksum: 7,
        };
        a.write_line(&mut text);
        text.push_str("garbage\n");
        text.push_str(&end_line(&s.run, 1, "time limit"));
        text.push('\n');
        text.push_str("A 0101"); // cut by the crash
        let j = Journal::parse(text.as_bytes()).unwrap();
        assert_eq!(j.sessions, vec![s]);
        assert_eq!(j.acks, vec![a]);
        assert_eq!(j.ends.len(), 1);
        assert!(j.ends[0].1.contains("reason=time_limit"));
        assert_eq!(j.bad_lines.len(), 1);
        assert!(j.truncated_tail);
    }

    #[test]
    fn a_file_that_is_not_a_journal_is_refused() {
        assert!(Journal::parse(b"").is_err());
        assert!(Journal::parse(b"hello\n").is_err());
        assert!(Journal::parse(format!("{JOURNAL_HEADER}\n").as_bytes()).is_ok());
    }
}
