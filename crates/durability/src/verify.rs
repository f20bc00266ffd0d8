//! `durability verify`: after the crash, read back every block whose write
//! was acknowledged and classify it against its latest acknowledged version.
//! The outcome is a fileio `RunResult` with a `durability` section, stored and
//! reported like any run.

use crate::error::{DurabilityError, VerifyError};
use crate::fileset::{self, Layout};
use crate::journal::{Ack, Journal, Session};
use crate::options::{Sink, VerifyOptions};
use crate::record::{classify, Aligned, Expected, Lost, Outcome, RunId};
use fileio::result::{
    Counts, Durability, DurabilityExample, ResultKind, RunResult, Verdict, Warning, WorkloadSummary,
};
use fileio::spec::{DataPattern, FsyncMode, IoMode, Mode};
use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
use std::time::Instant;

/// The check's outcome and the lines to print.
#[derive(Debug)]
pub struct Verification {
    pub result: RunResult,
    /// The text report, one line each.
    pub lines: Vec<String>,
}

impl Verification {
    /// Whether every acknowledged write survived (exit status 0).
    pub fn passed(&self) -> bool {
        self.result
            .durability
            .as_ref()
            .is_some_and(|d| d.verdict == Verdict::Passed)
    }
}

/// The journal's bytes, from a file or a recorder.
pub fn load_journal(from: &Sink, max_journal_bytes: u64) -> Result<Vec<u8>, DurabilityError> {
    match from {
        Sink::Journal(p) => report::store::read_regular_file(p).map_err(DurabilityError::From),
        Sink::Recorder { addr, key } => {
            let key = crate::wire::Key::load(key)?;
            let mut limits = crate::wire::Limits::from_env();
            limits.max_journal_bytes = max_journal_bytes;
            crate::recorder::fetch(addr, &key, &limits)
        }
    }
}

/// The latest acknowledged write of each block, with the order of its session.
struct Latest {
    session: usize,
    ack: Ack,
}

/// What the journal says about this file set.
struct Plan<'j> {
    sessions: Vec<&'j Session>,
    /// Session order by run id.
    order: HashMap<RunId, usize>,
    latest: BTreeMap<(u32, u64), Latest>,
    acknowledged_writes: u64,
    out_of_layout: u64,
}

/// The sessions of the file set `fileset` and the latest acknowledged write
/// of each block. A journal that gives nothing to check is an error: "nothing
/// to verify" must never pass for success.
fn plan<'j>(
    j: &'j Journal,
    fileset: &RunId,
    layout: &Layout,
    dir: &std::path::Path,
) -> Result<Plan<'j>, VerifyError> {
    // A run's session counts where it was first announced: a repeated
    // session line (never written by a recorder, which refuses it) must not
    // move a run's acknowledgements after a later run's and hide a loss.
    let mut seen = std::collections::HashSet::new();
    let sessions: Vec<&Session> = j
        .sessions
        .iter()
        .filter(|s| s.fileset == *fileset && seen.insert(s.run))
        .collect();
    if sessions.is_empty() {
        return Err(VerifyError::NoSession {
            dir: dir.to_path_buf(),
            fileset: *fileset,
            other_sessions: j.sessions.len(),
        });
    }
    if let Some(s) = sessions.iter().find(|s| {
        s.block_size != layout.block_size
            || s.file_num != layout.file_num
            || s.file_size != layout.file_size
    }) {
        return Err(VerifyError::OtherLayout {
            run: s.run,
            dir: dir.to_path_buf(),
        });
    }
    let order: HashMap<RunId, usize> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.run, i))
        .collect();
    let mut p = Plan {
        sessions,
        order,
        latest: BTreeMap::new(),
        acknowledged_writes: 0,
        out_of_layout: 0,
    };
    for a in &j.acks {
        let Some(&session) = p.order.get(&a.run) else {
            continue;
        };
        if u64::from(a.file) >= layout.file_num || a.block >= layout.blocks_per_file() {
            p.out_of_layout += 1;
            continue;
        }
        p.acknowledged_writes += 1;
        let entry = p
            .latest
            .entry((a.file, a.block))
            .or_insert(Latest { session, ack: *a });
        if (session, a.seq) > (entry.session, entry.ack.seq) {
            *entry = Latest { session, ack: *a };
        }
    }
    if p.latest.is_empty() {
        return Err(VerifyError::NoAcknowledgedWrite {
            sessions: p.sessions.len(),
        });
    }
    Ok(p)
}

