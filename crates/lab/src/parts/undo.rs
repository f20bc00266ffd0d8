//! What an emulated disk would lose in a power cut. The disk file system
//! performs every write on the backing file at once; for each write that is
//! not yet durable (the disk model says it waits in a volatile cache, or its
//! reply is still held back), the backing file's previous content of the range
//! is kept here. A power cut writes those records back, newest first, so the
//! backing file shows what the medium would hold after the power comes back.
//!
//! Records follow the model: a write the model calls durable (flushed by a
//! flush it honours, destaged in idle time, never cached) is forgotten once its
//! reply is out; until then it is "in flight" and a cut tears it.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::os::unix::fs::FileExt;
use zfs_model::diskmodel::Nanos;

/// One write not yet durable.
#[derive(Debug)]
struct Record {
    offset: u64,
    len: u64,
    /// When the write completes (its reply is sent).
    done: Nanos,
    /// The model called it durable; it stays only while in flight.
    durable: bool,
    /// The backing file's content before the write, as (offset, bytes) pieces
    /// still to restore: a newer write that became durable cuts its range out.
    pieces: Vec<(u64, Vec<u8>)>,
}

impl Record {
    fn bytes(&self) -> u64 {
        self.pieces.iter().map(|(_, b)| b.len() as u64).sum()
    }
}

/// What one power cut did to one disk.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CutLoss {
    /// Acknowledged (or in flight on a volatile cache) writes reverted whole.
    pub lost_writes: u64,
    pub lost_bytes: u64,
    /// Writes in flight that kept only some of their sectors.
    pub torn_writes: u64,
    /// Bytes of torn writes that were reverted.
    pub torn_bytes_lost: u64,
}

/// The undo records of one disk.
#[derive(Debug, Default)]
pub(crate) struct UndoLog {
    /// By write id: ids grow with submission order, so this is oldest first.
    records: BTreeMap<u64, Record>,
    /// (offset, id) of every record, to find the older records a range
    /// overlaps without walking them all.
    by_offset: BTreeSet<(u64, u64)>,
    /// Longest record so far: how far before a range an overlapping record
    /// can start.
    max_len: u64,
    /// Durable records whose reply is still held: (done, id).
    in_flight: BTreeSet<(Nanos, u64)>,
    bytes: u64,
    /// Most bytes to hold (0: no bound; only writes in flight are kept).
    limit: u64,
    /// Writes made durable early because the records reached `limit`.
    pub bound_destaged: u64,
}

impl UndoLog {
    /// `limit`: the model's volatile cache size. When the records exceed it
    /// the oldest count as destaged, which is what a full cache does; it also
    /// bounds the memory a disk holds for its records.
    pub fn new(limit: u64) -> UndoLog {
        UndoLog {
            limit,
            ..UndoLog::default()
        }
    }

