//! The report in fio 3.33's text layout (`--output-format=normal`), for the
//! figures tankbench measures: per entry the IOPS and bandwidth lines, the
//! latency of each direction and of the syncs with fio's percentiles, the
//! latency distribution and the issued counts; per group the "Run status"
//! lines. fio's CPU, queue-depth and disk lines have no figures here and
//! are left out. Numbers are shortened as fio's `num2str` does: at most
//! four digits, with k/M/G (IOPS) or KiB/MiB/GiB and kB/MB/GB (bandwidth).

use super::{Direction, DirectionStatus, Entry, Report};
use crate::fio::job::Jobs;
use crate::fio::plan::{Plan, FIO_PERCENTILES};
use hdrhistogram::Histogram;
use std::fmt::Write as _;

/// `value` shortened to at most four digits before the unit (fio's
/// `num2str` with 4 significant figures): `units` from none upwards.
fn short(value: f64, base: f64, units: &[&str]) -> String {
    let mut v = value;
    let mut i = 0;
    while v.round() >= 10_000.0 && i + 1 < units.len() {
        v /= base;
        i += 1;
    }
    if v < 10.0 && i > 0 {
        format!("{v:.2}{}", units[i])
    } else if v < 100.0 && i > 0 {
        format!("{v:.1}{}", units[i])
    } else {
        format!("{}{}", v.round(), units[i])
    }
}

fn iops(v: f64) -> String {
    short(v, 1000.0, &["", "k", "M", "G"])
}

fn bw_pair(bytes_per_s: f64) -> String {
    format!(
        "{}/s ({}/s)",
        short(bytes_per_s / 1024.0, 1024.0, &["KiB", "MiB", "GiB", "TiB"]),
        short(bytes_per_s / 1000.0, 1000.0, &["kB", "MB", "GB", "TB"])
    )
}

fn bytes_pair(bytes: u64) -> String {
    format!(
        "{} ({})",
        short(bytes as f64 / 1024.0, 1024.0, &["KiB", "MiB", "GiB", "TiB"]),
        short(bytes as f64 / 1000.0, 1000.0, &["kB", "MB", "GB", "TB"])
    )
}

/// The unit fio prints a latency in and its divisor from ns
/// (`nsec_to_usec`, `usec_to_msec` in stat.c: a step up when the minimum is
/// above 2000, the maximum above 99999 and the deviation above 1000).
fn unit_of(min: f64, max: f64, dev: f64) -> (&'static str, f64) {
    let mut unit = ("nsec", 1.0);
    for next in [("usec", 1e3), ("msec", 1e6)] {
        let d = unit.1;
        if min / d > 2000.0 && max / d > 99_999.0 && dev / d > 1000.0 {
            unit = next;
        } else {
            break;
        }
    }
    unit
}

fn number(v: f64) -> String {
    if v >= 1e5 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{}", v.round())
    }
}

/// `lat (usec): min=..., max=..., avg=..., stdev=...` and fio's percentile
/// block, under `label` (lat, sync).
fn latency_lines(out: &mut String, label: &str, h: &Histogram<u64>, indent: &str) {
    let (min, max, mean, dev) = (h.min() as f64, h.max() as f64, h.mean(), h.stdev());
    let (unit, d) = unit_of(min, max, dev);
    let _ = writeln!(
        out,
        "{indent}{label} ({unit}): min={}, max={}, avg={:.2}, stdev={:.2}",
        number(min / d),
        number(max / d),
        mean / d,
        dev / d
    );
    // Percentiles take their own unit (fio: min above 2000 and max above
    // 99999 of the current one).
    let (mut pd, mut punit) = (1.0, "nsec");
    for (next_unit, next_d) in [("usec", 1e3), ("msec", 1e6)] {
        if min / pd > 2000.0 && max / pd > 99_999.0 {
            pd = next_d;
            punit = next_unit;
        } else {
            break;
        }
    }
    let values: Vec<(f64, u64)> = FIO_PERCENTILES
        .iter()
        .map(|&p| {
            let ns = h.value_at_percentile(p).clamp(h.min(), h.max()) as f64;
            // Whole units, rounded up as fio's buckets report them.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let v = (ns / pd).ceil() as u64;
            (p, v)
        })
        .collect();
    let width = values
        .iter()
        .map(|(_, v)| v.to_string().len())
        .max()
        .unwrap_or(1)
        .max(5);
    let per_line = if width > 6 { 3 } else { 4 };
    let _ = writeln!(out, "{indent}{label} percentiles ({punit}):");
    for (i, chunk) in values.chunks(per_line).enumerate() {
        let items: Vec<String> = chunk
            .iter()
            .map(|(p, v)| format!("{p:5.2}th=[{v:>width$}]"))
            .collect();
        let last = (i + 1) * per_line >= values.len();
        let _ = writeln!(
            out,
            "{indent} | {}{}",
            items.join(", "),
            if last { "" } else { "," }
        );
    }
}

fn direction_lines(out: &mut String, name: &str, d: &Direction, write: bool) {
    let _ = writeln!(
        out,
        "  {name}: IOPS={}, BW={}({}/{}msec){}",
        iops(d.iops()),
        bw_pair(d.bw_bytes()),
        short(
            d.bytes as f64 / 1024.0,
            1024.0,
            &["KiB", "MiB", "GiB", "TiB"]
        ),
        d.runtime_ms,
        if write { "; 0 zone resets" } else { "" }
    );
    if !d.lat.is_empty() {
        latency_lines(out, "lat", &d.lat, "     ");
    }
}

