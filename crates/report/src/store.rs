//! The result store: one directory of `RunResult` JSON files, one file per run.
//!
//! File names are `<UTC start>-<seq>-<labels>.json`, e.g.
//! `20261130T233303Z-001-layout-2xraidz2_slog-yes.json`: they sort by start time
//! (then by the sequence number that separates repeats started in the same
//! second), and a person can tell the runs apart in `ls`. A file is created with
//! `create_new`, so saving never replaces anything already in the directory.

use crate::error::{io, Error, Result};
use crate::labels::Labels;
use fileio::result::{RunResult, SCHEMA_VERSION};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where runs go when `--save` is given without a directory.
pub const DEFAULT_DIR: &str = "tankbench-results";

/// A run read back from disk.
#[derive(Debug, Clone)]
pub struct StoredRun {
    pub path: PathBuf,
    /// The file name without `.json`: short, unique within a directory, and what
    /// `tankbench compare` accepts as a run id.
    pub id: String,
    pub result: RunResult,
}

/// A `.json` file in a store directory that is not a result we can read. Listing
/// goes on past it (a store may hold other JSON), but says why it was left out.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Sorted by path, which is start-time order for files the store named.
    pub runs: Vec<StoredRun>,
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone)]
pub struct ResultStore {
    dir: PathBuf,
}

impl ResultStore {
    /// A store rooted at `dir`. The directory need not exist yet (the first
    /// [`save`](Self::save) creates it), but if the path exists it must be a
    /// directory.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self> {
        let dir = dir.into();
        if dir.exists() && !dir.is_dir() {
            return Err(Error::Io {
                path: dir,
                source: std::io::Error::other("exists and is not a directory"),
            });
        }
        Ok(ResultStore { dir })
    }

    /// The store at [`DEFAULT_DIR`] in the current directory.
    pub fn open_default() -> Result<Self> {
        Self::open(DEFAULT_DIR)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Write `run` as a new file and return its path. Never overwrites: if the
    /// chosen name is taken (a concurrent save), the next sequence number is tried.
    pub fn save(&self, run: &RunResult) -> Result<PathBuf> {
        fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let stamp = compact_timestamp(&run.started_at).unwrap_or_else(|| {
            // A result without a usable start time still gets a sortable name.
            compact_timestamp(&utc_now_rfc3339()).expect("own timestamp format")
        });
        let slug = label_slug(&run.labels);
        let json = serde_json::to_vec_pretty(run).map_err(|e| Error::Render(e.to_string()))?;
        let mut seq = self.next_seq(&stamp)?;
        loop {
            let name = if slug.is_empty() {
                format!("{stamp}-{seq:03}.json")
            } else {
                format!("{stamp}-{seq:03}-{slug}.json")
            };
            let path = self.dir.join(name);
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    f.write_all(&json)
                        .and_then(|_| f.write_all(b"\n"))
                        .and_then(|_| f.sync_all())
                        .map_err(io(&path))?;
                    return Ok(path);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && seq < 99_999 => {
                    seq += 1;
                }
                Err(e) => return Err(io(&path)(e)),
            }
        }
    }

    /// One more than the highest sequence number used with this time stamp.
    fn next_seq(&self, stamp: &str) -> Result<u32> {
        let prefix = format!("{stamp}-");
        let mut max = 0;
        for entry in fs::read_dir(&self.dir).map_err(io(&self.dir))? {
            let name = entry.map_err(io(&self.dir))?.file_name();
            let name = name.to_string_lossy();
            if let Some(rest) = name.strip_prefix(&prefix) {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(n) = digits.parse::<u32>() {
                    max = max.max(n);
                }
            }
        }
        Ok(max + 1)
    }

    /// Every run in the store (subdirectories included, as the lab writes one per
    /// matrix). A store directory that does not exist yet lists as empty.
    pub fn list(&self) -> Result<Listing> {
        if !self.dir.exists() {
            return Ok(Listing::default());
        }
        load_dir(&self.dir)
    }
}