    /// Bytes of previous content held (at most what a cut now restores).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.records.len()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Keep the previous content of `len` bytes at `offset`, before write
    /// `id` (the model's number for it) changes them; it completes at `done`.
    pub fn save(
        &mut self,
        backing: &File,
        id: u64,
        offset: u64,
        len: u64,
        done: Nanos,
    ) -> std::io::Result<()> {
        let n =
            usize::try_from(len).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        let mut old = vec![0u8; n];
        let mut got = 0usize;
        while got < n {
            match backing.read_at(&mut old[got..], offset + got as u64) {
                // Past the end of the backing file: zeros, as a sparse
                // file reads.
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.records.insert(
            id,
            Record {
                offset,
                len,
                done,
                durable: false,
                pieces: vec![(offset, old)],
            },
        );
        self.by_offset.insert((offset, id));
        self.max_len = self.max_len.max(len);
        self.bytes += len;
        if self.limit > 0 {
            while self.bytes > self.limit {
                let Some(oldest) = self.records.keys().next().copied() else {
                    break;
                };
                if oldest == id {
                    break;
                }
                self.retire(oldest);
                self.bound_destaged += 1;
            }
        }
        Ok(())
    }

    /// The model says these writes are durable. Each is forgotten once its
    /// reply is out (`done <= now`); until then it is in flight.
    pub(crate) fn durable(&mut self, ids: &[u64], now: Nanos) {
        for id in ids {
            let Some(r) = self.records.get_mut(id) else {
                continue;
            };
            if r.done <= now {
                self.retire(*id);
            } else if !r.durable {
                r.durable = true;
                self.in_flight.insert((r.done, *id));
            }
        }
    }

    /// Forget the durable records whose replies are out by `now`.
    pub(crate) fn settle(&mut self, now: Nanos) {
        while let Some(&(done, id)) = self.in_flight.first() {
            if done > now {
                break;
            }
            self.in_flight.pop_first();
            self.retire(id);
        }
    }

    /// Drop record `id`: its data is on the medium. Older records must not
    /// restore over it, so its range is cut out of theirs.
    fn retire(&mut self, id: u64) {
        let Some(r) = self.records.remove(&id) else {
            return;
        };
        self.by_offset.remove(&(r.offset, id));
        self.in_flight.remove(&(r.done, id));
        self.bytes -= r.bytes();
        let (start, end) = (r.offset, r.offset + r.len);
        let older: Vec<u64> = self
            .by_offset
            .range((start.saturating_sub(self.max_len), 0)..(end, 0))
            .filter(|(_, other)| *other < id)
            .map(|(_, other)| *other)
            .collect();
        for other in older {
            let emptied = {
                let o = self.records.get_mut(&other).expect("indexed record exists");
                let before = o.bytes();
                o.pieces = cut_out(std::mem::take(&mut o.pieces), start, end);
                self.bytes -= before - o.bytes();
                o.pieces.is_empty()
            };
            if emptied {
                let o = self.records.remove(&other).expect("indexed record exists");
                self.by_offset.remove(&(o.offset, other));
                self.in_flight.remove(&(o.done, other));
            }
        }
    }

    /// The power fails at `now`. Durable writes whose replies are out stay;
    /// every other write is reverted, newest first: a write the model did
    /// not call durable whole (it was in the volatile cache), a durable one
    /// still in flight except for the byte ranges `tear(offset, len)` says
    /// reached the medium (relative to the write's start). Afterwards nothing is
    /// volatile.
    pub fn cut(
        &mut self,
        backing: &File,
        now: Nanos,
        mut tear: impl FnMut(u64, u64) -> Vec<(u64, u64)>,
    ) -> std::io::Result<CutLoss> {
        self.settle(now);
        let mut loss = CutLoss::default();
        let records = std::mem::take(&mut self.records);
        for r in records.into_values().rev() {
            let restore: Vec<(u64, &[u8])> = if r.durable {
                let kept: Vec<(u64, u64)> = tear(r.offset, r.len)
                    .into_iter()
                    .map(|(s, e)| (r.offset + s, r.offset + e))
                    .collect();
                let mut out = Vec::new();
                for (off, data) in &r.pieces {
                    for (s, e) in subtract(*off, *off + data.len() as u64, &kept) {
                        let from = usize::try_from(s - off).expect("within a piece");
                        let to = usize::try_from(e - off).expect("within a piece");
                        out.push((s, &data[from..to]));
                    }
                }
                loss.torn_writes += 1;
                loss.torn_bytes_lost += out.iter().map(|(_, d)| d.len() as u64).sum::<u64>();
                out
            } else {
                loss.lost_writes += 1;
                loss.lost_bytes += r.bytes();
                r.pieces.iter().map(|(o, d)| (*o, d.as_slice())).collect()
            };
            for (off, data) in restore {
                backing.write_all_at(data, off)?;
            }
        }
        self.by_offset.clear();
        self.in_flight.clear();
        self.bytes = 0;
        Ok(loss)
    }
}

/// `pieces` without the byte range `[start, end)`.
fn cut_out(pieces: Vec<(u64, Vec<u8>)>, start: u64, end: u64) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    for (off, data) in pieces {
        let piece_end = off + data.len() as u64;
        if piece_end <= start || off >= end {
            out.push((off, data));
            continue;
        }
        if off < start {
            let n = usize::try_from(start - off).expect("within a piece");
            out.push((off, data[..n].to_vec()));
        }
        if piece_end > end {
            let n = usize::try_from(end - off).expect("within a piece");
            out.push((end, data[n..].to_vec()));
        }
    }
    out
}

/// The parts of `[start, end)` outside every range of `kept` (sorted,
/// disjoint).
fn subtract(start: u64, end: u64, kept: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = start;
    for &(s, e) in kept {
        if e <= at || s >= end {
            continue;
        }
        if s > at {
            out.push((at, s));
        }
        at = at.max(e);
    }
    if at < end {
        out.push((at, end));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(content: &[u8]) -> (tempfile::NamedTempFile, File) {
        let t = tempfile::NamedTempFile::new().unwrap();
        let f = t.reopen().unwrap();
        f.write_all_at(content, 0).unwrap();
        (t, f)
    }

    fn content(f: &File, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        f.read_exact_at(&mut b, 0).unwrap();
        b
    }

    /// Save, then write, as the disk file system does.
    fn write(u: &mut UndoLog, f: &File, id: u64, off: u64, data: &[u8], done: Nanos) {
        u.save(f, id, off, data.len() as u64, done).unwrap();
        f.write_all_at(data, off).unwrap();
    }

    fn never_tear(_: u64, _: u64) -> Vec<(u64, u64)> {
        panic!("nothing is in flight")
    }

    #[test]
    fn a_cut_reverts_volatile_writes_newest_first() {
        let (_t, f) = disk(b"aaaaaaaa");
        let mut u = UndoLog::new(1 << 20);
        write(&mut u, &f, 1, 0, b"bbbb", 1);
        write(&mut u, &f, 2, 2, b"cccc", 2);
        write(&mut u, &f, 3, 0, b"dd", 3);
        assert_eq!(content(&f, 8), b"ddccccaa");
        assert_eq!(u.bytes(), 10);
        let loss = u.cut(&f, 10, never_tear).unwrap();
        assert_eq!(content(&f, 8), b"aaaaaaaa");
        assert_eq!(
            loss,
            CutLoss {
                lost_writes: 3,
                lost_bytes: 10,
                ..CutLoss::default()
            }
        );
        assert!(u.is_empty());
        assert_eq!(u.bytes(), 0);
    }

    #[test]
    fn durable_writes_survive_and_older_records_do_not_restore_over_them() {
        let (_t, f) = disk(b"aaaaaaaa");
        let mut u = UndoLog::new(1 << 20);
        write(&mut u, &f, 1, 0, b"bbbbbb", 1);
        write(&mut u, &f, 2, 2, b"cc", 2);
        write(&mut u, &f, 3, 6, b"dd", 3);
        // The newer write 2 reached the medium, the older 1 did not (a
        // model that destages out of order): 1 loses only what 2 did not
        // overwrite.
        u.durable(&[2], 5);
        assert_eq!(u.len(), 2);
        let loss = u.cut(&f, 10, never_tear).unwrap();
        assert_eq!(content(&f, 8), b"aaccaaaa");
        assert_eq!(loss.lost_writes, 2);
        assert_eq!(loss.lost_bytes, 4 + 2);
    }

    #[test]
    fn a_record_fully_covered_by_a_durable_newer_write_is_dropped() {
        let (_t, f) = disk(b"aaaa");
        let mut u = UndoLog::new(1 << 20);
        write(&mut u, &f, 1, 1, b"bb", 1);
        write(&mut u, &f, 2, 0, b"cccc", 2);
        u.durable(&[2], 5);
        assert!(u.is_empty());
        assert_eq!(u.bytes(), 0);
        u.cut(&f, 10, never_tear).unwrap();
        assert_eq!(content(&f, 4), b"cccc");
    }

    #[test]
    fn durable_writes_in_flight_are_torn() {
        let (_t, f) = disk(&[b'a'; 12]);
        let mut u = UndoLog::new(0);
        write(&mut u, &f, 1, 0, &[b'b'; 12], 100);
        // Durable at once (no volatile cache), but the reply is held until 100.
        u.durable(&[1], 5);
        assert_eq!(u.len(), 1);
        let mut asked = Vec::new();
        let loss = u
            .cut(&f, 50, |off, len| {
                asked.push((off, len));
                vec![(0, 4), (8, 10)]
            })
            .unwrap();
        assert_eq!(asked, vec![(0, 12)]);
        assert_eq!(content(&f, 12), b"bbbbaaaabbaa");
        assert_eq!(
            loss,
            CutLoss {
                torn_writes: 1,
                torn_bytes_lost: 6,
                ..CutLoss::default()
            }
        );
    }

    #[test]
    fn replies_out_make_durable_records_go() {
        let (_t, f) = disk(b"aaaa");
        let mut u = UndoLog::new(0);
        write(&mut u, &f, 1, 0, b"bb", 10);
        write(&mut u, &f, 2, 2, b"cc", 20);
        u.durable(&[1, 2], 5);
        u.settle(15);
        assert_eq!(u.len(), 1, "write 1 is acknowledged and durable");
        u.settle(20);
        assert!(u.is_empty());
        u.cut(&f, 30, never_tear).unwrap();
        assert_eq!(content(&f, 4), b"bbcc");
    }

    #[test]
    fn the_cache_bound_destages_the_oldest() {
        let (_t, f) = disk(&[b'a'; 16]);
        let mut u = UndoLog::new(8);
        for i in 0..4u64 {
            write(&mut u, &f, i + 1, i * 4, &[b'b'; 4], 1);
        }
        assert_eq!(u.bytes(), 8);
        assert_eq!(u.bound_destaged, 2);
        u.cut(&f, 10, never_tear).unwrap();
        assert_eq!(content(&f, 16), b"bbbbbbbbaaaaaaaa");
    }

    #[test]
    fn saving_past_the_end_of_a_sparse_file_keeps_zeros() {
        let (_t, f) = disk(b"ab");
        let mut u = UndoLog::new(1 << 20);
        write(&mut u, &f, 1, 0, b"xyzw", 1);
        u.cut(&f, 2, never_tear).unwrap();
        assert_eq!(content(&f, 4), b"ab\0\0");
    }

    #[test]
    fn subtract_and_cut_out() {
        assert_eq!(subtract(0, 10, &[(2, 4), (6, 12)]), vec![(0, 2), (4, 6)]);
        assert_eq!(subtract(5, 8, &[]), vec![(5, 8)]);
        assert!(subtract(5, 8, &[(0, 10)]).is_empty());
        let p = cut_out(vec![(0, b"abcdef".to_vec())], 2, 4);
        assert_eq!(p, vec![(0, b"ab".to_vec()), (4, b"ef".to_vec())]);
        assert_eq!(
            cut_out(vec![(0, b"ab".to_vec())], 2, 4),
            vec![(0, b"ab".to_vec())]
        );
    }
}