/// Read back and classify every block of the plan.
fn check_blocks(
    opts: &VerifyOptions,
    layout: &Layout,
    p: &Plan<'_>,
) -> Result<(Durability, u64), VerifyError> {
    let mut d = Durability {
        commit: p.sessions[p.sessions.len() - 1].commit,
        sessions: u32::try_from(p.sessions.len()).unwrap_or(u32::MAX),
        acknowledged_writes: p.acknowledged_writes,
        ..Durability::default()
    };
    let mut examples: BTreeMap<&'static str, Vec<DurabilityExample>> = BTreeMap::new();
    let mut reader = BlockReader::new(opts, layout);
    let mut bytes_read = 0u64;
    let mut failed = 0u64;
    for (&(file, block), l) in &p.latest {
        let exp = Expected {
            run: l.ack.run,
            file,
            block,
            seq: l.ack.seq,
            checksum: l.ack.checksum,
        };
        let later = |r: &RunId| p.order.get(r).is_some_and(|&i| i > l.session);
        let outcome = match reader.read(file, block) {
            Ok(buf) => {
                bytes_read += layout.block_size;
                classify(buf, &exp, &later)
            }
            Err(ReadFailure::Missing(why)) => Outcome::Lost(Lost::Absent(why)),
            Err(ReadFailure::Error(why)) => Outcome::Corrupt(why),
            Err(ReadFailure::Fatal(e)) => return Err(e),
        };
        d.acknowledged += 1;
        failed += u64::from(outcome.is_failure());
        match &outcome {
            Outcome::Intact => d.intact += 1,
            Outcome::Newer { .. } => d.unacknowledged_newer += 1,
            Outcome::Lost(_) => d.lost += 1,
            Outcome::Torn { .. } => d.torn += 1,
            Outcome::Corrupt(_) => d.corrupt += 1,
        }
        if !matches!(outcome, Outcome::Intact) {
            let list = examples.entry(outcome.class()).or_default();
            if list.len() < opts.examples {
                list.push(DurabilityExample {
                    outcome: outcome.class().to_string(),
                    file,
                    block,
                    acknowledged_seq: exp.seq,
                    found: outcome.describe(),
                });
            }
        }
    }
    debug_assert_eq!(failed, d.lost + d.torn + d.corrupt);
    d.verdict = if failed == 0 {
        Verdict::Passed
    } else {
        Verdict::Failed
    };
    for class in ["lost", "torn", "corrupt", "unacknowledged_newer"] {
        d.examples
            .extend(examples.remove(class).unwrap_or_default());
    }
    Ok((d, bytes_read))
}

/// The text report.
fn report_lines(
    opts: &VerifyOptions,
    fileset: &RunId,
    d: &Durability,
    p: &Plan<'_>,
    j: &Journal,
) -> Vec<String> {
    let mut lines = vec![
        format!(
            "durability verify: {} (file set {fileset}, {} session(s), commit {})",
            opts.dir.display(),
            d.sessions,
            d.commit.name()
        ),
        format!(
            "  acknowledged writes in the journal: {} ({} blocks, each checked against its latest)",
            d.acknowledged_writes, d.acknowledged
        ),
        format!("  intact:                {}", d.intact),
        format!("  lost:                  {}", d.lost),
        format!("  torn:                  {}", d.torn),
        format!("  corrupt:               {}", d.corrupt),
        format!(
            "  unacknowledged newer:  {} (allowed: written after the last acknowledgement)",
            d.unacknowledged_newer
        ),
    ];
    if p.out_of_layout > 0 {
        lines.push(format!(
            "  note: {} acknowledgement(s) name blocks outside the file set and were skipped",
            p.out_of_layout
        ));
    }
    if let Some((line, why)) = j.bad_lines.first() {
        lines.push(format!(
            "  note: {} journal line(s) did not parse and were skipped (first: line {line}: {why})",
            j.bad_lines.len()
        ));
    }
    for e in &d.examples {
        lines.push(format!(
            "  {}: file {} block {} (acknowledged sequence {}): {}",
            e.outcome, e.file, e.block, e.acknowledged_seq, e.found
        ));
    }
    let failed = d.lost + d.torn + d.corrupt;
    lines.push(if failed == 0 {
        format!(
            "durability verify: PASSED: all {} acknowledged blocks hold their acknowledged or a later write",
            d.acknowledged
        )
    } else {
        format!(
            "durability verify: FAILED: {failed} of {} acknowledged blocks lost or damaged ({} lost, {} torn, {} corrupt)",
            d.acknowledged, d.lost, d.torn, d.corrupt
        )
    });
    lines
}