/// Read one result file.
pub fn load_file(path: &Path) -> Result<StoredRun> {
    let bytes = fs::read(path).map_err(io(path))?;
    // Check the version before the full parse, so a newer file says "upgrade"
    // rather than failing on whichever field changed.
    #[derive(serde::Deserialize)]
    struct Version {
        schema_version: u32,
    }
    let version: Version = serde_json::from_slice(&bytes).map_err(|source| Error::Parse {
        path: path.to_path_buf(),
        source,
    })?;
    if version.schema_version > SCHEMA_VERSION {
        return Err(Error::Schema {
            path: path.to_path_buf(),
            found: version.schema_version,
            supported: SCHEMA_VERSION,
        });
    }
    let result: RunResult = serde_json::from_slice(&bytes).map_err(|source| Error::Parse {
        path: path.to_path_buf(),
        source,
    })?;
    let id = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(StoredRun {
        path: path.to_path_buf(),
        id,
        result,
    })
}

/// Read every `*.json` result under `dir`, recursively, skipping hidden entries.
pub fn load_dir(dir: &Path) -> Result<Listing> {
    let mut files = Vec::new();
    collect_json(dir, &mut files)?;
    files.sort();
    let mut listing = Listing::default();
    for path in files {
        match load_file(&path) {
            Ok(run) => listing.runs.push(run),
            Err(e @ (Error::Parse { .. } | Error::Schema { .. })) => {
                listing.skipped.push(Skipped {
                    path,
                    reason: e.to_string(),
                })
            }
            Err(e) => return Err(e),
        }
    }
    Ok(listing)
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let ty = entry.file_type().map_err(io(&path))?;
        if ty.is_dir() {
            collect_json(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

/// `2026-11-30T23:33:03Z` (any fraction or offset ignored) -> `20261130T233303Z`.
fn compact_timestamp(rfc3339: &str) -> Option<String> {
    let b = rfc3339.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let digits_at = |r: std::ops::Range<usize>| {
        let s = rfc3339.get(r)?;
        s.bytes().all(|c| c.is_ascii_digit()).then_some(s)
    };
    Some(format!(
        "{}{}{}T{}{}{}Z",
        digits_at(0..4)?,
        digits_at(5..7)?,
        digits_at(8..10)?,
        digits_at(11..13)?,
        digits_at(14..16)?,
        digits_at(17..19)?
    ))
}

/// Labels as a file-name part: `layout-2xraidz2_slog-yes`, only `[A-Za-z0-9.-]`
/// and `_`, at most 80 characters (the full labels are inside the file).
fn label_slug(labels: &Labels) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    };
    let mut slug = labels
        .iter()
        .map(|(k, v)| format!("{}-{}", clean(k), clean(v)))
        .collect::<Vec<_>>()
        .join("_");
    if slug.len() > 80 {
        slug.truncate(80);
    }
    slug.trim_end_matches(['-', '_']).to_string()
}

/// The current UTC time as RFC 3339 with whole seconds.
pub fn utc_now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// algorithm), so we need no date crate for one time stamp.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_compact_and_reject_garbage() {
        assert_eq!(
            compact_timestamp("2026-11-30T23:33:03Z").as_deref(),
            Some("20261130T233303Z")
        );
        assert_eq!(
            compact_timestamp("2026-11-30T23:33:03.123456Z").as_deref(),
            Some("20261130T233303Z")
        );
        assert_eq!(compact_timestamp("yesterday"), None);
        assert_eq!(compact_timestamp("2026-1x-30T23:33:03Z"), None);
        assert!(compact_timestamp(&utc_now_rfc3339()).is_some());
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
    }

    #[test]
    fn slugs_are_file_name_safe() {
        let l = crate::labels::parse_labels("layout=2x raidz2,link=10G/s").unwrap();
        assert_eq!(label_slug(&l), "layout-2x-raidz2_link-10G-s");
        assert_eq!(label_slug(&Labels::new()), "");
    }
}
