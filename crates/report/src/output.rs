//! Writing `-o` files without ever replacing a file tankbench did not create.
//!
//! The rule: a new path is created (exclusively). An existing path is replaced
//! only if it is a regular file (not a symlink) that carries tankbench's
//! generator mark: `<meta name="generator" content="tankbench report">` in HTML,
//! the `<!-- generator: tankbench report -->` comment that starts our SVG and
//! Markdown, or the `Software: tankbench report` text chunk of our PNG. CSV has
//! nowhere to put a mark, so an existing CSV file is never replaced.
//!
//! Either way the file is written through [`crate::atomic`]: a temporary file
//! beside the target, flushed, then renamed into place, so a reader, a crash or
//! a full file system never leaves half a report under the target's name.

use crate::atomic::{write_atomically, Existing};
use crate::error::{io, Error, Result};
use crate::html::HTML_MARKER;
use crate::png::is_tankbench_png;
use crate::svg::SVG_MARKER;
use crate::table::MARKDOWN_MARKER;
use std::fs;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Whether the file at `path` was written by tankbench (by its generator mark).
pub fn is_tankbench_file(path: &Path) -> Result<bool> {
    let meta = fs::symlink_metadata(path).map_err(io(path))?;
    if !meta.file_type().is_file() {
        return Ok(false);
    }
    let mut head = Vec::with_capacity(8192);
    // Non-blocking: should the path be swapped for a FIFO after the check above,
    // reading it returns at once instead of waiting for a writer.
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(io(path))?
        .take(8192)
        .read_to_end(&mut head)
        .map_err(io(path))?;
    if is_tankbench_png(&head) {
        return Ok(true);
    }
    let text = String::from_utf8_lossy(&head);
    Ok(text.starts_with(SVG_MARKER)
        || text.starts_with(MARKDOWN_MARKER)
        || text.contains(HTML_MARKER))
}

/// Write `bytes` to `path` under the rule above.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    let refuse = |reason: &str| Error::WouldOverwrite {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return write_atomically(path, bytes, Existing::Keep).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    refuse("it appeared while the report was being written")
                } else {
                    io(path)(e)
                }
            });
        }
        Err(e) => return Err(io(path)(e)),
        Ok(_) => {}
    }
    if fs::symlink_metadata(path)
        .map_err(io(path))?
        .file_type()
        .is_symlink()
    {
        return Err(refuse("it is a symbolic link"));
    }
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
    {
        return Err(refuse(
            "CSV carries no tankbench mark, so an existing CSV file is never replaced",
        ));
    }
    if !is_tankbench_file(path)? {
        return Err(refuse("it exists and was not written by tankbench"));
    }
    write_atomically(path, bytes, Existing::Replace).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_and_replaces_only_own_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.html");
        let page = format!("<!DOCTYPE html><html><head>{HTML_MARKER}</head></html>");
        write_output(&p, page.as_bytes()).unwrap();
        write_output(&p, format!("{page}<!-- v2 -->").as_bytes()).unwrap();
        assert!(fs::read_to_string(&p).unwrap().ends_with("<!-- v2 -->"));

        let theirs = dir.path().join("notes.html");
        fs::write(&theirs, "<html>my notes</html>").unwrap();
        let e = write_output(&theirs, page.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("not written by tankbench"), "{e}");
        assert_eq!(
            fs::read_to_string(&theirs).unwrap(),
            "<html>my notes</html>"
        );

        let csv = dir.path().join("t.csv");
        write_output(&csv, b"a,b\r\n").unwrap();
        let e = write_output(&csv, b"a,b\r\n").unwrap_err().to_string();
        assert!(e.contains("CSV carries no tankbench mark"), "{e}");

        let svg = dir.path().join("c.svg");
        write_output(&svg, format!("{SVG_MARKER}\n<svg/>").as_bytes()).unwrap();
        write_output(&svg, format!("{SVG_MARKER}\n<svg></svg>").as_bytes()).unwrap();
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn refuses_symlinks_even_to_own_files() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.svg");
        fs::write(&target, format!("{SVG_MARKER}\n<svg/>")).unwrap();
        let link = dir.path().join("link.svg");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(write_output(&link, b"x").is_err());
    }
}