/// Check `opts.dir` against the journal `journal` (its bytes).
pub fn verify(opts: &VerifyOptions, journal: &[u8]) -> Result<Verification, DurabilityError> {
    let started_at = fileio::clock::utc_now_rfc3339();
    let clock = Instant::now();
    let marker = fileset::read_marker(&opts.dir)?.ok_or_else(|| VerifyError::NoFileSet {
        dir: opts.dir.clone(),
    })?;
    let j = Journal::parse(journal)?;
    let layout = marker.layout;
    let p = plan(&j, &marker.id, &layout, &opts.dir)?;
    let (d, bytes_read) = check_blocks(opts, &layout, &p)?;
    let lines = report_lines(opts, &marker.id, &d, &p, &j);
    let failed = d.lost + d.torn + d.corrupt;
    let mut warnings = Vec::new();
    if failed > 0 {
        warnings.push(Warning {
            code: "acknowledged_writes_lost".into(),
            message: format!(
                "{failed} of {} blocks whose writes were acknowledged as stable did not hold them after the crash",
                d.acknowledged
            ),
            hint: "something between the application and the platters acknowledged a flush it did not honour: check sync=disabled, volatile write caches, log devices without power-loss protection, NFS exports with async".into(),
        });
    }
    let counts = Counts {
        events: d.acknowledged,
        reads: d.acknowledged,
        bytes_read,
        ..Counts::default()
    };
    let elapsed = clock.elapsed().as_secs_f64();
    let verdict = d.verdict.name();
    let result = RunResult::new(
        ResultKind::Measured,
        workload(p.sessions[p.sessions.len() - 1], &layout, opts),
    )
    .with_started_at(started_at)
    .with_label("test", "durability")
    .with_label("durability", verdict)
    .with_figures(counts, elapsed, elapsed)
    .with_environment(fileio::environment::capture(&opts.dir, false))
    .with_warnings(warnings)
    .with_durability(d);
    Ok(Verification { result, lines })
}

/// The write workload the check covers, from the last session.
fn workload(s: &Session, layout: &Layout, opts: &VerifyOptions) -> WorkloadSummary {
    let mut extra_flags = Vec::new();
    match s.commit {
        crate::journal::Commit::OSync => extra_flags.push("sync".to_string()),
        crate::journal::Commit::ODsync => extra_flags.push("dsync".to_string()),
        _ => {}
    }
    if s.direct {
        extra_flags.push("direct".to_string());
    }
    WorkloadSummary {
        mode: Mode::parse(&s.mode).unwrap_or(Mode::RndWr),
        io_mode: IoMode::Sync,
        engine: "durability".into(),
        threads: s.threads,
        file_num: layout.file_num,
        file_size: layout.file_size,
        total_size: layout.file_num * layout.file_size,
        block_size: layout.block_size,
        request_size: layout.block_size,
        rw_ratio: 0.0,
        fsync_freq: 0,
        fsync_all: matches!(
            s.commit,
            crate::journal::Commit::Fsync | crate::journal::Commit::Fdatasync
        ),
        fsync_end: false,
        fsync_mode: if s.commit == crate::journal::Commit::Fdatasync {
            FsyncMode::Fdatasync
        } else {
            FsyncMode::Fsync
        },
        extra_flags,
        events_limit: 0,
        time_limit_s: 0,
        rate: 0,
        queue_depth: 1,
        data: DataPattern::Random,
        sync_every_writes: 0,
        directory: opts.dir.display().to_string(),
    }
}

enum ReadFailure {
    /// The file or the block is not there (deleted, truncated): the write is lost.
    Missing(String),
    /// The read failed.
    Error(String),
    /// A file exists but cannot be opened (permissions, O_DIRECT refused):
    /// a problem of the check, not of the data, so no block is judged.
    Fatal(VerifyError),
}

