//! `tankbench probe`: round trips against a real nfs-ganesha export (in a
//! network namespace of its own) and on a local directory, and the
//! refusals of targets it does not know.

mod common;

use common::{scratch, tb};
use nfs::testing::fixture::TestServer;
use serde_json::Value;
use std::process::Command;

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The operations of a probe document with their sample counts, after
/// checking each one's latency summary.
fn operations(doc: &Value) -> Vec<(String, u64)> {
    doc["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let samples = o["samples"].as_u64().unwrap();
            let l = &o["latency"];
            assert_eq!(l["count"].as_u64(), Some(samples), "{o}");
            let p: Vec<f64> = l["percentiles"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| q["ms"].as_f64().unwrap())
                .collect();
            assert_eq!(p.len(), 4, "{o}");
            assert!(p.windows(2).all(|w| w[0] <= w[1]), "{o}");
            assert!(l["min_ms"].as_f64().unwrap() > 0.0, "{o}");
            assert!(p[3] <= l["max_ms"].as_f64().unwrap(), "{o}");
            assert!(!o["call"].as_str().unwrap().is_empty());
            (o["op"].as_str().unwrap().to_string(), samples)
        })
        .collect()
}

#[test]
fn probe_of_a_local_directory_times_each_system_call_and_removes_its_file() {
    let target = scratch();
    let out = scratch();
    let saved = out.path().join("probe.json");
    let r = tb(
        out.path(),
        &[
            "probe",
            target.path().to_str().unwrap(),
            "--samples=25",
            "--format=json",
            &format!("--json={}", saved.display()),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = json_of(&r.stdout);
    assert_eq!(doc["kind"], "tankbench.probe");
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["transport"], "local");
    assert_eq!(doc["interrupted"], false);
    let ops = operations(&doc);
    let names: Vec<&str> = ops.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "getattr",
            "read_4k",
            "stable_write_4k",
            "unstable_write_4k",
            "commit",
            "commit_clean"
        ]
    );
    assert!(ops.iter().all(|(_, n)| *n == 25), "{ops:?}");
    // The saved document is the printed one, and the library reads it.
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), r.stdout);
    let back = fileio::probe::ProbeResult::from_json(&r.stdout).unwrap();
    assert!(back.operation(fileio::probe::ProbeOp::Null).is_none());
    assert_eq!(testkit::dir_names(target.path()), Vec::<String>::new());
}

