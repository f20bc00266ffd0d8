//! The result store: one directory of `RunResult` JSON files, one file per run.
//!
//! File names are `<UTC start>-<seq>-<labels>.json`, e.g.
//! `20261130T233303Z-001-layout-2xraidz2_slog-yes.json`: they sort by start time
//! (then by the sequence number that separates repeats started in the same
//! second), and a person can tell the runs apart in `ls`. A file is published
//! whole under a name that was free ([`crate::atomic`]), so saving never
//! replaces anything already in the directory and never leaves half a record.
//!
//! Reading treats the directory as untrusted: an entry that is not a regular
//! file (a FIFO, a device, a dangling symbolic link), an unreadable or oversized
//! file, or one that is not a result is skipped with its reason, and the other
//! runs are still listed.

use crate::atomic::{Existing, Staged};
use crate::error::{io, Error, Result};
use crate::labels::Labels;
use fileio::result::{RunResult, SCHEMA_VERSION};
use std::fs;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Result files larger than this are not read. A day of one-second interval
/// samples is about 20 MB; this bounds the memory one stray file can take.
pub const MAX_RESULT_BYTES: u64 = 256 << 20;

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

/// What [`ResultStore::save_once`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveOnce {
    /// Stored as a new file at this path.
    Saved(PathBuf),
    /// The same run is already stored, under this id.
    AlreadyStored(String),
}

