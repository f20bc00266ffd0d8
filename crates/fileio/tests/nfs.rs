//! `--file-dir=nfs://`: the workload over tankbench's NFS client against a
//! real nfs-ganesha in a network namespace. One test function, because it
//! compares the process-wide count of NFS calls with the run's requests.

use fileio::sysbench::cli::execute;
use nfs::testing::fixture::TestServer;

fn words(url: &str, extra: &[&str], verb: &str) -> Vec<String> {
    let mut w: Vec<String> = [
        "fileio",
        "--file-num=2",
        "--file-total-size=4M",
        "--file-block-size=16K",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    w.push(format!("--file-dir={url}"));
    w.extend(extra.iter().map(|s| s.to_string()));
    w.push(verb.to_string());
    w
}

/// Run `extra` and return the result's (reads, writes, fsyncs) and the NFS
/// calls made meanwhile.
fn run(url: &str, extra: &[&str]) -> ((u64, u64, u64), nfs::Counts) {
    let before = nfs::process_counts();
    let inv = execute(&words(url, extra, "run"));
    assert_eq!(inv.exit_code, 0, "run {extra:?}");
    let after = nfs::process_counts();
    let c = &inv.results[0].counts;
    let calls = nfs::Counts {
        read: after.read - before.read,
        write: after.write - before.write,
        stable_write: after.stable_write - before.stable_write,
        commit: after.commit - before.commit,
        other: after.other - before.other,
    };
    ((c.reads, c.writes, c.fsyncs), calls)
}

#[test]
fn prepare_run_cleanup_over_nfs_send_one_call_per_request() {
    let _ = testkit::require!("root", "ip", "rpcbind", "ganesha.nfsd");
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start("fileio", dir.path()).unwrap();
    let url = srv.url.clone();
    let export = dir.path().to_path_buf();
    srv.in_netns(move || {
        let inv = execute(&words(&url, &["--validate"], "prepare"));
        assert_eq!(inv.exit_code, 0);
        for i in 0..2 {
            let len = std::fs::metadata(export.join(format!("test_file.{i}")))
                .unwrap()
                .len();
            assert_eq!(len, 2 << 20, "prepared over NFS, seen on the server");
        }
        // Reads: one READ per request; --validate checks the blocks prepare
        // wrote, so the data really went through.
        let ((reads, _, _), calls) = run(
            &url,
            &["--file-test-mode=rndrd", "--events=300", "--validate"],
        );
        assert_eq!((reads, calls.read), (300, 300));

        // Unstable writes (the Linux client's default): every fsync of a
        // file written since its last COMMIT sends one COMMIT; the file not
        // written needs none.
        let ((_, writes, fsyncs), calls) = run(
            &url,
            &[
                "--file-test-mode=rndwr",
                "--events=200",
                "--file-fsync-freq=1",
            ],
        );
        // (An event is a write or a periodic fsync, so about a third of the
        // 200 are writes.)
        assert!(
            writes > 0 && fsyncs >= 2 * writes,
            "every file after every write"
        );
        assert_eq!(
            (calls.write, calls.stable_write, calls.commit),
            (writes, 0, writes)
        );

        // Stable writes (ESXi's datastore client; O_SYNC on Linux): every
        // WRITE FILE_SYNC and no COMMIT at all, whatever fsyncs are asked.
        let ((_, writes, _), calls) = run(
            &url,
            &[
                "--file-test-mode=rndwr",
                "--events=200",
                "--file-fsync-freq=1",
                "--file-extra-flags=sync",
            ],
        );
        assert!(writes > 0);
        assert_eq!(
            (calls.write, calls.stable_write, calls.commit),
            (writes, writes, 0)
        );

        // seqwr recreates the files, as a local run does.
        let ((_, writes, _), _) = run(&url, &["--file-test-mode=seqwr", "--events=8"]);
        assert_eq!(writes, 8);

        let inv = execute(&words(&url, &[], "cleanup"));
        assert_eq!(inv.exit_code, 0);
        assert!(!export.join("test_file.0").exists() && !export.join("test_file.1").exists());
    });
}

#[test]
fn nfs_file_sets_refuse_what_the_client_cannot_do() {
    // No server needed: these are refused while the options are read.
    let bad = execute(&words(
        "nfs://nas/x?version=4",
        &["--file-test-mode=rndrd"],
        "run",
    ));
    assert_eq!(bad.exit_code, 1);
    let bad = execute(&words(
        "nfs://nas/x",
        &["--file-test-mode=rndrd", "--file-io-mode=async"],
        "run",
    ));
    assert_eq!(bad.exit_code, 1);
}