#[test]
fn probe_of_an_nfs_export_times_null_getattr_read_write_and_commit() {
    let [_, _, _, _] = testkit::require!("root", "ip", "rpcbind", "ganesha.nfsd");
    let export = tempfile::tempdir().unwrap();
    let srv = TestServer::start("probe", export.path()).unwrap();
    let url = srv.url.clone();
    let run = move |args: Vec<String>| {
        // The server's address exists only in its namespace: the command
        // runs from a thread that entered it (a child inherits it).
        srv.in_netns(move || {
            Command::new(common::tankbench_bin())
                .args(&args)
                .output()
                .unwrap()
        })
    };
    let before = nfs::process_counts();
    let out = run(vec![
        "probe".into(),
        url.clone(),
        "--samples=30".into(),
        "--format=json".into(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The probe ran in its own process: this one made no calls.
    assert_eq!(nfs::process_counts(), before);
    let doc = json_of(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(doc["transport"], "nfs3");
    // The document names the export (the URL without its port parameters).
    assert_eq!(doc["target"], url.split('?').next().unwrap());
    let ops = operations(&doc);
    let names: Vec<&str> = ops.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "null",
            "getattr",
            "read_4k",
            "stable_write_4k",
            "unstable_write_4k",
            "commit",
            "commit_clean"
        ]
    );
    assert!(ops.iter().all(|(_, n)| *n == 30), "{ops:?}");
    let call = |op: &str| {
        doc["operations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["op"] == op)
            .unwrap()["call"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(call("null"), "NULL");
    assert_eq!(call("stable_write_4k"), "WRITE 4 KiB FILE_SYNC");
    // The scratch file was removed through the export.
    assert_eq!(testkit::dir_names(export.path()), Vec::<String>::new());

    // The table names each call; a time cap ends an operation early.
    let out = run(vec![
        "probe".into(),
        url,
        "--samples=1000000".into(),
        "--time-per-op=100ms".into(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for call in [
        "NULL",
        "GETATTR",
        "READ 4 KiB",
        "COMMIT after a 4 KiB UNSTABLE WRITE",
    ] {
        assert!(stdout.contains(call), "{call}: {stdout}");
    }
    assert!(stdout.contains("p99.9 µs"), "{stdout}");
    assert_eq!(testkit::dir_names(export.path()), Vec::<String>::new());
}

#[test]
fn targets_probe_does_not_know_are_refused_in_one_line() {
    let here = scratch();
    let file = here.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["smb://host/share".into()],
            "smb:// is not a target probe knows; accepted: nfs://HOST[:PORT]/EXPORT or a local directory",
        ),
        (vec!["nfs://host".into()], "no export path"),
        (
            vec!["nfs://127.0.0.1/x?version=4".into()],
            "only NFS version 3 is supported",
        ),
        (
            vec![file.display().to_string()],
            "not a directory (probe makes its scratch file in a directory)",
        ),
        (
            vec![here.path().display().to_string(), "--samples=0".into()],
            "--samples=0: accepted: 1 to 1000000",
        ),
        (
            vec![here.path().display().to_string(), "--time-per-op=x".into()],
            "--time-per-op=x: not a duration",
        ),
        // Nothing listens on port 1 of 127.0.0.1: refused at once.
        (
            vec!["nfs://127.0.0.1:1/x?mountport=1".into()],
            "NFS server 127.0.0.1:1: MOUNT connect failed",
        ),
        // Issue 37: mount(8)'s HOST:/EXPORT is an NFS export, not a
        // directory name (here its portmapper is asked first).
        (vec!["127.0.0.1:/export".into()], "NFS server 127.0.0.1:111"),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["probe".to_string()];
        args.extend(extra.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = tb(here.path(), &args);
        assert_eq!(r.code, 1, "{extra:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{extra:?}: {}", r.stderr);
        assert!(r.stderr.contains(expected), "{extra:?}: {}", r.stderr);
        assert_eq!(r.stdout, "");
    }
    assert_eq!(testkit::dir_names(here.path()), ["plain"]);
}

/// Issue 37: a run against a server whose READ replies claim more bytes
/// than were asked fails with EIO as before, and the line says what the
/// server did wrong instead of ending at `errno = 5`.
#[test]
fn an_overlong_read_reply_is_named_in_the_failure_line() {
    use nfs::testing::scripted::{answer_sanely, reply, Peer, Xdr, NFS_PROGRAM};
    use std::io::Write as _;
    let peer = Peer::start(|call, s| {
        if call.prog == NFS_PROGRAM && call.proc_ == 6 {
            // READ: OK, no attributes, a count of 1 MiB, not at the end.
            let body = Xdr::default()
                .u32(0)
                .u32(0)
                .u32(1 << 20)
                .u32(0)
                .opaque(&[0; 16]);
            return s.write_all(&reply(call.xid, &body.0));
        }
        answer_sanely(call, s, 1 << 20)
    });
    let d = scratch();
    let dir = format!("--file-dir={}&timeout_s=2", peer.url());
    let r = tb(
        d.path(),
        &[
            "fileio",
            "--file-num=1",
            "--file-total-size=1M",
            "--file-test-mode=seqrd",
            "--time=1",
            &dir,
            "run",
        ],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("Failed to read file!"))
        .unwrap_or_else(|| panic!("{}{}", r.stdout, r.stderr));
    assert!(
        line.contains("errno = 5 (Input/output error: NFS server 127.0.0.1:"),
        "{line}"
    );
    assert!(
        line.contains("READ reply claims 1048576 bytes read where 16384 were asked"),
        "{line}"
    );
}
