//! Text that goes into one-line messages: the one home for making a value or
//! another error's text safe to show on a single line, and a number short.

use std::borrow::Cow;

/// A typed word as it may appear inside a one-line message: control characters
/// (a newline inside a quoted shell argument, say) are shown escaped, so the
/// message stays one line. sysbench prints them raw.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// A positional word in a message: [`printable`], and `''` for an empty word,
/// which would otherwise leave the message naming nothing.
pub fn printable_word(text: &str) -> Cow<'_, str> {
    if text.is_empty() {
        Cow::Borrowed("''")
    } else {
        printable(text)
    }
}

/// Another layer's message (a TOML parser's, an I/O error's) on one line:
/// every run of white space, line breaks included, becomes one space, and the
/// ends are trimmed.
pub fn one_line(message: impl std::fmt::Display) -> String {
    message
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A number in a heading or a label, as short as it reads exactly: `95.0`
/// prints `95`, `99.9` stays `99.9` (percentiles, shares).
pub fn trim_float(v: f64) -> String {
    let s = format!("{v}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_joins_lines_and_collapses_space() {
        assert_eq!(
            one_line("TOML parse error at line 3\n  |\n3 | x =\n  expected a value "),
            "TOML parse error at line 3 | 3 | x = expected a value"
        );
        assert_eq!(one_line(""), "");
        assert_eq!(one_line(std::io::Error::other("a\tb")), "a b");
    }

    #[test]
    fn trim_float_drops_only_a_zero_fraction() {
        assert_eq!(trim_float(95.0), "95");
        assert_eq!(trim_float(99.9), "99.9");
        assert_eq!(trim_float(99.99), "99.99");
        assert_eq!(trim_float(0.5), "0.5");
        assert_eq!(trim_float(100.0), "100");
    }

    #[test]
    fn printable_escapes_control_characters_only() {
        assert_eq!(printable("rndrd"), "rndrd");
        assert_eq!(printable("a\nb\u{1b}[2J"), "a\\nb\\u{1b}[2J");
        assert_eq!(printable_word(""), "''");
        assert_eq!(printable_word("x\ty"), "x\\ty");
    }
}