/// fio's latency distribution: the share of I/Os (reads and writes) in
/// each range up to a bound, per unit, five to a line, shares of at least
/// 0.01% (`show_latencies` in stat.c).
fn distribution(out: &mut String, e: &Entry) {
    const BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    // (unit, bound in that unit, bound in ns), in order.
    let mut ranges: Vec<(&str, String, u64)> = Vec::new();
    for (unit, scale) in [("nsec", 1u64), ("usec", 1_000), ("msec", 1_000_000)] {
        for b in BOUNDS {
            ranges.push((unit, b.to_string(), b * scale));
        }
    }
    ranges.push(("msec", "2000".into(), 2_000_000_000));
    ranges.push(("msec", ">=2000".into(), u64::MAX));
    let mut counts = vec![0u64; ranges.len()];
    let mut total = 0u64;
    for h in [&e.read.lat, &e.write.lat] {
        for v in h.iter_recorded() {
            let ns = h.median_equivalent(v.value_iterated_to());
            let i = ranges
                .iter()
                .position(|r| ns < r.2)
                .unwrap_or(ranges.len() - 1);
            counts[i] += v.count_at_value();
            total += v.count_at_value();
        }
    }
    if total == 0 {
        return;
    }
    for unit in ["nsec", "usec", "msec"] {
        let items: Vec<String> = ranges
            .iter()
            .zip(&counts)
            .filter(|((u, _, _), _)| *u == unit)
            .filter_map(|((_, label, _), &n)| {
                let share = n as f64 * 100.0 / total as f64;
                (share >= 0.01).then(|| format!("{label}={share:.2}%"))
            })
            .collect();
        for chunk in items.chunks(5) {
            let _ = writeln!(out, "  lat ({unit})   : {}", chunk.join(", "));
        }
    }
}

fn entry_text(out: &mut String, e: &Entry) {
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err= 0: pid={}: {}",
        e.name,
        e.group,
        e.jobs,
        std::process::id(),
        crate::clock::rfc3339_of_unix_seconds(e.ended_unix_s)
    );
    if let Some(d) = &e.description {
        let _ = writeln!(out, "  Description  : [{d}]");
    }
    if e.read.ios > 0 {
        direction_lines(out, "read", &e.read, false);
    }
    if e.write.ios > 0 {
        direction_lines(out, "write", &e.write, true);
    }
    distribution(out, e);
    if !e.sync.is_empty() {
        let _ = writeln!(out, "  fsync/fdatasync/sync_file_range:");
        latency_lines(out, "sync", &e.sync, "    ");
    }
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},0,{} short=0,0,0,0 dropped=0,0,0,0",
        e.read.ios,
        e.write.ios,
        e.sync.len()
    );
}

fn status_line(out: &mut String, name: &str, s: &DirectionStatus) {
    let _ = writeln!(
        out,
        "{name:>7}: bw={}, {}-{}, io={}, run={}-{}msec",
        bw_pair(s.aggregate_bw),
        short(s.min_bw / 1024.0, 1024.0, &["KiB/s", "MiB/s", "GiB/s"]),
        short(s.max_bw / 1024.0, 1024.0, &["KiB/s", "MiB/s", "GiB/s"]),
        bytes_pair(s.bytes),
        s.min_run_ms,
        s.max_run_ms
    );
}

/// The lines fio prints before a run: a line per job, `...` for its
/// clones, the version, the thread count.
pub fn header(jobs: &Jobs, plan: &Plan) -> String {
    let mut out = String::new();
    for job in &jobs.jobs {
        let s = &job.settings;
        let bs = short(s.bs as f64, 1024.0, &["B", "KiB", "MiB", "GiB"]);
        let _ = writeln!(
            out,
            "{}: (g={}): rw={}, bs=(R) {bs}-{bs}, (W) {bs}-{bs}, (T) {bs}-{bs}, ioengine={}, iodepth={}",
            job.name,
            job.group,
            s.rw.name(),
            s.ioengine.name(),
            s.iodepth
        );
        if s.numjobs > 1 {
            out.push_str("...\n");
        }
    }
    let threads: usize = plan.groups.iter().map(|g| g.clones.len()).sum();
    let _ = writeln!(
        out,
        "tankbench-{} (fio job language)\nStarting {threads} thread{}",
        crate::result::ToolInfo::tankbench().version,
        if threads == 1 { "" } else { "s" }
    );
    out
}

/// The report after the run.
pub fn render(report: &Report) -> String {
    let mut out = String::from("\n");
    for e in &report.entries {
        entry_text(&mut out, e);
    }
    for g in &report.groups {
        let _ = writeln!(out, "\nRun status group {} (all jobs):", g.id);
        if let Some(s) = &g.read {
            status_line(&mut out, "READ", s);
        }
        if let Some(s) = &g.write {
            status_line(&mut out, "WRITE", s);
        }
    }
    if report.additions.interrupted {
        out.push_str("\nInterrupted (SIGINT): the report covers the part that ran.\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_shorten_like_fio() {
        assert_eq!(iops(432.4), "432");
        assert_eq!(iops(170_666.0), "171k");
        assert_eq!(bw_pair(1_773_000.0), "1731KiB/s (1773kB/s)");
        assert_eq!(bw_pair(699_000_000.0), "667MiB/s (699MB/s)");
        assert_eq!(bytes_pair(2 << 20), "2048KiB (2097kB)");
    }

    #[test]
    fn latency_units_step_up_like_fio() {
        assert_eq!(unit_of(1510.0, 56631.0, 5377.0).0, "nsec");
        assert_eq!(unit_of(42_000.0, 46_566_000.0, 2_827_810.0).0, "usec");
        assert_eq!(unit_of(3e6, 2e8, 5e6).0, "msec");
    }
}
