//! `--openmetrics=FILE`: a run's figures in the Prometheus text exposition
//! format 0.0.4, the format node_exporter's textfile collector reads from
//! `*.prom` files in its directory.
//!
//! Despite the option's name (kept so that existing command lines work) the
//! file is not OpenMetrics 1.0: that format allows no comment but HELP, TYPE
//! and UNIT and must end with `# EOF`, and the file's first line is the
//! [`MARKER`] comment that lets a later run replace it. So the file ends with
//! its last sample line, as the Prometheus format has it.
//!
//! The file describes one run (the last one with `--repeat`); the next run
//! replaces it, which is what a collector that shows the latest figures
//! wants. The binary publishes it atomically (a temporary file in the same
//! directory, then rename(2)), so the collector never reads half a file, and
//! the temporary name ends in `.tmp`, which the collector skips. A file is
//! replaced only when its first line is [`MARKER`], so a file tankbench did
//! not write is never overwritten.
//!
//! Every series carries the run's identifying labels: `mode`, `io_mode`,
//! `threads`, `block_size` (bytes) and each run label (`--label` and the
//! automatic ones, see docs/exports.md) as `label_KEY`, the key's characters
//! outside `[A-Za-z0-9_]` written as `_`. Units are Prometheus' base units:
//! seconds and bytes.

use crate::result::{LatencyKey, LatencySummary, ResultKind, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Read};
use std::path::Path;

/// The first line of every file this module writes: what tells a later run
/// that it may replace the file.
pub const MARKER: &str =
    "# tankbench fileio --openmetrics: written by tankbench; the next such run replaces this file";

/// What is at an `--openmetrics` path before a run writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Nothing: the file is created.
    New,
    /// A file an earlier run wrote (its first line is [`MARKER`]): replaced.
    Ours,
}

/// Whether a run may write `path`: the one line that says why not (without
/// the option's name). Only a regular file that starts with [`MARKER`] is
/// replaced; a symbolic link is refused too, since the rename would replace
/// the link, not what it points to.
pub fn check(path: &Path) -> Result<Target, String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::New),
        Err(e) => return Err(e.to_string()),
    };
    let refuse = || {
        "refusing to replace a file tankbench did not write (its first line is not tankbench's \
         marker); choose another name or move the file away"
            .to_string()
    };
    if !meta.is_file() {
        return Err(refuse());
    }
    let mut first = Vec::with_capacity(MARKER.len() + 1);
    std::fs::File::open(path)
        .and_then(|f| f.take(MARKER.len() as u64 + 1).read_to_end(&mut first))
        .map_err(|e| e.to_string())?;
    if first.strip_suffix(b"\n") == Some(MARKER.as_bytes()) {
        Ok(Target::Ours)
    } else {
        Err(refuse())
    }
}

/// The label name of run label `key`.
fn label_name(key: &str) -> String {
    let mut name = String::from("label_");
    name.extend(
        key.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
    );
    name
}

/// The run labels as label names: two keys that give one name (`a-b` and
/// `a.b`) are refused, since one would hide the other.
pub fn label_names(labels: &BTreeMap<String, String>) -> Result<Vec<(String, &str)>, String> {
    let mut out: Vec<(String, &str)> = Vec::with_capacity(labels.len());
    for (k, v) in labels {
        let name = label_name(k);
        if let Some((_, other)) = labels
            .keys()
            .map(|o| (label_name(o), o))
            .find(|(n, o)| *n == name && *o != k)
        {
            return Err(format!(
                "labels '{other}' and '{k}' would both be the label {name}; rename one"
            ));
        }
        out.push((name, v.as_str()));
    }
    Ok(out)
}

/// A label value: backslash, double quote and line feed escaped (the text
/// format's rule).
fn label_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A sample value as the text format spells it.
fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        v.to_string()
    }
}

/// The `quantile` label of percentile `p` (0 < p <= 100): the decimal text of
/// p / 100, written by moving the decimal point of `p`'s own text, so 99.9
/// is `0.999` rather than the nearest binary fraction's `0.9990000000000001`.
fn quantile(p: f64) -> String {
    let text = p.to_string();
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let digits = format!("{int}{frac}");
    // The point moves two places left.
    let point = int.len() as isize - 2;
    let (whole, fraction) = if point <= 0 {
        (
            "0".to_string(),
            format!("{}{digits}", "0".repeat(point.unsigned_abs())),
        )
    } else {
        let (w, f) = digits.split_at(point.unsigned_abs());
        (w.to_string(), f.to_string())
    };
    let whole = whole.trim_start_matches('0');
    let whole = if whole.is_empty() { "0" } else { whole };
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        whole.to_string()
    } else {
        format!("{whole}.{fraction}")
    }
}

/// One metric family being written: HELP and TYPE once, then its samples.
struct Family<'a> {
    out: &'a mut String,
    name: &'static str,
    labels: &'a str,
}

