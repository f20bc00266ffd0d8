//! `--warmup=SECS`: the workers run that long before the measured `--time`,
//! and every figure leaves the warm-up out (fio's `ramp_time`).

mod common;

use common::*;

fn json_of(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn the_figures_cover_the_time_after_the_warmup() {
    let d = scratch();
    let set = ["--file-total-size=4M", "--file-num=2"];
    assert_eq!(tb(d.path(), &["fileio", set[0], set[1], "prepare"]).code, 0);
    // A fixed 2 ms per request: about 500 events a second on one thread.
    let run = |extra: &[&str]| {
        let mut args = vec![
            "fileio",
            set[0],
            set[1],
            "--file-test-mode=rndrd",
            "--tb-inject-latency=fixed:2ms",
            "--format=json",
        ];
        args.extend_from_slice(extra);
        args.push("run");
        let started = std::time::Instant::now();
        let r = tb(d.path(), &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        (json_of(&r.stdout), started.elapsed().as_secs_f64())
    };
    let (warm, wall) = run(&["--time=2", "--warmup=2"]);
    // The run lasted warm-up + time; its figures, the measured 2 s only.
    assert!(wall >= 4.0, "ran {wall} s");
    assert_eq!(warm["warmup_s"], 2);
    let total = warm["total_time_s"].as_f64().unwrap();
    assert!((1.9..2.5).contains(&total), "total time {total} s");
    let events = warm["counts"]["events"].as_u64().unwrap();
    let rate = events as f64 / total;
    assert!(
        (300.0..520.0).contains(&rate),
        "{events} events in {total} s"
    );
    // The latency histograms hold the measured period's events only.
    let read = &warm["latency"]["read"];
    assert_eq!(
        read["count"].as_u64().unwrap(),
        warm["counts"]["reads"].as_u64().unwrap()
    );
    // Without a warm-up nothing is left out, and the field is absent.
    let (cold, _) = run(&["--time=2"]);
    assert!(cold.get("warmup_s").is_none(), "{cold}");
}

#[test]
fn a_warmup_needs_a_time_limit_and_no_checkpoints() {
    let d = scratch();
    for (extra, says) in [
        (&["--time=0", "--events=100"][..], "--warmup needs --time"),
        (
            &["--time=5", "--report-checkpoints=2"][..],
            "--report-checkpoints",
        ),
        (
            &["--time=5", "--warmup=-1"][..],
            "Invalid value for --warmup",
        ),
    ] {
        let mut args = vec![
            "fileio",
            "--file-total-size=1M",
            "--file-num=1",
            "--file-test-mode=rndrd",
            "--warmup=1",
        ];
        args.extend_from_slice(extra);
        args.push("run");
        let r = tb(d.path(), &args);
        assert_eq!(r.code, 1, "{extra:?}: {}{}", r.stdout, r.stderr);
        let text = format!("{}{}", r.stdout, r.stderr);
        assert!(text.contains(says), "{extra:?}: {text}");
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "nothing written"
        );
    }
}

/// Issue 37: `--events` counts after the warm-up, as `--time` does: a
/// limit smaller than the warm-up's events still measures that many events
/// after it, instead of ending inside the warm-up.
#[test]
fn the_event_limit_counts_after_the_warmup() {
    let d = scratch();
    let set = ["--file-total-size=4M", "--file-num=2"];
    assert_eq!(tb(d.path(), &["fileio", set[0], set[1], "prepare"]).code, 0);
    // 2 ms per request: about 500 events in the 1 s warm-up.
    let started = std::time::Instant::now();
    let r = tb(
        d.path(),
        &[
            "fileio",
            set[0],
            set[1],
            "--file-test-mode=rndrd",
            "--tb-inject-latency=fixed:2ms",
            "--format=json",
            "--warmup=1",
            "--time=30",
            "--events=100",
            "run",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let wall = started.elapsed().as_secs_f64();
    let doc = json_of(&r.stdout);
    assert_eq!(doc["warmup_s"], 1);
    // The run went past the warm-up, then stopped at the limit.
    assert!((1.0..20.0).contains(&wall), "ran {wall} s");
    assert_eq!(doc["counts"]["events"].as_u64(), Some(100), "{doc}");
    let total = doc["total_time_s"].as_f64().unwrap();
    assert!(total > 0.1 && total < 1.0, "measured {total} s");
    // And the help says so.
    let help = tb(d.path(), &["fileio", "help"]);
    assert!(
        help.stdout.contains("--time and --events count after it"),
        "{}",
        help.stdout
    );
}
