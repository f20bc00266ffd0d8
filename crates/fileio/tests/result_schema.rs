//! Result files written before the latency keys and workload fields became
//! enums (schema version 1, tankbench at commit a4c2dd6) still load, and
//! loading and writing them again gives the same document: the JSON text of
//! schema 1 did not change.
//!
//! `schema1-open-loop-async.json`: `fileio --file-test-mode=rndrw --rate=200
//! --time=2 --report-interval=1 --file-io-mode=async --file-fsync-mode=fdatasync
//! --file-data=random --file-extra-flags=dsync run --json=FILE`.
//! `schema1-stored-seqwr.json`: `fileio --file-test-mode=seqwr --events=500
//! --file-fsync-freq=10 --percentiles=50,99 --save --label=layout=mirror,slog=no
//! run`, as the result store wrote it.

use fileio::result::{LatencyKey, RunResult, SCHEMA_VERSION};
use fileio::spec::{DataPattern, FsyncMode, IoMode, Mode};
use serde_json::Value;

fn fixture(name: &str) -> (Value, RunResult) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: Value = serde_json::from_slice(&bytes).unwrap();
    let typed: RunResult =
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{name} no longer loads: {e}"));
    (value, typed)
}

#[test]
fn an_open_loop_async_result_of_schema_1_loads_with_its_enums() {
    let (value, r) = fixture("schema1-open-loop-async.json");
    assert_eq!(r.schema_version, 1);
    assert_eq!(SCHEMA_VERSION, 1, "a new schema version needs new fixtures");
    let w = &r.workload;
    assert_eq!(
        (w.mode, w.io_mode, w.fsync_mode, w.data),
        (
            Mode::RndRw,
            IoMode::Async,
            FsyncMode::Fdatasync,
            DataPattern::Random
        )
    );
    assert_eq!(w.rate, 200);
    let keys: Vec<LatencyKey> = r.latency.keys().copied().collect();
    assert_eq!(
        keys,
        [
            LatencyKey::Event,
            LatencyKey::Read,
            LatencyKey::Write,
            LatencyKey::Fsync,
            LatencyKey::EventService
        ]
    );
    // `event` is the response time, `event_service` the service time: the
    // same events, and none served slower than it was answered.
    let (event, service) = (
        &r.latency[&LatencyKey::Event],
        &r.latency[&LatencyKey::EventService],
    );
    assert_eq!(event.count, service.count);
    assert!(event.mean_ms >= service.mean_ms);
    assert_eq!(
        event.at(95.0),
        value["latency"]["event"]["percentiles"][1]["ms"].as_f64()
    );
    assert_eq!(serde_json::to_value(&r).unwrap(), value);
}

#[test]
fn a_stored_closed_loop_result_of_schema_1_loads_and_writes_back_the_same() {
    let (value, r) = fixture("schema1-stored-seqwr.json");
    let w = &r.workload;
    assert_eq!(
        (w.mode, w.io_mode, w.fsync_mode, w.data),
        (
            Mode::SeqWr,
            IoMode::Sync,
            FsyncMode::Fsync,
            DataPattern::Zero
        )
    );
    assert_eq!(r.labels["layout"], "mirror");
    assert!(!r.latency.contains_key(&LatencyKey::EventService));
    assert!(r.latency[&LatencyKey::Write].at(99.0).is_some());
    assert_eq!(r.latency[&LatencyKey::Write].at(95.0), None);
    assert_eq!(serde_json::to_value(&r).unwrap(), value);
}

#[test]
fn unknown_latency_keys_and_modes_are_refused_with_their_name() {
    let (mut value, _) = fixture("schema1-stored-seqwr.json");
    let mut other = value.clone();
    let latency = value["latency"].as_object_mut().unwrap();
    let event = latency.remove("event").unwrap();
    latency.insert("event_response".into(), event);
    let e = serde_json::from_value::<RunResult>(value).unwrap_err();
    assert!(e.to_string().contains("event_response"), "{e}");
    other["workload"]["mode"] = "randread".into();
    let e = serde_json::from_value::<RunResult>(other).unwrap_err();
    assert!(e.to_string().contains("randread"), "{e}");
}
