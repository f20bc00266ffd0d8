//! `tankbench results import`: runs made with other tools read into measured
//! [`RunResult`]s, with the workload they describe, so that the store,
//! `compare` and `simulate calibrate` treat them like tankbench's own.
//!
//! Two formats are read (docs/report.md, "Importing runs from fio and
//! sysbench", has the mapping table):
//! - [`fio`]: `fio --output-format=json` (or `json+`), one result per
//!   reporting group;
//! - [`sysbench_text`]: the report of `sysbench fileio ... run` (1.0.x).
//!
//! A file is refused whole when any part of it cannot be mapped: an import
//! never stores a result that describes a different workload than the one
//! that ran.

pub mod fio;
pub mod sysbench_text;

use crate::store::{read_regular_file, without_bom};
use fileio::result::RunResult;
use fileio::workload::WorkloadError;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What is accepted, for messages.
pub const ACCEPTED: &str =
    "fio JSON (fio --output-format=json or json+) or a sysbench 1.0 fileio run report";

/// The report formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    FioJson,
    SysbenchText,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::FioJson => "fio JSON",
            Format::SysbenchText => "sysbench fileio report",
        }
    }
}

/// Why a report was not imported. Every variant names the file; fio
/// refusals also name the job and the field.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read; the source names it.
    #[error("{source}")]
    Read {
        path: PathBuf,
        #[source]
        source: Box<crate::Error>,
    },

    /// Neither format: `seen` says what the file looked like.
    #[error("{path}: not a report tankbench imports ({seen}); accepted: {ACCEPTED}", path = path.display())]
    UnknownFormat { path: PathBuf, seen: String },

    /// The fio document lacks something every fio JSON report has (a
    /// truncated or edited file).
    #[error("{path}: fio JSON: {what}", path = path.display())]
    FioMalformed { path: PathBuf, what: String },

    /// A fio job setting that has no fileio equivalent.
    #[error(transparent)]
    FioUnsupported(Box<FioUnsupported>),

    /// Two jobs of one reporting group ran different workloads at the same
    /// time: no single fileio workload describes them.
    #[error(transparent)]
    FioJobsDiffer(Box<FioJobsDiffer>),

    /// The sysbench report lacks a line or has one it cannot read.
    #[error("{path}: sysbench report: {what}", path = path.display())]
    Sysbench { path: PathBuf, what: String },

    /// The mapped settings are not a workload fileio accepts.
    #[error("{path}: {origin}: the workload it describes is not a valid fileio run: {source}", path = path.display())]
    Workload {
        path: PathBuf,
        /// The job (fio) or "sysbench run".
        origin: String,
        #[source]
        source: Box<WorkloadError>,
    },
}

/// A fio job setting that has no fileio equivalent: the job, the field, its
/// value and what would be accepted.
#[derive(Debug, thiserror::Error)]
#[error("{path}: fio job '{job}': {field}={value} cannot be imported; accepted: {accepted}", path = path.display())]
pub struct FioUnsupported {
    pub path: PathBuf,
    pub job: String,
    pub field: String,
    pub value: String,
    pub accepted: String,
}

/// Two jobs of one reporting group that differ in `field`.
#[derive(Debug, thiserror::Error)]
#[error(
    "{path}: fio job '{job}': {field}={value} differs from job '{first}' ({field}={first_value}) \
     in the same reporting group; jobs that run together must describe one workload \
     (put them in separate groups with stonewall, or run them separately)",
    path = path.display()
)]
pub struct FioJobsDiffer {
    pub path: PathBuf,
    pub job: String,
    pub first: String,
    pub field: String,
    pub value: String,
    pub first_value: String,
}

impl ImportError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ImportError::Read { path, .. }
            | ImportError::UnknownFormat { path, .. }
            | ImportError::FioMalformed { path, .. }
            | ImportError::Sysbench { path, .. }
            | ImportError::Workload { path, .. } => path,
            ImportError::FioUnsupported(e) => &e.path,
            ImportError::FioJobsDiffer(e) => &e.path,
        }
    }
}

/// Which format `bytes` are in, or why neither.
pub fn detect(path: &Path, bytes: &[u8]) -> Result<Format, ImportError> {
    let unknown = |seen: &str| ImportError::UnknownFormat {
        path: path.to_path_buf(),
        seen: seen.to_string(),
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(unknown("not UTF-8 text"));
    };
    if fio::json_start(text).is_some() {
        return Ok(Format::FioJson);
    }
    if sysbench_text::is_sysbench(text) {
        return Ok(Format::SysbenchText);
    }
    if text.trim_start().starts_with('{') {
        if let Some(Err(why)) = fio::json_document(text) {
            return Err(unknown(&format!("JSON that does not parse: {why}")));
        }
        return Err(unknown("JSON without a \"fio version\""));
    }
    Err(unknown("neither JSON nor a sysbench report"))
}

/// The runs in one report. `modified` is when the file was last written; a
/// sysbench report records no time, so its run is dated by it.
pub fn parse_report(
    path: &Path,
    bytes: &[u8],
    modified: Option<SystemTime>,
) -> Result<Vec<RunResult>, ImportError> {
    // Editors on some systems start a UTF-8 file with a byte order mark.
    let bytes = without_bom(bytes);
    let format = detect(path, bytes)?;
    // `detect` checked that the bytes are text.
    let text = String::from_utf8_lossy(bytes);
    match format {
        Format::FioJson => fio::parse(path, &text),
        Format::SysbenchText => sysbench_text::parse(path, &text, modified).map(|r| vec![r]),
    }
}

/// Read and parse one report file (a regular file, read under the store's
/// size bound).
pub fn import_file(path: &Path) -> Result<Vec<RunResult>, ImportError> {
    let read_error = |e: crate::Error| ImportError::Read {
        path: path.to_path_buf(),
        source: Box::new(e),
    };
    let bytes = read_regular_file(path).map_err(read_error)?;
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    parse_report(path, &bytes, modified)
}

/// A size in bytes as fio and sysbench print it: a number with an optional
/// binary unit (`4k`, `8M`, `1.5GiB`, `512KiB`, `4096`). Units are powers of
/// 1024 (fio's default `kb_base=1024`, and sysbench's own).
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().ok()?;
    let unit = unit.to_ascii_lowercase();
    let unit = unit.strip_suffix('b').unwrap_or(&unit);
    let unit = unit.strip_suffix('i').unwrap_or(unit);
    let scale: u64 = match unit {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        "p" => 1 << 50,
        _ => return None,
    };
    let bytes = (value * scale as f64).round();
    // A size beyond u64 is no size.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (value.is_finite() && value >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_both_tools_spellings() {
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("4K"), Some(4096));
        assert_eq!(parse_size("8M"), Some(8 << 20));
        assert_eq!(parse_size("512KiB"), Some(512 << 10));
        assert_eq!(parse_size("1.5GiB"), Some(3 << 29));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("100B"), Some(100));
        assert_eq!(parse_size("4kb"), Some(4096));
        assert_eq!(parse_size("50%"), None);
        assert_eq!(parse_size("4x"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn foreign_files_are_named_and_refused() {
        let p = Path::new("x.txt");
        for (bytes, seen) in [
            (&b"{\"jobs\": []}"[..], "JSON without"),
            (b"hello", "neither JSON"),
            (b"\xff\xfe", "not UTF-8"),
        ] {
            let e = detect(p, bytes).unwrap_err();
            let msg = e.to_string();
            assert!(msg.starts_with("x.txt: "), "{msg}");
            assert!(msg.contains(seen) && msg.contains(ACCEPTED), "{msg}");
        }
    }
}
