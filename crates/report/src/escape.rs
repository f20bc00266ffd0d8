//! Text from result files in each output format.
//!
//! A result file is untrusted input: stores are shared, and results travel as
//! ticket attachments. Labels, run ids (file names), latency operation names,
//! warnings, host names, mount points: every string that did not come from
//! tankbench's own code goes through the function for the format it is written
//! in, so that it shows as the same text and never becomes markup, a formula or
//! a terminal control sequence.

/// Whether `c` may appear in an XML 1.0 document (the `Char` production of the
/// XML 1.0 specification, section 2.2), minus DEL and the C1 controls, which are
/// allowed but invisible.
fn is_displayable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || (!c.is_control() && !matches!(c, '\u{FFFE}' | '\u{FFFF}'))
}

/// Text for HTML and XML (SVG): element content and quoted attribute values.
///
/// Besides the five markup characters, characters that XML forbids (NUL and the
/// other C0 controls) become U+FFFD: one of them would make a standalone SVG
/// chart not well-formed, so neither browsers nor resvg would draw it.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if is_displayable(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// A fragment for an HTML `id` (or a part of one): only `[A-Za-z0-9-]` stay as
/// they are; every other byte of the UTF-8 text becomes `_XX` (hex). Safe in any
/// attribute, valid in a URL fragment and CSS selector, and one-to-one, so two
/// different operation names never share an id.
pub fn html_id(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' {
            out.push(b as char);
        } else {
            out.push_str(&format!("_{b:02X}"));
        }
    }
    out
}

/// Text for one line of GitHub-flavoured Markdown (a table cell or a
/// paragraph). The ASCII punctuation that has a meaning inside a line is
/// backslash-escaped (CommonMark 0.30, section 2.4: any ASCII punctuation may
/// be), so `|` cannot split a cell, `<` cannot open HTML, `&` cannot start an
/// entity, backticks, `*`, `_`, `~`, `[` cannot format or link, and `@`/`#`
/// cannot mention a person or an issue on GitHub. `-` and `+` (and a digit run
/// with `.`) are escaped only at the start, where they would begin a list.
/// Line breaks and other controls become spaces: a newline would end the row.
pub fn markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '!' | '~' | '&' | '@' => {
                out.push('\\');
                out.push(c);
            }
            '-' | '+' if out.is_empty() => {
                out.push('\\');
                out.push(c);
            }
            '.' | ')' if !out.is_empty() && out.bytes().all(|b| b.is_ascii_digit()) => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A text field of an RFC 4180 CSV file, quoted and never read as a
/// spreadsheet formula. It lives in fileio, whose `--csv` rows use it too, so
/// the workspace has one CSV escaper.
pub use fileio::export::csv::csv_text;

/// The most characters of one field (or one line) [`terminal`] prints: a
/// result file can hold a 50 MiB host name, and a report shows a name, not
/// a file.
pub const TERMINAL_MAX_CHARS: usize = 4096;

/// Text for a terminal: control characters (ESC above all, which starts the
/// sequences that move the cursor, retitle the window or rewrite the screen;
/// CR and LF, which forge a line) become U+FFFD, so printing a result cannot
/// drive the terminal; past [`TERMINAL_MAX_CHARS`] the text is cut, and an
/// ellipsis says so.
pub fn terminal(s: &str) -> String {
    terminal_within(s, TERMINAL_MAX_CHARS)
}

/// The most characters of a name [`terminal_field`] prints inside a line
/// (a host name is at most 64 on Linux, a file name 255 bytes).
pub const TERMINAL_FIELD_MAX_CHARS: usize = 256;

/// A name read from a file, for a line of a terminal report: as
/// [`terminal`], cut at [`TERMINAL_FIELD_MAX_CHARS`] so that the rest of
/// the line still shows.
pub fn terminal_field(s: &str) -> String {
    terminal_within(s, TERMINAL_FIELD_MAX_CHARS)
}

fn terminal_within(s: &str, max_chars: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max_chars)
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect();
    if s.chars().nth(max_chars).is_some() {
        out.push('…');
    }
    out
}

/// Several lines for a terminal (a report holding names read from files):
/// each line as [`terminal`] makes it, the line breaks kept.
pub fn terminal_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        out.push_str(&terminal(body));
        out.push_str(end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_text_cannot_forge_a_line_and_is_bounded() {
        let forged = terminal("host\u{1b}]0;title\u{7}\r\nFAKE LINE: PASSED");
        assert!(!forged.chars().any(char::is_control), "{forged:?}");
        let huge = "h".repeat(TERMINAL_MAX_CHARS * 3);
        assert_eq!(terminal(&huge).chars().count(), TERMINAL_MAX_CHARS + 1);
        assert_eq!(
            terminal_field(&huge).chars().count(),
            TERMINAL_FIELD_MAX_CHARS + 1
        );
        assert_eq!(terminal("µs – ok"), "µs – ok");
        assert_eq!(
            terminal_lines("a\u{1b}[2J\nb\r\n"),
            "a\u{FFFD}[2J\nb\u{FFFD}\n"
        );
    }

    #[test]
    fn html_escapes_markup_and_replaces_what_xml_forbids() {
        assert_eq!(
            html(r#"<meta http-equiv="refresh">&'"#),
            "&lt;meta http-equiv=&quot;refresh&quot;&gt;&amp;&#39;"
        );
        assert_eq!(html("a\u{0}b\u{1b}c\td"), "a\u{FFFD}b\u{FFFD}c\td");
        assert_eq!(html("µs – ok"), "µs – ok");
    }

    #[test]
    fn ids_keep_a_safe_charset_and_stay_distinct() {
        assert_eq!(html_id("event"), "event");
        assert_eq!(html_id("fsync-2"), "fsync-2");
        let evil = html_id("x\"><meta http-equiv=refresh>");
        assert!(
            evil.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{evil}"
        );
        assert_ne!(html_id("a b"), html_id("a_b"));
        assert_ne!(html_id("a_20b"), html_id("a b"));
    }

    #[test]
    fn markdown_cannot_break_out_of_a_cell() {
        let md = markdown("a|b<img src=x>`code`\n[link](http://x) *b* _i_ ~s~");
        assert!(!md.contains('\n'));
        for raw in ["|", "<", "`", "[", "*", "_", "~"] {
            // Every occurrence is escaped.
            let unescaped = md
                .match_indices(raw)
                .any(|(i, _)| i == 0 || !md[..i].ends_with('\\'));
            assert!(!unescaped, "{raw} in {md}");
        }
        assert_eq!(markdown("2xraidz2"), "2xraidz2");
        assert_eq!(markdown("- item"), "\\- item");
        assert_eq!(markdown("10. item"), "10\\. item");
        assert_eq!(markdown("a-b 1.5"), "a-b 1.5");
    }

    #[test]
    fn terminal_text_has_no_escape_sequences() {
        assert_eq!(
            terminal("a\u{1b}]0;pwned\u{7}b"),
            "a\u{FFFD}]0;pwned\u{FFFD}b"
        );
        assert_eq!(terminal("2xraidz2 µs"), "2xraidz2 µs");
    }
}
