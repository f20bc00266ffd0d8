//! The result document against its documentation, and the latency names the
//! text report and the document use with `--rate`.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;

/// What docs/json.md documents: `fields` as (object path, field name) and
/// `keys` as (map path, key).
#[derive(Debug, Default)]
struct Documented {
    fields: BTreeSet<(String, String)>,
    keys: BTreeSet<(String, String)>,
}

/// The names in the code spans of `text`.
fn code_spans(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Parse docs/json.md. A level-2 heading names an object: `Top level` the
/// document itself, any other the path in its first code span (`workload`,
/// `intervals[]`, `latency.*`). Under it, a table whose first header cell is
/// `field` lists the object's fields, one whose first header cell is `key` the
/// keys of a map; each row's first cell holds one or more names in code spans.
fn documented() -> Documented {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/json.md");
    let text = std::fs::read_to_string(&path).expect("docs/json.md");
    let mut doc = Documented::default();
    let mut object: Option<String> = None;
    // The kind of the table being read ("field", "key" or another header).
    let mut table: Option<String> = None;
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            object = if heading.trim() == "Top level" {
                Some(String::new())
            } else {
                code_spans(heading).into_iter().next()
            };
            table = None;
            continue;
        }
        let Some(row) = line.strip_prefix('|') else {
            table = None;
            continue;
        };
        let first = row.split('|').next().unwrap_or("").trim();
        match &table {
            None => table = Some(first.to_string()),
            Some(_) if first.starts_with("---") => {}
            Some(kind) => {
                let Some(object) = &object else { continue };
                for name in code_spans(first) {
                    let entry = (object.clone(), name);
                    match kind.as_str() {
                        "field" => doc.fields.insert(entry),
                        "key" => doc.keys.insert(entry),
                        _ => false,
                    };
                }
            }
        }
    }
    doc
}

/// Where docs/json.md documents a part of `environment.zfs` that occurs in
/// several places: the vdevs of every class and their children are one
/// object, the ARC's two snapshots another, its three counter sets a third.
fn zfs_doc_path(path: String) -> String {
    if path.starts_with("environment.zfs.pool.") {
        return "environment.zfs.pool.*[]".into();
    }
    match path.as_str() {
        "environment.zfs.arc.before" | "environment.zfs.arc.after" => {
            "environment.zfs.arc.snapshot".into()
        }
        "environment.zfs.arc.delta" | "environment.zfs.arc.snapshot.counters" => {
            "environment.zfs.arc.counters".into()
        }
        _ => path,
    }
}

/// Walk a result document the way docs/json.md names its parts: `labels`
/// and `environment.zfs.missing` hold free keys, `latency` and the ZFS
/// dataset's `properties` documented keys, `ranks` whole results.
fn walk(v: &Value, path: &str, found: &mut Documented) {
    match v {
        Value::Object(_) if path == "labels" || path == "environment.zfs.missing" => {}
        Value::Object(m) if path == "latency" || path == "environment.zfs.dataset.properties" => {
            for (k, x) in m {
                found.keys.insert((path.to_string(), k.clone()));
                walk(x, &format!("{path}.*"), found);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                found.fields.insert((path.to_string(), k.clone()));
                let inner = if path.is_empty() {
                    k.clone()
                } else {
                    zfs_doc_path(format!("{path}.{k}"))
                };
                walk(x, &inner, found);
            }
        }
        Value::Array(items) => {
            let inner = if path == "ranks" {
                String::new()
            } else {
                zfs_doc_path(format!("{path}[]"))
            };
            for x in items.iter().filter(|x| x.is_object()) {
                walk(x, &inner, found);
            }
        }
        _ => {}
    }
}