impl Family<'_> {
    fn sample(&mut self, suffix: &str, extra: &[(&str, String)], v: f64) {
        self.sample_text(suffix, extra, &value(v));
    }

    fn sample_text(&mut self, suffix: &str, extra: &[(&str, String)], v: &str) {
        let mut labels = self.labels.to_string();
        for (k, val) in extra {
            let _ = write!(labels, ",{k}=\"{}\"", label_value(val));
        }
        let _ = writeln!(self.out, "{}{suffix}{{{labels}}} {v}", self.name);
    }
}

/// A latency of `ms` milliseconds as seconds, to the nanosecond the
/// histograms resolve: dividing by 1000 in binary would print 9.215 µs as
/// `0.000009214999999999999`.
fn seconds(ms: f64) -> String {
    if !ms.is_finite() {
        return value(ms);
    }
    let text = format!("{:.9}", ms / 1000.0);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}

/// Start a family `name` of `kind` (gauge, summary) in `out`.
fn family<'a>(
    out: &'a mut String,
    labels: &'a str,
    name: &'static str,
    kind: &str,
    help: &str,
) -> Family<'a> {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    Family { out, name, labels }
}

/// The file's text for `r`, whose `labels` are the run's (user and
/// automatic ones). Errs only when two labels would share a name.
pub fn render(r: &RunResult) -> Result<String, String> {
    let w = &r.workload;
    let mut common = vec![
        ("mode".to_string(), w.mode.short_name().to_string()),
        ("io_mode".to_string(), w.io_mode.name().to_string()),
        ("threads".to_string(), w.threads.to_string()),
        ("block_size".to_string(), w.block_size.to_string()),
    ];
    for (name, v) in label_names(&r.labels)? {
        common.push((name, v.to_string()));
    }
    let labels = common
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", label_value(v)))
        .collect::<Vec<_>>()
        .join(",");
    let mut out = format!("{MARKER}\n");
    let kind = match r.kind {
        ResultKind::Measured => "measured",
        ResultKind::Predicted => "predicted",
    };
    family(
        &mut out,
        &labels,
        "tankbench_run_info",
        "gauge",
        "The run these figures are from (always 1); its labels describe it.",
    )
    .sample(
        "",
        &[
            ("tool", r.tool.name.clone()),
            ("version", r.tool.version.clone()),
            ("kind", kind.to_string()),
            ("engine", w.engine.clone()),
            ("started_at", r.started_at.clone()),
            ("hostname", r.environment.hostname.clone()),
            ("fs_type", r.environment.fs_type.clone()),
        ],
        1.0,
    );
    if let Some(t) = crate::clock::unix_seconds_of_rfc3339(&r.started_at) {
        family(
            &mut out,
            &labels,
            "tankbench_run_start_timestamp_seconds",
            "gauge",
            "When the run started, seconds since the Unix epoch.",
        )
        .sample("", &[], t as f64);
    }
    run_gauges(&mut out, &labels, r);
    latency(&mut out, &labels, r);
    Ok(out)
}