/// The store name of an imported run: `<UTC start>-<tool>-<hash>`, where the
/// hash (SHA-256, 16 hex digits) covers what makes two imports the same run
/// (the tool, the start, the counts and the workload) and not the labels, so
/// one report imported twice with different labels still gets one name.
pub fn import_name(run: &RunResult) -> String {
    use sha2::{Digest as _, Sha256};
    let identity = serde_json::to_vec(&(&run.tool, &run.started_at, &run.counts, &run.workload))
        .unwrap_or_default();
    let digest = Sha256::digest(&identity);
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let stamp = compact_timestamp(&run.started_at).unwrap_or_else(|| "00000000T000000Z".into());
    let tool: String = run
        .tool
        .name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(20)
        .collect();
    format!("{stamp}-{tool}-{hash}")
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
    /// chosen name is taken (a concurrent save), the next sequence number is
    /// tried. The record appears whole or not at all (a full file system leaves
    /// nothing behind).
    pub fn save(&self, run: &RunResult) -> Result<PathBuf> {
        fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let stamp = compact_timestamp(&run.started_at).unwrap_or_else(|| {
            // A result without a usable start time still gets a sortable name.
            compact_timestamp(&fileio::clock::utc_now_rfc3339()).expect("own timestamp format")
        });
        let slug = label_slug(&run.labels);
        let mut json = serde_json::to_vec_pretty(run).map_err(|e| Error::Render(e.to_string()))?;
        json.push(b'\n');
        let mut seq = self.next_seq(&stamp)?;
        let name = |seq: u32| {
            self.dir.join(if slug.is_empty() {
                format!("{stamp}-{seq:03}.json")
            } else {
                format!("{stamp}-{seq:03}-{slug}.json")
            })
        };
        let mut staged = Staged::new(&name(seq), &json).map_err(io(name(seq)))?;
        loop {
            let path = name(seq);
            match staged.publish(&path, Existing::Keep) {
                Ok(()) => return Ok(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && seq < 99_999 => {
                    seq += 1;
                }
                Err(e) => return Err(io(&path)(e)),
            }
        }
    }

    /// Write an imported run under a name made from its content (see
    /// [`import_name`]), created only if free: of several imports of one
    /// report, even at the same moment, exactly one stores it and the others
    /// get [`SaveOnce::AlreadyStored`] with that record's id. The check and
    /// the creation are one step (rename without replace), so no listing
    /// taken before can race with another importer.
    pub fn save_once(&self, run: &RunResult) -> Result<SaveOnce> {
        fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let name = import_name(run);
        let path = self.dir.join(format!("{name}.json"));
        let mut json = serde_json::to_vec_pretty(run).map_err(|e| Error::Render(e.to_string()))?;
        json.push(b'\n');
        let mut staged = Staged::new(&path, &json).map_err(io(&path))?;
        match staged.publish(&path, Existing::Keep) {
            Ok(()) => Ok(SaveOnce::Saved(path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Ok(SaveOnce::AlreadyStored(name))
            }
            Err(e) => Err(io(&path)(e)),
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

/// What kind of file system object `t` (not a regular file, and with links
/// followed) is, for a message.
fn kind_name(t: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "an object of unknown type"
    }
}

/// The bytes of `path`, which must be a regular file (a symbolic link to one is
/// fine) of at most [`MAX_RESULT_BYTES`]. Anything else is refused before it is
/// opened: opening a FIFO for reading blocks until a writer comes, and opening
/// a device can have effects. The open itself is non-blocking and the type is
/// checked again on the open file, so a swap in between cannot make it hang.
pub fn read_regular_file(path: &Path) -> Result<Vec<u8>> {
    let refuse = |why: String| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(why),
    };
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(match fs::symlink_metadata(path) {
                Ok(l) if l.file_type().is_symlink() => {
                    refuse("a symbolic link to a file that does not exist (dangling link)".into())
                }
                _ => io(path)(e),
            });
        }
        Err(e) => return Err(io(path)(e)),
    };
    let check = |meta: &fs::Metadata| -> Result<()> {
        if !meta.file_type().is_file() {
            return Err(refuse(format!(
                "{}, not a regular file",
                kind_name(meta.file_type())
            )));
        }
        if meta.len() > MAX_RESULT_BYTES {
            return Err(refuse(format!(
                "{} bytes, larger than any result tankbench reads ({} MiB)",
                meta.len(),
                MAX_RESULT_BYTES >> 20
            )));
        }
        Ok(())
    };
    check(&meta)?;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(io(path))?;
    check(&file.metadata().map_err(io(path))?)?;
    let mut bytes = Vec::new();
    file.take(MAX_RESULT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io(path))?;
    if bytes.len() as u64 > MAX_RESULT_BYTES {
        return Err(refuse(format!(
            "larger than any result tankbench reads ({} MiB)",
            MAX_RESULT_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// `bytes` without a leading UTF-8 byte order mark, which some editors write
/// and JSON parsers refuse.
pub fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Read one result file.
pub fn load_file(path: &Path) -> Result<StoredRun> {
    let bytes = read_regular_file(path)?;
    let bytes = without_bom(&bytes);
    // Check the version before the full parse, so a newer file says "upgrade"
    // rather than failing on whichever field changed.
    #[derive(serde::Deserialize)]
    struct Version {
        schema_version: u32,
    }
    let version: Version = serde_json::from_slice(bytes).map_err(|source| Error::Parse {
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
    let result: RunResult = serde_json::from_slice(bytes).map_err(|source| Error::Parse {
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
///
/// Only `dir` itself must be readable. Each entry that cannot be read as a
/// result (not a regular file, a dangling link, unreadable, not a result, from
/// a newer tankbench, an unreadable subdirectory) is left out and listed in
/// [`Listing::skipped`] with the reason; the rest are still read. Symbolic links
/// to directories are not followed (no loops).
pub fn load_dir(dir: &Path) -> Result<Listing> {
    let mut files = Vec::new();
    let mut listing = Listing::default();
    for entry in fs::read_dir(dir).map_err(io(dir))? {
        collect_json(entry.map_err(io(dir)), &mut files, &mut listing.skipped);
    }
    files.sort();
    for path in files {
        match load_file(&path) {
            Ok(run) => listing.runs.push(run),
            Err(e) => listing.skipped.push(Skipped {
                path,
                reason: e.to_string(),
            }),
        }
    }
    listing.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(listing)
}

/// One directory entry: a `*.json` name goes to `out`, a subdirectory is
/// searched, and what cannot be read goes to `skipped`.
fn collect_json(entry: Result<fs::DirEntry>, out: &mut Vec<PathBuf>, skipped: &mut Vec<Skipped>) {
    let entry = match entry {
        Ok(e) => e,
        Err(e) => {
            let path = match &e {
                Error::Io { path, .. } => path.clone(),
                _ => PathBuf::new(),
            };
            skipped.push(Skipped {
                path,
                reason: e.to_string(),
            });
            return;
        }
    };
    if entry.file_name().as_encoded_bytes().starts_with(b".") {
        return;
    }
    let path = entry.path();
    // The entry's own type: a symbolic link is not followed here.
    let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
    if is_dir {
        match fs::read_dir(&path) {
            Ok(entries) => {
                for e in entries {
                    collect_json(e.map_err(io(&path)), out, skipped);
                }
            }
            Err(e) => skipped.push(Skipped {
                reason: io(&path)(e).to_string(),
                path,
            }),
        }
    } else if path.extension().is_some_and(|e| e == "json") {
        out.push(path);
    }
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

/// The current UTC time as RFC 3339 with whole seconds: fileio's clock, the
/// one home for a time stamp (kept under this name for the crates that still
/// call `report::store::utc_now_rfc3339`).
pub use fileio::clock::utc_now_rfc3339;

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
        assert!(compact_timestamp(&fileio::clock::utc_now_rfc3339()).is_some());
    }

    #[test]
    fn slugs_are_file_name_safe() {
        let l = crate::labels::parse_labels("layout=2x raidz2,link=10G/s").unwrap();
        assert_eq!(label_slug(&l), "layout-2x-raidz2_link-10G-s");
        assert_eq!(label_slug(&Labels::new()), "");
    }
}
