//! `tankbench probe nfs://HOST/EXPORT | DIR`: the round trip of the calls a
//! NAS client makes, with percentiles. The probe is `fileio::probe`; this
//! module parses, prints and saves.

use super::slog::{
    check_json_destination, emit, exit_code, parse_duration, percentile_cells_us, OutputFormat,
    PERCENTILE_COLUMNS_US,
};
use clap::Args;
use fileio::probe::{ProbeResult, ProbeSpec, ProbeTarget, Transport};
use report::table::{Cell, Table};
use std::path::PathBuf;

/// Round trips of the calls a NAS client makes, with percentiles
///
/// NULL, GETATTR, a 4 KiB READ, a 4 KiB stable WRITE, an unstable WRITE
/// and COMMIT against an NFS export (or their system calls on a directory),
/// in under a minute. See docs/slog-and-probe.md.
#[derive(Debug, Args)]
pub(crate) struct ProbeArgs {
    /// nfs://HOST[:PORT]/EXPORT[?...], HOST:/EXPORT, or a local directory.
    target: PathBuf,
    /// Samples per operation, at most.
    #[arg(long, default_value_t = 200)]
    samples: u64,
    /// The longest one operation may take (e.g. 5s, 500ms).
    #[arg(long, default_value = "5s")]
    time_per_op: String,
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Also save the result document here (a new file).
    #[arg(long)]
    json: Option<PathBuf>,
}

fn table_of(r: &ProbeResult) -> String {
    let mut t = Table::new(
        &[
            &[
                ("operation", false),
                ("call", false),
                ("samples", true),
                ("mean µs", true),
            ][..],
            &PERCENTILE_COLUMNS_US,
            &[("max µs", true)],
        ]
        .concat(),
    );
    for o in &r.operations {
        let mut row = vec![
            Cell::Text(o.op.name().into()),
            Cell::Text(o.call.clone()),
            Cell::Int(o.samples),
            Cell::Num(Some(o.latency.mean_ms * 1000.0)),
        ];
        row.extend(percentile_cells_us(&o.latency));
        row.push(Cell::Num(Some(o.latency.max_ms * 1000.0)));
        t.rows.push(row);
    }
    if r.interrupted {
        t.notes
            .push("interrupted: later operations are missing".into());
    }
    let how = match r.transport {
        Transport::Nfs3 => "NFSv3 (tankbench's client, one TCP connection)",
        Transport::Local => "local system calls",
    };
    format!(
        "probe: {} over {how}\n\n{}",
        r.target,
        t.to_screen(&super::stdout_screen())
    )
}

pub(crate) fn run(a: &ProbeArgs) -> anyhow::Result<i32> {
    let mut spec = ProbeSpec::new(ProbeTarget::from_path(&a.target)?);
    spec.samples = a.samples;
    spec.time_per_op = parse_duration("--time-per-op", &a.time_per_op)?;
    spec.check()?;
    check_json_destination(a.json.as_deref())?;
    fileio::probe::install_stop_handlers();
    let result = fileio::probe::run(&spec, &mut |line| super::write_stderr_line(line))?;
    emit(
        serde_json::to_string_pretty(&result),
        || table_of(&result),
        a.format,
        a.json.as_deref(),
    )?;
    Ok(exit_code(result.interrupted))
}