/// The run's figures that are one number each.
fn run_gauges(out: &mut String, labels: &str, r: &RunResult) {
    let gauges: [(&'static str, &str, f64); 10] = [
        (
            "tankbench_run_duration_seconds",
            "Wall time of the run (sysbench's total time).",
            r.total_time_s,
        ),
        (
            "tankbench_run_interrupted",
            "1 when the run was stopped early (SIGINT); the figures cover what ran.",
            if r.interrupted { 1.0 } else { 0.0 },
        ),
        (
            "tankbench_run_warnings",
            "Warnings the run raised (conditions that change how to read the figures).",
            r.warnings.len() as f64,
        ),
        (
            "tankbench_events_per_second",
            "Events (reads, writes and periodic fsyncs) per second.",
            super::events_per_s(r),
        ),
        (
            "tankbench_reads_per_second",
            "Read requests per second.",
            r.rates.reads_per_s,
        ),
        (
            "tankbench_writes_per_second",
            "Write requests per second.",
            r.rates.writes_per_s,
        ),
        (
            "tankbench_fsyncs_per_second",
            "fsync calls per second.",
            r.rates.fsyncs_per_s,
        ),
        (
            "tankbench_read_bytes_per_second",
            "Bytes read per second.",
            r.rates.read_mib_per_s * 1048576.0,
        ),
        (
            "tankbench_written_bytes_per_second",
            "Bytes written per second.",
            r.rates.written_mib_per_s * 1048576.0,
        ),
        (
            "tankbench_run_events",
            "Events of the run.",
            r.counts.events as f64,
        ),
    ];
    for (name, help, v) in gauges {
        family(out, labels, name, "gauge", help).sample("", &[], v);
    }
}

/// The latency of each operation: a summary at the run's percentiles, and
/// the extremes as gauges.
fn latency(out: &mut String, labels: &str, r: &RunResult) {
    let ops: Vec<(LatencyKey, &LatencySummary)> = LatencyKey::ALL
        .into_iter()
        .filter_map(|k| r.latency.get(&k).map(|l| (k, l)))
        .collect();
    if ops.is_empty() {
        return;
    }
    let mut f = family(
        out,
        labels,
        "tankbench_latency_seconds",
        "summary",
        "Latency per operation (op: event, read, write, fsync, event_service), at the run's --percentiles.",
    );
    for (k, l) in &ops {
        let op = ("op", k.name().to_string());
        for p in &l.percentiles {
            // No observation, no quantile: NaN, as Prometheus' own summaries write it.
            let v = if l.count > 0 { p.ms } else { f64::NAN };
            f.sample_text("", &[op.clone(), ("quantile", quantile(p.p))], &seconds(v));
        }
        f.sample_text("_sum", std::slice::from_ref(&op), &seconds(l.sum_ms));
        f.sample("_count", std::slice::from_ref(&op), l.count as f64);
    }
    for (name, help, pick) in [
        (
            "tankbench_latency_min_seconds",
            "Fastest operation of each kind.",
            (|l: &LatencySummary| l.min_ms) as fn(&LatencySummary) -> f64,
        ),
        (
            "tankbench_latency_max_seconds",
            "Slowest operation of each kind.",
            |l: &LatencySummary| l.max_ms,
        ),
    ] {
        let mut f = family(out, labels, name, "gauge", help);
        for (k, l) in &ops {
            let v = if l.count > 0 { pick(l) } else { f64::NAN };
            f.sample_text("", &[("op", k.name().to_string())], &seconds(v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_prometheus_text_ending_with_a_sample() {
        let r = crate::export::test_result()
            .with_label("layout", "mirror")
            .with_latency(LatencyKey::Event, LatencySummary::default());
        let text = render(&r).unwrap();
        assert!(text.starts_with(&format!("{MARKER}\n")), "{text}");
        assert!(text.ends_with('\n'), "the last line ends with a newline");
        let last = text.lines().last().unwrap();
        assert!(
            last.starts_with("tankbench_latency_max_seconds{") && last.contains("label_layout"),
            "the last line is a sample, not `# EOF` or a comment: {last}"
        );
        assert!(!text.contains("# EOF"));
        // Every comment is the marker, a HELP or a TYPE line.
        for line in text.lines().filter(|l| l.starts_with('#')) {
            assert!(
                line == MARKER || line.starts_with("# HELP ") || line.starts_with("# TYPE "),
                "{line}"
            );
        }
    }

    #[test]
    fn quantiles_are_the_decimal_text_of_the_percentile() {
        for (p, q) in [
            (50.0, "0.5"),
            (95.0, "0.95"),
            (99.0, "0.99"),
            (99.9, "0.999"),
            (99.99, "0.9999"),
            (100.0, "1"),
            (5.0, "0.05"),
            (0.1, "0.001"),
            (12.5, "0.125"),
        ] {
            assert_eq!(quantile(p), q, "{p}");
        }
    }

    #[test]
    fn label_values_and_numbers_follow_the_text_format() {
        assert_eq!(label_value(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(label_value("x\ny"), "x\\ny");
        assert_eq!(value(f64::NAN), "NaN");
        assert_eq!(value(f64::NEG_INFINITY), "-Inf");
        assert_eq!(value(0.0015), "0.0015");
        assert_eq!(seconds(0.009215), "0.000009215");
        assert_eq!(seconds(1500.0), "1.5");
        assert_eq!(seconds(0.0), "0");
        assert_eq!(seconds(f64::NAN), "NaN");
    }

    #[test]
    fn run_labels_become_label_names_that_cannot_collide() {
        let labels: BTreeMap<String, String> = [
            ("layout".to_string(), "2xraidz2".to_string()),
            ("link.speed".to_string(), "10G".to_string()),
        ]
        .into();
        let names = label_names(&labels).unwrap();
        assert_eq!(
            names,
            [
                ("label_layout".to_string(), "2xraidz2"),
                ("label_link_speed".to_string(), "10G")
            ]
        );
        let clash: BTreeMap<String, String> = [
            ("a-b".to_string(), "1".to_string()),
            ("a.b".to_string(), "2".to_string()),
        ]
        .into();
        assert!(label_names(&clash).unwrap_err().contains("label_a_b"));
    }

    #[test]
    fn only_a_file_with_the_marker_is_replaced() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("tankbench.prom");
        assert_eq!(check(&p), Ok(Target::New));
        std::fs::write(&p, format!("{MARKER}\nx 1\n")).unwrap();
        assert_eq!(check(&p), Ok(Target::Ours));
        for foreign in ["", "# HELP node_x\n", &format!("{MARKER} \n"), MARKER] {
            std::fs::write(&p, foreign).unwrap();
            assert!(check(&p).is_err(), "{foreign:?}");
        }
        std::fs::write(&p, format!("{MARKER}\n")).unwrap();
        let link = d.path().join("link.prom");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        assert!(check(&link).is_err(), "a link is not replaced");
        assert!(check(d.path()).is_err(), "a directory is not a file");
    }
}
