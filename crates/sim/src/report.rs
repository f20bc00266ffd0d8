//! The text report of a prediction: a header naming the system, then the
//! sections of sysbench 1.0.20's cumulative report (file_report_cumulative
//! in sb_fileio.c, report_cumulative in src/sysbench.c) in their layout,
//! computed from the predicted [`RunResult`].

use fileio::result::{LatencyKey, RunResult};
use fileio::sysbench::report_text::{cumulative_report, CumulativeFigures, PercentileLine};

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
/// blank line, in fileio's layout of them. `percentile` is sysbench's
/// `--percentile` (0: disabled); a prediction has no sysbench log-scale
/// histogram, so the value printed is the event percentile from the result's
/// own histogram when it was computed, else the line says so.
pub fn sysbench_sections(r: &RunResult, percentile: u32) -> String {
    let event = r.latency.get(&LatencyKey::Event);
    let (min_ms, avg_ms, max_ms, sum_ms) = event.map_or((0.0, 0.0, 0.0, 0.0), |l| {
        (l.min_ms, l.mean_ms, l.max_ms, l.sum_ms)
    });
    let percentile = if percentile == 0 {
        PercentileLine::Disabled
    } else {
        match event.and_then(|l| l.at(f64::from(percentile))) {
            Some(ms) => PercentileLine::Value(percentile, ms),
            None => PercentileLine::NotComputed(percentile),
        }
    };
    cumulative_report(&CumulativeFigures {
        seconds: r.total_time_s,
        total_time_s: r.total_time_s,
        counts: &r.counts,
        min_ms,
        avg_ms,
        max_ms,
        sum_ms,
        percentile,
        threads: r
            .threads
            .iter()
            .map(|t| (t.events as f64, t.busy_time_s))
            .collect(),
    })
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