/// Reads blocks, one open file at a time.
struct BlockReader<'a> {
    opts: &'a VerifyOptions,
    layout: &'a Layout,
    /// The open file, or why it is missing (the outcome of its blocks).
    open: Option<(u32, Result<File, String>)>,
    buf: Aligned,
}

impl<'a> BlockReader<'a> {
    fn new(opts: &'a VerifyOptions, layout: &'a Layout) -> BlockReader<'a> {
        let len = usize::try_from(layout.block_size).unwrap_or(usize::MAX);
        BlockReader {
            opts,
            layout,
            open: None,
            buf: Aligned::new(len),
        }
    }

    fn read(&mut self, file: u32, block: u64) -> Result<&[u8], ReadFailure> {
        if self.open.as_ref().map(|(f, _)| *f) != Some(file) {
            let path = fileset::file_path(&self.opts.dir, u64::from(file));
            let flags = if self.opts.direct { libc::O_DIRECT } else { 0 };
            let f = match OpenOptions::new()
                .read(true)
                .custom_flags(flags | libc::O_NOFOLLOW)
                .open(&path)
            {
                Ok(f) => Ok(f),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Err(format!("{}: {e}", path.display()))
                }
                Err(source) => {
                    return Err(ReadFailure::Fatal(VerifyError::Open {
                        path,
                        source,
                        direct: self.opts.direct,
                    }));
                }
            };
            self.open = Some((file, f));
        }
        let Some((_, f)) = &self.open else {
            return Err(ReadFailure::Error("no file".into()));
        };
        let f = f.as_ref().map_err(|e| ReadFailure::Missing(e.clone()))?;
        let buf = self.buf.buf();
        let pos = block * self.layout.block_size;
        let mut done = 0;
        while done < buf.len() {
            match f.read_at(&mut buf[done..], pos + done as u64) {
                Ok(0) => {
                    return Err(ReadFailure::Missing(format!(
                        "file {file} ends before block {block}"
                    )))
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadFailure::Error(format!("read error: {e}"))),
            }
        }
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{Commit, JOURNAL_HEADER};
    use crate::record::{encode, Header};

    const LAYOUT: Layout = Layout {
        file_num: 2,
        file_size: 4 * 4096,
        block_size: 4096,
    };

    fn session(run: RunId, fileset: RunId, generation: u32) -> Session {
        Session {
            run,
            fileset,
            generation,
            block_size: LAYOUT.block_size,
            file_num: LAYOUT.file_num,
            file_size: LAYOUT.file_size,
            mode: "rndwr".into(),
            commit: Commit::Fsync,
            direct: false,
            threads: 1,
            started: "2026-12-01T00:00:00Z".into(),
        }
    }

    /// Write a record at (file, block) and return its ack.
    fn put(dir: &Path, run: RunId, file: u32, block: u64, seq: u64) -> Ack {
        let mut buf = vec![0u8; 4096];
        let checksum = encode(
            &Header {
                run,
                file,
                block,
                seq,
                thread: 0,
                generation: 1,
                block_size: 4096,
            },
            &mut buf,
        );
        let f = OpenOptions::new()
            .write(true)
            .open(fileset::file_path(dir, u64::from(file)))
            .unwrap();
        f.write_all_at(&buf, block * 4096).unwrap();
        Ack {
            run,
            file,
            block,
            seq,
            checksum,
        }
    }

    fn options(dir: &Path) -> VerifyOptions {
        VerifyOptions {
            dir: dir.to_path_buf(),
            from: Sink::Journal(dir.join("unused")),
            examples: 10,
            direct: false,
            save: None,
            json: None,
            labels: Vec::new(),
            max_journal_bytes: crate::wire::DEFAULT_MAX_JOURNAL_BYTES,
        }
    }

    fn journal(sessions: &[Session], acks: &[Ack]) -> Vec<u8> {
        let mut text = format!("{JOURNAL_HEADER}\n");
        for s in sessions {
            text.push_str(&s.line());
            text.push('\n');
        }
        for a in acks {
            a.write_line(&mut text);
        }
        text.into_bytes()
    }

    use std::path::Path;

    /// Issue 19: a session line repeated later in the journal (an earlier
    /// run announced again) must not reorder the runs and hide a loss.
    #[test]
    fn a_repeated_earlier_session_does_not_mask_a_loss() {
        let d = tempfile::tempdir().unwrap();
        let m = fileset::prepare(
            d.path(),
            &fileset::plan(d.path(), LAYOUT).unwrap(),
            &mut |_| {},
        )
        .unwrap();
        let (r1, r2) = (RunId([1; 16]), RunId([2; 16]));
        let a1 = put(d.path(), r1, 0, 0, 5);
        // Run 2's acknowledged write of block 0 is lost: the block still
        // holds run 1's.
        let a2 = Ack {
            run: r2,
            file: 0,
            block: 0,
            seq: 1,
            checksum: 0,
        };
        let honest = journal(&[session(r1, m.id, 1), session(r2, m.id, 2)], &[a1, a2]);
        assert!(!verify(&options(d.path()), &honest).unwrap().passed());
        let replayed = journal(
            &[
                session(r1, m.id, 1),
                session(r2, m.id, 2),
                session(r1, m.id, 1),
            ],
            &[a1, a2],
        );
        let v = verify(&options(d.path()), &replayed).unwrap();
        assert!(!v.passed(), "{:?}", v.lines);
        assert_eq!(v.result.durability.unwrap().lost, 1);
    }

    #[test]
    fn sessions_are_ordered_and_a_missing_file_is_lost() {
        let d = tempfile::tempdir().unwrap();
        let m = fileset::prepare(
            d.path(),
            &fileset::plan(d.path(), LAYOUT).unwrap(),
            &mut |_| {},
        )
        .unwrap();
        let (r1, r2) = (RunId([1; 16]), RunId([2; 16]));
        // Session 1 acknowledged blocks 0 and 1 of file 0; session 2 then
        // rewrote block 0 (unacknowledged) and acknowledged block 2, which
        // still holds session 1's content.
        let a0 = put(d.path(), r1, 0, 0, 5);
        let a1 = put(d.path(), r1, 0, 1, 6);
        put(d.path(), r2, 0, 0, 1);
        put(d.path(), r1, 0, 2, 7);
        let a2 = Ack {
            run: r2,
            file: 0,
            block: 2,
            seq: 2,
            checksum: 0,
        };
        // Session 2 also acknowledged a block of file 1, which then vanished.
        let a3 = put(d.path(), r2, 1, 3, 3);
        std::fs::remove_file(fileset::file_path(d.path(), 1)).unwrap();
        let j = journal(
            &[session(r1, m.id, 1), session(r2, m.id, 2)],
            &[a0, a1, a2, a3],
        );
        let v = verify(&options(d.path()), &j).unwrap();
        let dur = v.result.durability.as_ref().unwrap();
        assert_eq!(
            (
                dur.acknowledged,
                dur.intact,
                dur.unacknowledged_newer,
                dur.lost
            ),
            (4, 1, 1, 2),
            "{dur:?}"
        );
        assert!(!v.passed());
        let lost: Vec<(u32, u64, &str)> = dur
            .examples
            .iter()
            .filter(|e| e.outcome == "lost")
            .map(|e| (e.file, e.block, e.found.as_str()))
            .collect();
        assert_eq!(lost[0].0, 0);
        assert!(lost[0].2.contains("another run"), "{lost:?}");
        assert_eq!((lost[1].0, lost[1].1), (1, 3));
        assert!(lost[1].2.starts_with("nothing"), "{lost:?}");
    }

    #[test]
    fn another_file_sets_sessions_give_nothing_to_verify() {
        let d = tempfile::tempdir().unwrap();
        fileset::prepare(
            d.path(),
            &fileset::plan(d.path(), LAYOUT).unwrap(),
            &mut |_| {},
        )
        .unwrap();
        let r = RunId([3; 16]);
        let a = put(d.path(), r, 0, 0, 1);
        let j = journal(&[session(r, RunId([9; 16]), 1)], &[a]);
        let e = verify(&options(d.path()), &j).unwrap_err();
        assert!(
            matches!(
                e,
                DurabilityError::Verify(VerifyError::NoSession {
                    other_sessions: 1,
                    ..
                })
            ),
            "{e}"
        );
        let text = e.to_string();
        assert!(text.contains("nothing to verify"), "{text}");
        assert!(!text.contains('\n'));
    }
}