/// ZFS facts with every optional field set (`absent` too, which a real run
/// sets only alone).
fn every_zfs_fact() -> fileio::zfs_facts::ZfsFacts {
    use fileio::zfs_facts::*;
    let device = Vdev {
        name: "/dev/sdb".into(),
        kind: VdevKind::Device,
        parity: None,
        state: "ONLINE".into(),
        children: Vec::new(),
    };
    let raidz = Vdev {
        name: "raidz2-0".into(),
        kind: VdevKind::Raidz,
        parity: Some(2),
        children: vec![device.clone()],
        ..device.clone()
    };
    let one = vec![raidz];
    let snapshot = ArcSnapshot::default();
    ZfsFacts {
        absent: Some("remote NFS target".into()),
        platform: Some(Platform::OpenzfsLinux),
        version: Some("2.2.2-1".into()),
        dataset: Some(Dataset {
            name: "tank/bench".into(),
            properties: Dataset::PROPERTIES
                .iter()
                .map(|p| (p.to_string(), Property::default()))
                .collect(),
        }),
        pool: Some(PoolLayout {
            name: "tank".into(),
            state: "ONLINE".into(),
            version: Some(5000),
            data: one.clone(),
            logs: one.clone(),
            cache: one.clone(),
            special: one.clone(),
            dedup: one.clone(),
            spares: one,
        }),
        txg_timeout_s: Some(5),
        arc: Some(ArcFacts::over(
            "/proc/spl/kstat/zfs/arcstats",
            snapshot,
            ArcSnapshot {
                counters: ArcCounters {
                    hits: 1,
                    ..ArcCounters::default()
                },
                ..snapshot
            },
        )),
        iostat: vec![IostatSample {
            t_s: 1.0,
            rows: vec![IostatRow {
                name: "tank".into(),
                class: VdevClass::Pool,
                alloc_bytes: Some(1),
                free_bytes: Some(1),
                read_ops_per_s: 0.0,
                write_ops_per_s: 0.0,
                read_bytes_per_s: 0.0,
                write_bytes_per_s: 0.0,
                latency: Some(IostatLatency {
                    total_wait_read_ns: Some(1),
                    total_wait_write_ns: Some(1),
                    disk_wait_read_ns: Some(1),
                    disk_wait_write_ns: Some(1),
                    syncq_wait_read_ns: Some(1),
                    syncq_wait_write_ns: Some(1),
                    asyncq_wait_read_ns: Some(1),
                    asyncq_wait_write_ns: Some(1),
                }),
            }],
        }],
        missing: [("arc".to_string(), "why".to_string())].into(),
        write_path: Some(WritePathMeasurement {
            one_thread_writes_per_s: 1.0,
            two_threads_writes_per_s: 1.0,
        }),
    }
}

fn prepared() -> tempfile::TempDir {
    let d = scratch();
    let r = tb(
        d.path(),
        &["fileio", "--file-total-size=4M", "--file-num=2", "prepare"],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    d
}

fn json_run(dir: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "fileio",
        "--file-total-size=4M",
        "--file-num=2",
        "--file-test-mode=rndrw",
        "--format=json",
    ];
    args.extend_from_slice(extra);
    args.push("run");
    let r = tb(dir, &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).expect("one JSON document")
}

/// Issue 12: the documented fields and a real run's fields are the same sets,
/// object by object, and so are the latency keys. The run uses `--rate` (for
/// `event_service`), interval reports and a file set that fits in RAM (for a
/// warning); `ranks` and `distributed` need an MPI job, so `distributed` is
/// compared with the serialized type, every optional part present.
#[test]
fn documented_fields_are_the_fields_a_run_prints() {
    let doc = documented();
    assert!(
        doc.fields.len() > 80 && doc.keys.iter().filter(|(p, _)| p == "latency").count() == 5,
        "docs/json.md parsed into {doc:?}"
    );
    let d = prepared();
    let open = json_run(d.path(), &["--time=2", "--rate=200", "--report-interval=1"]);
    let closed = json_run(d.path(), &["--events=200"]);
    let mut found = Documented::default();
    walk(&open, "", &mut found);
    walk(&closed, "", &mut found);
    assert!(
        !open["intervals"].as_array().unwrap().is_empty()
            && !open["warnings"].as_array().unwrap().is_empty(),
        "the run must fill every array the document has: {open}"
    );
    let distributed = fileio::result::Distributed {
        rank: Some(0),
        first_done_s: Some(0.0),
        last_done_s: Some(0.0),
        clock_spread_s: Some(0.0),
        test_files: vec![("/t/test_file.0".into(), 1)],
        ..Default::default()
    };
    walk(
        &serde_json::json!({ "distributed": distributed }),
        "",
        &mut found,
    );
    // `durability` comes from `durability verify`, checked on a real one in
    // `durability_section_is_documented`; here its serialized type.
    let durability = fileio::result::Durability {
        examples: vec![fileio::result::DurabilityExample::default()],
        ..Default::default()
    };
    walk(
        &serde_json::json!({ "durability": durability }),
        "",
        &mut found,
    );
    found.fields.insert((String::new(), "ranks".into()));
    // `environment.zfs` needs a run on ZFS (checked on zfs-fuse in
    // zfs_facts.rs); here its serialized type, every optional part present.
    walk(
        &serde_json::json!({ "environment": { "zfs": every_zfs_fact() } }),
        "",
        &mut found,
    );

    let undocumented: Vec<_> = found.fields.difference(&doc.fields).collect();
    let unproduced: Vec<_> = doc.fields.difference(&found.fields).collect();
    assert!(
        undocumented.is_empty() && unproduced.is_empty(),
        "fields not in docs/json.md: {undocumented:?}; documented but not produced: {unproduced:?}"
    );
    assert_eq!(found.keys, doc.keys, "latency keys");
    // `event_service` is documented as `--rate` only.
    assert!(open["latency"].get("event_service").is_some());
    assert!(closed["latency"].get("event_service").is_none());
}

