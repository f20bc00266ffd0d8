//! `--intervals=FILE`: one JSON object per line per report interval, written
//! while the run goes on (JSON Lines), so a reader can follow the run line by
//! line.
//!
//! Each line is written with one write(2) as the interval ends: a reader
//! that sees a line break has the whole object before it. The file is created
//! new (never an existing one: a stream a reader may be tailing is not
//! replaced under it); with `--repeat` every run writes into it, and `run`
//! tells them apart.

use crate::result::Rates;
use crate::run::runner::IntervalStats;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One line of the file. Rates are over `seconds`, the interval that ends at
/// `elapsed_s`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct IntervalLine {
    /// Which run of the invocation: 1, or 1 to N with `--repeat=N`.
    pub run: u32,
    /// Seconds from the start of the run to the end of the interval.
    pub elapsed_s: f64,
    /// Length of the interval, seconds.
    pub seconds: f64,
    pub events_per_s: f64,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub fsyncs_per_s: f64,
    /// MiB = 2^20 bytes.
    pub read_mib_per_s: f64,
    pub written_mib_per_s: f64,
    /// sysbench's `--percentile` (95 unless given); 0 when disabled.
    pub latency_percentile: u32,
    /// The interval's event latency at `latency_percentile`, ms, as sysbench's
    /// interval line shows it; null with `--percentile=0`.
    pub latency_ms: Option<f64>,
}

impl IntervalLine {
    /// The line of one interval of run number `run`.
    pub(crate) fn of(run: u32, i: &IntervalStats) -> IntervalLine {
        let counts = i.delta.as_counts();
        let rates = Rates::of(&counts, i.seconds);
        let events_per_s = if i.seconds > 0.0 {
            counts.events as f64 / i.seconds
        } else {
            0.0
        };
        IntervalLine {
            run,
            elapsed_s: i.elapsed_s,
            seconds: i.seconds,
            events_per_s,
            reads_per_s: rates.reads_per_s,
            writes_per_s: rates.writes_per_s,
            fsyncs_per_s: rates.fsyncs_per_s,
            read_mib_per_s: rates.read_mib_per_s,
            written_mib_per_s: rates.written_mib_per_s,
            latency_percentile: i.percentile,
            latency_ms: (i.percentile > 0).then_some(i.latency_ms),
        }
    }
}

/// The open `--intervals` file of one invocation.
pub struct IntervalStream {
    path: PathBuf,
    state: Mutex<State>,
}

struct State {
    /// None once a write failed: the rest of the run writes nothing more.
    file: Option<File>,
    lines: u64,
    /// The first write error, as one line.
    error: Option<String>,
}

impl IntervalStream {
    /// Create `path` as a new file; an existing one (even a dangling symbolic
    /// link) is refused: the one line says why, without the option's name.
    pub fn create(path: &Path) -> Result<IntervalStream, String> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => "refusing to overwrite an existing file (the \
                     intervals are written only to a new file; choose another name or move the \
                     file away)"
                    .to_string(),
                _ => e.to_string(),
            })?;
        Ok(IntervalStream {
            path: path.to_path_buf(),
            state: Mutex::new(State {
                file: Some(file),
                lines: 0,
                error: None,
            }),
        })
    }

    /// Write one interval of run `run` as a line. A failed write ends the
    /// stream (a half-written line must not be followed by more) and is kept
    /// for [`IntervalStream::error`]; the run itself goes on.
    pub(crate) fn write(&self, run: u32, sample: &IntervalStats) {
        let mut line =
            serde_json::to_string(&IntervalLine::of(run, sample)).expect("a line serializes");
        line.push('\n');
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(file) = state.file.as_mut() else {
            return;
        };
        match file.write_all(line.as_bytes()) {
            Ok(()) => state.lines += 1,
            Err(e) => {
                state.file = None;
                state.error = Some(e.to_string());
            }
        }
    }

    /// The first write error, if one ended the stream.
    pub fn error(&self) -> Option<String> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .error
            .clone()
    }

    /// Close the file, flushed to the device; when `failed` (the invocation
    /// fails) and no line was written, remove it again, so a run refused
    /// before its first interval leaves nothing behind.
    pub fn finish(&self, failed: bool) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(file) = state.file.take() {
            let _ = file.sync_data();
        }
        if failed && state.lines == 0 {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
// Exact comparisons: ratios of small integers that binary floating point holds exactly.
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::result::Counts;
    use crate::run::histograms::CountSnapshot;

    fn sample(percentile: u32) -> IntervalStats {
        IntervalStats {
            elapsed_s: 2.0,
            seconds: 0.5,
            delta: CountSnapshot {
                counts: Counts {
                    events: 30,
                    reads: 10,
                    writes: 20,
                    fsyncs: 5,
                    bytes_read: 1 << 20,
                    bytes_written: 2 << 20,
                },
                latency_sum_ns: 0,
            },
            latency_ms: 1.5,
            percentile,
        }
    }

    #[test]
    fn a_line_holds_the_rates_of_its_interval() {
        let l = IntervalLine::of(2, &sample(95));
        assert_eq!((l.run, l.elapsed_s, l.seconds), (2, 2.0, 0.5));
        assert_eq!(
            (
                l.events_per_s,
                l.reads_per_s,
                l.writes_per_s,
                l.fsyncs_per_s
            ),
            (60.0, 20.0, 40.0, 10.0)
        );
        assert_eq!((l.read_mib_per_s, l.written_mib_per_s), (2.0, 4.0));
        assert_eq!((l.latency_percentile, l.latency_ms), (95, Some(1.5)));
        assert_eq!(IntervalLine::of(1, &sample(0)).latency_ms, None);
    }

    #[test]
    fn the_stream_is_a_new_file_of_whole_lines() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("iv.jsonl");
        let s = IntervalStream::create(&p).unwrap();
        s.write(1, &sample(95));
        s.write(1, &sample(95));
        s.finish(true);
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.ends_with('\n'));
        for line in text.lines() {
            let back: IntervalLine = serde_json::from_str(line).unwrap();
            assert_eq!(back, IntervalLine::of(1, &sample(95)));
        }
        // An existing file is refused and kept.
        assert!(IntervalStream::create(&p)
            .err()
            .unwrap()
            .contains("refusing to overwrite"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
        // A failed invocation that wrote no line leaves no file.
        let q = d.path().join("none.jsonl");
        IntervalStream::create(&q).unwrap().finish(true);
        assert!(!q.exists());
        IntervalStream::create(&q).unwrap().finish(false);
        assert!(
            q.exists(),
            "a run without intervals still leaves its (empty) file"
        );
    }
}
