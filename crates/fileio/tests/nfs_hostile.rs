//! `--file-dir=nfs://` against scripted broken servers on 127.0.0.1 (no
//! root, no nfs-ganesha): prepare and run end with exit code 1 within the
//! calls' deadlines instead of looping or trusting the server.

use fileio::sysbench::cli::execute;
use nfs::testing::scripted::{answer_sanely, reply, Peer, Xdr, NFS_PROGRAM};
use std::io::Write;
use std::time::{Duration, Instant};

fn fileio(peer: &Peer, verb: &str) -> i32 {
    let words: Vec<String> = [
        "fileio".to_string(),
        "--file-num=1".into(),
        "--file-total-size=1M".into(),
        "--file-test-mode=seqrd".into(),
        "--time=1".into(),
        format!("--file-dir={}&timeout_s=1", peer.url()),
        verb.into(),
    ]
    .to_vec();
    execute(&words).exit_code
}

#[test]
fn prepare_against_a_server_that_takes_no_bytes_fails_instead_of_looping() {
    let peer = Peer::start(|call, s| {
        if call.prog == NFS_PROGRAM && call.proc_ == 7 {
            // WRITE: OK, but 0 bytes taken, every time.
            let body = Xdr::default()
                .u32(0)
                .u32(0)
                .u32(0)
                .u32(0)
                .u32(2)
                .bytes(&[7; 8]);
            return s.write_all(&reply(call.xid, &body.0));
        }
        // LOOKUP finds no file, so prepare creates and fills it.
        if call.prog == NFS_PROGRAM && call.proc_ == 3 {
            return s.write_all(&reply(call.xid, &[0, 0, 0, 2, 0, 0, 0, 0]));
        }
        answer_sanely(call, s, 0)
    });
    let t0 = Instant::now();
    assert_eq!(fileio(&peer, "prepare"), 1);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}

#[test]
fn a_run_against_a_server_claiming_a_2_64_minus_1_byte_file_fails() {
    let peer = Peer::start(|call, s| answer_sanely(call, s, u64::MAX));
    let t0 = Instant::now();
    assert_eq!(fileio(&peer, "run"), 1);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    // The same server with a plausible file: the run reads it.
    let peer = Peer::start(|call, s| {
        if call.prog == NFS_PROGRAM && call.proc_ == 6 {
            let data = vec![0u8; 16384];
            let body = Xdr::default().u32(0).u32(0).u32(16384).u32(0).opaque(&data);
            return s.write_all(&reply(call.xid, &body.0));
        }
        answer_sanely(call, s, 1 << 20)
    });
    assert_eq!(fileio(&peer, "run"), 0);
}