/// The rows of the "Latency by operation" table: (label, count, avg ms).
fn latency_rows(stdout: &str) -> Vec<(String, u64, f64)> {
    let start = stdout
        .find("Latency by operation (ms):")
        .unwrap_or_else(|| panic!("no latency table in:\n{stdout}"));
    stdout[start..]
        .lines()
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            // The label column is 15 characters wide after a 4-space indent.
            let (label, rest) = l[4..].split_at(15);
            let cols: Vec<&str> = rest.split_whitespace().collect();
            (
                label.trim().to_string(),
                cols[0].parse().unwrap(),
                cols[2].parse().unwrap(),
            )
        })
        .collect()
}

/// Issue 12: with `--rate`, the table labelled the response time "event
/// service" and never printed the service time. One thread serving 2 ms
/// requests (injected delays instead of I/O) manages 500 events/s, so arrivals
/// at 1000/s queue and the response time grows far beyond the service time;
/// each must show under its own name, in the table and in the JSON.
#[test]
fn rate_shows_response_and_service_time_each_under_its_name() {
    let d = prepared();
    let json = d.path().join("result.json");
    let r = tb(
        d.path(),
        &[
            "fileio",
            "--file-total-size=4M",
            "--file-num=2",
            "--file-test-mode=rndrd",
            "--events=300",
            "--rate=1000",
            "--tb-inject-latency=fixed:2ms",
            &format!("--json={}", json.display()),
            "run",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let rows = latency_rows(&r.stdout);
    let labels: Vec<&str> = rows.iter().map(|(l, _, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        ["read", "event response", "event service"],
        "{}",
        r.stdout
    );
    let (_, response_n, response_avg) = rows[1];
    let (_, service_n, service_avg) = rows[2];
    assert_eq!((response_n, service_n), (300, 300));
    assert!(service_avg >= 1.9, "service {service_avg} ms");
    assert!(
        response_avg > 5.0 * service_avg,
        "queueing must show in the response time: {response_avg} vs {service_avg} ms"
    );
    // sysbench's own section reports the response time, as sysbench 1.0.20
    // does with --rate.
    let sysbench_avg = report_value(&r.stdout, "avg:");
    assert!(
        (sysbench_avg - response_avg).abs() <= 0.01,
        "sysbench avg {sysbench_avg} vs event response {response_avg}"
    );

    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let keys: BTreeSet<&str> = v["latency"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        BTreeSet::from(["event", "event_service", "fsync", "read", "write"])
    );
    let mean = |k: &str| v["latency"][k]["mean_ms"].as_f64().unwrap();
    assert!((mean("event") - response_avg).abs() < 0.0015, "{v}");
    assert!((mean("event_service") - service_avg).abs() < 0.0015, "{v}");
    let typed: fileio::result::RunResult = serde_json::from_value(v).unwrap();
    assert_eq!(typed.workload.rate, 1000);
}

/// Issue 15: the `durability` section a real `durability verify` prints (with
/// an example, from a damaged block) is the one docs/json.md documents.
#[test]
fn durability_section_is_documented() {
    let doc = documented();
    let d = scratch();
    std::fs::create_dir(d.path().join("set")).unwrap();
    let r = tb(
        d.path(),
        &[
            "durability",
            "write",
            "set",
            "--journal=j",
            "--file-num=1",
            "--file-total-size=256K",
            "--time=1",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // Zero every block: each acknowledged write is now lost.
    std::fs::write(d.path().join("set/durability.0"), vec![0u8; 256 * 1024]).unwrap();
    let r = tb(
        d.path(),
        &["durability", "verify", "set", "--from=j", "--json=v.json"],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let v: Value =
        serde_json::from_slice(&std::fs::read(d.path().join("v.json")).unwrap()).unwrap();
    assert!(!v["durability"]["examples"].as_array().unwrap().is_empty());
    let mut found = Documented::default();
    walk(&v["durability"], "durability", &mut found);
    let documented: BTreeSet<_> = doc
        .fields
        .iter()
        .filter(|(object, _)| object.starts_with("durability"))
        .cloned()
        .collect();
    assert_eq!(found.fields, documented);
    assert_eq!(v["warnings"][0]["code"], "acknowledged_writes_lost");
}
