//! `probe nfs://` against scripted broken servers on 127.0.0.1 (issue 37):
//! a call past its deadline does not leave the scratch file behind, a
//! refused REMOVE names it, and a server late on every reply cannot make
//! the probe run past its documented bound.

use fileio::probe::{ProbeError, ProbeSpec, ProbeTarget};
use nfs::testing::scripted::{answer_sanely, reply, Peer, NFS_PROGRAM};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const NULL: u32 = 0;
const REMOVE: u32 = 12;

fn spec(peer: &Peer, extra: &str, time_per_op: Duration) -> ProbeSpec {
    let url = format!("{}{extra}", peer.url());
    let mut spec = ProbeSpec::new(ProbeTarget::from_path(Path::new(&url)).unwrap());
    spec.samples = 3;
    spec.time_per_op = time_per_op;
    spec
}

/// A peer that never answers NULL (its call runs past the 1 s deadline and
/// the connection is dropped) and answers REMOVE with `remove_status`,
/// counting the REMOVEs.
fn null_never_answers(remove_status: u32) -> (Peer, Arc<AtomicU32>) {
    let removes = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&removes);
    let peer = Peer::start(move |call, s| {
        if call.prog == NFS_PROGRAM && call.proc_ == NULL {
            std::thread::sleep(Duration::from_secs(2));
            return Err(std::io::Error::other("no answer"));
        }
        if call.prog == NFS_PROGRAM && call.proc_ == REMOVE {
            seen.fetch_add(1, Ordering::SeqCst);
            let body = [remove_status.to_be_bytes(), [0; 4], [0; 4]].concat();
            return s.write_all(&reply(call.xid, &body));
        }
        answer_sanely(call, s, 0)
    });
    (peer, removes)
}

#[test]
fn a_call_past_its_deadline_still_removes_the_scratch_file() {
    let (peer, removes) = null_never_answers(0);
    let e = fileio::probe::run(
        &spec(&peer, "&timeout_s=1", Duration::from_secs(5)),
        &mut |_| {},
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, ProbeError::Nfs(_)), "{msg}");
    assert!(msg.contains("NULL got no complete reply"), "{msg}");
    // The broken connection could not send it: a new one did.
    assert_eq!(removes.load(Ordering::SeqCst), 1, "{msg}");
}

#[test]
fn a_refused_remove_names_the_scratch_file() {
    let (peer, removes) = null_never_answers(13);
    let e = fileio::probe::run(
        &spec(&peer, "&timeout_s=1", Duration::from_secs(5)),
        &mut |_| {},
    )
    .unwrap_err();
    let msg = e.to_string();
    assert_eq!(msg.lines().count(), 1, "{msg}");
    assert!(msg.contains("NULL got no complete reply"), "{msg}");
    let name = format!("tankbench-probe.{}", std::process::id());
    assert!(
        msg.contains(&format!(
            "the scratch file {name} is left in nfs://127.0.0.1/export"
        )),
        "{msg}"
    );
    assert!(msg.contains("REMOVE failed: NFS3ERR_ACCES"), "{msg}");
    // A refusal is not sent again.
    assert_eq!(removes.load(Ordering::SeqCst), 1, "{msg}");
}

#[test]
fn a_server_late_on_every_reply_cannot_stretch_the_probe_past_its_bound() {
    let removes = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&removes);
    let peer = Peer::start(move |call, s| {
        if call.prog == NFS_PROGRAM && call.proc_ == REMOVE {
            seen.fetch_add(1, Ordering::SeqCst);
            return answer_sanely(call, s, 0);
        }
        // Every other reply 300 ms late: mounting, creating and filling the
        // 1 MiB file alone take 20 of them (6 s).
        std::thread::sleep(Duration::from_millis(300));
        answer_sanely(call, s, 0)
    });
    let spec = spec(&peer, "", Duration::from_millis(400));
    assert_eq!(spec.bound(), Duration::from_secs(4));
    let t0 = Instant::now();
    let e = fileio::probe::run(&spec, &mut |_| {}).unwrap_err();
    let took = t0.elapsed();
    assert!(
        took < spec.bound() + Duration::from_millis(500),
        "{took:?}: {e}"
    );
    let msg = e.to_string();
    assert!(msg.contains("ran out") || msg.contains("deadline"), "{msg}");
    assert_eq!(removes.load(Ordering::SeqCst), 1, "{msg}");
}
