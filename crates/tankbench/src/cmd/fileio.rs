//! `tankbench fileio` (sysbench-compatible) and `tankbench quick`.

use anyhow::Context as _;
use clap::Parser;
use fileio::quick::Step;
use report::labels::{merge_labels, parse_labels, Labels};
use report::store::ResultStore;
use std::io::Write as _;

/// Labels from every `--label=` word (repeatable; merged), checked before
/// anything runs so a typo costs nothing.
fn labels_of(args: &[String]) -> anyhow::Result<Labels> {
    let mut labels = Labels::new();
    for a in args {
        if let Some(text) = a.strip_prefix("--label=") {
            merge_labels(&mut labels, parse_labels(text)?)?;
        }
    }
    Ok(labels)
}

/// The sysbench-compatible front end; `args` are the words after the program name.
pub fn sysbench_main(args: Vec<String>) -> anyhow::Result<i32> {
    let labels = labels_of(&args)?;
    let mut invocation = fileio::cli::execute(&args);
    let Some(ext) = invocation.extensions.take() else {
        return Ok(invocation.exit_code);
    };
    if let Some(dir) = &ext.save {
        let store = match dir {
            Some(d) => ResultStore::open(d),
            None => ResultStore::open_default(),
        }?;
        for r in &mut invocation.results {
            r.labels.extend(labels.clone());
            let path = store.save(r).context("--save")?;
            eprintln!("saved {}", path.display());
        }
    } else if !labels.is_empty() {
        anyhow::bail!("--label needs --save: labels are kept with stored results");
    }
    Ok(invocation.exit_code)
}

/// `tankbench quick`: prepare, run a short suite, clean up, print a summary.
#[derive(Parser, Debug)]
#[command(
    name = "tankbench quick",
    about = "One-command storage benchmark in DIR (default: the current directory). \
             Makes its own scratch directory there and removes it afterwards."
)]
struct QuickArgs {
    /// Directory on the storage to measure.
    #[arg(default_value = ".")]
    dir: std::path::PathBuf,
    /// Size of the file set (K/M/G/T suffixes, like --file-total-size).
    #[arg(long, default_value = "1G", allow_hyphen_values = true)]
    size: String,
    /// Seconds per workload.
    #[arg(long, default_value_t = 5, allow_negative_numbers = true)]
    time: u64,
    /// Print the results as one JSON array instead of the table.
    #[arg(long)]
    json: bool,
    /// Keep the results in a result store (default ./tankbench-results).
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    save: Option<String>,
}

pub fn quick_main(args: Vec<String>) -> anyhow::Result<i32> {
    let q = QuickArgs::try_parse_from(std::iter::once("tankbench quick".to_string()).chain(args))
        .map_err(|e| {
        if e.use_stderr() {
            anyhow::anyhow!(
                "{}",
                e.to_string()
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("error: ")
            )
        } else {
            print!("{e}");
            std::process::exit(0)
        }
    })?;
    if !(1..=3600).contains(&q.time) {
        // quick is a first look: five workloads of an hour each already take
        // five hours; longer runs are what `tankbench fileio` is for.
        anyhow::bail!(
            "--time {}: accepted: 1 to 3600 seconds per workload",
            q.time
        );
    }
    if fileio::args::parse_size(&q.size) == 0 {
        anyhow::bail!("--size: '{}' is not a size (accepted: a number with an optional K, M, G or T suffix, e.g. 1G)", q.size);
    }
    // SIGINT, SIGTERM and SIGHUP (also a second one) stop quick and remove
    // its scratch directory; the exit status is then 128 + the signal.
    fileio::quick::install_signal_handlers();
    let settings = fileio::quick::QuickSettings {
        parent: q.dir.clone(),
        size: q.size.clone(),
        seconds: q.time,
    };
    // After SIGHUP the terminal is gone and writes to it fail: nothing here
    // may panic on a failed write (println! would), so write and ignore errors.
    let mut out = std::io::stdout();
    if !q.json {
        let _ = writeln!(
            out,
            "tankbench quick: {} file set in {}, {} s per workload\n",
            q.size,
            q.dir.display(),
            q.time
        );
        let _ = out.flush();
    }
    let total = fileio::quick::SUITE.len();
    let json = q.json;
    let outcome = fileio::quick::run(&settings, &mut |step| {
        if json {
            return;
        }
        let mut err = std::io::stderr();
        let _ = match step {
            Step::Prepare { dir } => writeln!(err, "preparing the file set in {}", dir.display()),
            Step::Case { index, case } => writeln!(err, "[{}/{}] {}", index + 1, total, case.name),
        };
    })
    .map_err(|f| anyhow::anyhow!("{}", f.summary().trim_start_matches("FATAL: ")))?;
    let results = &outcome.results;
    if let Some(sig) = outcome.stopped_by {
        let _ = writeln!(
            std::io::stderr(),
            "tankbench quick: stopped by {}; the scratch directory is removed{}",
            signal_name(sig),
            if results.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} of {total} workloads ran (the last one cut short)",
                    results.len()
                )
            }
        );
    }
    if let Some(dir) = &q.save {
        let store = if dir.is_empty() {
            ResultStore::open_default()
        } else {
            ResultStore::open(dir)
        }?;
        for (_, r) in results {
            let path = store.save(r)?;
            let _ = writeln!(std::io::stderr(), "saved {}", path.display());
        }
    }
    if q.json {
        let list: Vec<&fileio::result::RunResult> = results.iter().map(|(_, r)| r).collect();
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&list)?);
        return Ok(outcome.exit_code());
    }
    if results.is_empty() {
        return Ok(outcome.exit_code());
    }
    let _ = writeln!(
        out,
        "{:<62} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "workload", "ops/s", "MiB/s", "p50 ms", "p99 ms", "p99.9 ms"
    );
    for (name, r) in results {
        let ops = r.rates.reads_per_s + r.rates.writes_per_s;
        let mib = r.rates.read_mib_per_s + r.rates.written_mib_per_s;
        let pct = |p: f64| {
            r.latency
                .get("event")
                .and_then(|l| l.percentiles.iter().find(|x| x.p == p))
                .map(|x| x.ms)
                .unwrap_or(0.0)
        };
        let name = if r.interrupted {
            format!("{name} (interrupted)")
        } else {
            name.clone()
        };
        let _ = writeln!(
            out,
            "{:<62} {:>10.0} {:>10.2} {:>10.3} {:>10.3} {:>10.3}",
            name,
            ops,
            mib,
            pct(50.0),
            pct(99.0),
            pct(99.9)
        );
    }
    let env = &results[0].1.environment;
    let _ = writeln!(
        out,
        "\nfile system: {} on {} ({}), kernel {}, {} CPUs, {:.1} GiB RAM",
        env.fs_type,
        env.device,
        match env.rotational {
            Some(true) => "rotational",
            Some(false) => "non-rotational",
            None => "device type unknown",
        },
        env.kernel,
        env.cpus,
        env.mem_total_bytes as f64 / (1u64 << 30) as f64
    );
    let mut seen = std::collections::BTreeSet::new();
    for (_, r) in results {
        for w in &r.warnings {
            if seen.insert(w.code.clone()) {
                let _ = writeln!(out, "\nWARNING: {}\n  hint: {}", w.message, w.hint);
            }
        }
    }
    Ok(outcome.exit_code())
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
