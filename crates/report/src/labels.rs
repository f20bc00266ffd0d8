//! Labels: the `KEY=VALUE` pairs that say which configuration a run measured
//! (`layout=2xraidz2`, `slog=yes`, `link=10G`). The same syntax selects runs in
//! `tankbench compare`.

use crate::error::{Error, Result};
use std::collections::BTreeMap;

pub type Labels = BTreeMap<String, String>;

/// Parse `--label=k=v,k2=v2` (pass the text after `--label=`).
///
/// Errors name `--label`; use [`parse_labels_for`] to name another option.
pub fn parse_labels(text: &str) -> Result<Labels> {
    parse_labels_for("--label", text)
}

/// Parse a `KEY=VALUE,...` list; `option` names where the text came from so the
/// error tells the user which argument to fix.
///
/// Keys are letters, digits, `_`, `-` and `.` (they become table columns and
/// parts of file names); values are anything but `,` and control characters, and
/// may contain `=` (`opts=a=b` is key `opts`, value `a=b`). A key given twice is an
/// error rather than last-wins, because a silent override mislabels a stored run.
pub fn parse_labels_for(option: &str, text: &str) -> Result<Labels> {
    let err = |message: String| Error::Labels {
        option: option.to_string(),
        message,
    };
    if text.trim().is_empty() {
        return Err(err("no labels given".into()));
    }
    let mut labels = Labels::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(err(format!("empty item in '{text}'")));
        }
        let Some((key, value)) = part.split_once('=') else {
            return Err(err(format!("'{part}' has no '='")));
        };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() {
            return Err(err(format!("'{part}' has an empty key")));
        }
        if let Some(bad) = key
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        {
            return Err(err(format!(
                "key '{key}' contains '{bad}'; keys use letters, digits, '_', '-' and '.'"
            )));
        }
        if value.is_empty() {
            return Err(err(format!("'{part}' has an empty value")));
        }
        if value.chars().any(char::is_control) {
            return Err(err(format!(
                "value of '{key}' contains a control character"
            )));
        }
        if labels.insert(key.to_string(), value.to_string()).is_some() {
            return Err(err(format!("key '{key}' given twice")));
        }
    }
    Ok(labels)
}

/// Merge the labels of several `--label` options; a key repeated across options
/// is an error for the same reason as within one.
pub fn merge_labels(into: &mut Labels, more: Labels) -> Result<()> {
    for (k, v) in more {
        if into.contains_key(&k) {
            return Err(Error::Labels {
                option: "--label".into(),
                message: format!("key '{k}' given twice"),
            });
        }
        into.insert(k, v);
    }
    Ok(())
}

/// `k=v,k2=v2`, the inverse of [`parse_labels`]; empty for no labels.
pub fn format_labels(labels: &Labels) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether `labels` holds every pair of `selector`.
pub fn matches(labels: &Labels, selector: &Labels) -> bool {
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pairs_and_values_with_equals() {
        let l = parse_labels("layout=2xraidz2, slog=yes,opts=a=b").unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(l["layout"], "2xraidz2");
        assert_eq!(l["slog"], "yes");
        assert_eq!(l["opts"], "a=b");
        assert_eq!(format_labels(&l), "layout=2xraidz2,opts=a=b,slog=yes");
    }

    #[test]
    fn errors_name_the_option() {
        for bad in [
            "", "layout", "=x", "layout=", "a=1,,b=2", "a b=1", "a=1,a=2",
        ] {
            let e = parse_labels(bad).unwrap_err().to_string();
            assert!(e.starts_with("--label: "), "{bad:?} -> {e}");
        }
        let e = parse_labels_for("compare A", "x").unwrap_err().to_string();
        assert!(e.starts_with("compare A: 'x' has no '='"), "{e}");
    }

    #[test]
    fn merge_rejects_repeated_keys() {
        let mut l = parse_labels("a=1").unwrap();
        merge_labels(&mut l, parse_labels("b=2").unwrap()).unwrap();
        assert!(merge_labels(&mut l, parse_labels("a=3").unwrap()).is_err());
        assert_eq!(l.len(), 2);
    }

    #[test]
    fn selector_matching() {
        let l = parse_labels("layout=3xraidz2,slog=no,link=10G").unwrap();
        assert!(matches(&l, &parse_labels("layout=3xraidz2").unwrap()));
        assert!(matches(&l, &parse_labels("slog=no,link=10G").unwrap()));
        assert!(!matches(&l, &parse_labels("slog=yes").unwrap()));
        assert!(!matches(&l, &parse_labels("disk=ssd").unwrap()));
    }
}
