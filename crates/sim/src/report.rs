//! The text report of a prediction: a header naming the system, then the
//! sections of sysbench 1.0.20's cumulative report (file_report_cumulative
//! in sb_fileio.c, report_cumulative in src/sysbench.c) in their layout,
//! computed from the predicted [`RunResult`].

use std::fmt::Write as _;

use fileio::result::{LatencyKey, RunResult};

use crate::system::{DeviceSpec, System, SystemModel};

/// One line naming what was predicted: the system's name, layout, log
/// device, link and client, so a pasted report cannot pass for a measurement.
pub fn prediction_header(model: &SystemModel, sys: &System) -> String {
    let log = match &model.log {
        None => "none".to_string(),
        Some(DeviceSpec::Name(n)) => n.trim().to_string(),
        Some(DeviceSpec::Model(_)) if sys.log.is_none() => "none".to_string(),
        Some(DeviceSpec::Model(_)) => "custom model".to_string(),
    };
    let link = match sys.link {
        Some(l) => l.name(),
        None => "none (local)".to_string(),
    };
    format!(
        "PREDICTION (simulated, not measured) for system '{}': layout {}, log {}, link {}, client {}",
        sys.name,
        sys.shape.name(),
        log,
        link,
        sys.protocol.name()
    )
}

/// sysbench's "File operations", "Throughput", "General statistics",
/// "Latency (ms)" and "Threads fairness" sections of `r`, starting with a
/// blank line. `percentile` is sysbench's `--percentile` (0: disabled); a
/// prediction has no sysbench log-scale histogram, so the value printed is
/// the event percentile from the result's own histogram when it was
/// computed, else the line says so.
pub fn sysbench_sections(r: &RunResult, percentile: u32) -> String {
    let t = if r.total_time_s > 0.0 {
        r.total_time_s
    } else {
        f64::MIN_POSITIVE
    };
    let c = &r.counts;
    let mut s = String::from("\nFile operations:\n");
    let _ = writeln!(s, "{:<34}{:4.2}", "    reads/s:", c.reads as f64 / t);
    let _ = writeln!(s, "{:<34}{:4.2}", "    writes/s:", c.writes as f64 / t);
    let _ = writeln!(s, "{:<34}{:4.2}", "    fsyncs/s:", c.fsyncs as f64 / t);
    s.push_str("\nThroughput:\n");
    let _ = writeln!(
        s,
        "{:<34}{:4.2}",
        "    read, MiB/s:",
        c.bytes_read as f64 / 1048576.0 / t
    );
    let _ = writeln!(
        s,
        "{:<34}{:4.2}",
        "    written, MiB/s:",
        c.bytes_written as f64 / 1048576.0 / t
    );
    s.push_str("\nGeneral statistics:\n");
    let _ = writeln!(s, "{:<41}{:.4}s", "    total time:", r.total_time_s);
    let _ = writeln!(s, "{:<41}{}", "    total number of events:", c.events);
    s.push_str("\nLatency (ms):\n");
    let event = r.latency.get(&LatencyKey::Event);
    let (min, avg, max, sum) = event.map_or((0.0, 0.0, 0.0, 0.0), |l| {
        (l.min_ms, l.mean_ms, l.max_ms, l.sum_ms)
    });
    let _ = writeln!(s, "         min: {min:39.2}");
    let _ = writeln!(s, "         avg: {avg:39.2}");
    let _ = writeln!(s, "         max: {max:39.2}");
    if percentile > 0 {
        let found = event.and_then(|l| {
            l.percentiles
                .iter()
                .find(|p| (p.p - f64::from(percentile)).abs() < 1e-9)
        });
        match found {
            Some(p) => {
                let _ = writeln!(s, "        {:3}th percentile: {:27.2}", percentile, p.ms);
            }
            None => {
                let _ = writeln!(
                    s,
                    "        {percentile:3}th percentile:              not computed"
                );
            }
        }
    } else {
        s.push_str("         percentile stats:               disabled\n");
    }
    let _ = writeln!(s, "         sum: {sum:39.2}");
    s.push_str("\nThreads fairness:\n");
    let events: Vec<f64> = r.threads.iter().map(|t| t.events as f64).collect();
    let busy: Vec<f64> = r.threads.iter().map(|t| t.busy_time_s).collect();
    let (em, es) = mean_stddev(&events);
    let (bm, bs) = mean_stddev(&busy);
    let _ = writeln!(s, "{:<35}{:.4}/{:3.2}", "    events (avg/stddev):", em, es);
    let _ = writeln!(
        s,
        "{:<35}{:.4}/{:3.2}",
        "    execution time (avg/stddev):", bm, bs
    );
    s.push('\n');
    s
}

/// Population mean and standard deviation, as sysbench's fairness figures.
fn mean_stddev(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// The whole text report: header, sysbench sections, tankbench's latency
/// table by operation.
pub fn text_report(model: &SystemModel, sys: &System, r: &RunResult, percentile: u32) -> String {
    let mut s = prediction_header(model, sys);
    s.push('\n');
    s.push_str(&sysbench_sections(r, percentile));
    s.push_str(&fileio::sysbench::report_text::latency_section(r));
    s
}
