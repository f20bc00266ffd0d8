//! The client against scripted hostile or broken servers on 127.0.0.1 (no
//! root, no nfs-ganesha): every case ends within its deadline in one error
//! line naming the server and the procedure, or in a bounded result.

use nfs::testing::scripted::{self, answer_sanely, reply, Call, Peer, Xdr, FILE_FH, MOUNT_PROGRAM};
use nfs::{CallError, Client, Error, Fh, Stable, Target, MAX_SHORT_RESENDS};
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Short deadlines: every test ends in well under a second or two.
const DEADLINE: Duration = Duration::from_millis(400);
/// Room for a loaded machine (two cores shared with compiles) past a
/// deadline; a hang would be many times this.
const SLACK: Duration = Duration::from_millis(1500);

fn target(peer: &Peer) -> Target {
    let mut t = Target::parse(&peer.url()).unwrap();
    t.call_timeout = DEADLINE;
    t
}

/// The error is one line naming the server and the procedure.
fn assert_one_line(e: &Error, peer: &Peer, procedure: &str) {
    let text = e.to_string();
    eprintln!("{text}");
    let server = format!("NFS server 127.0.0.1:{}: {procedure} ", peer.port);
    assert!(
        text.starts_with(&server) && !text.contains('\n'),
        "{text:?} should start with {server:?}"
    );
}

fn sane(call: &Call, s: &mut TcpStream) -> std::io::Result<()> {
    answer_sanely(call, s, 1 << 20)
}

/// Mount a peer whose WRITEs are answered by `write` (the rest sanely) and
/// create a file on it.
fn mounted(
    write: impl Fn(&Call, &mut TcpStream) -> std::io::Result<()> + Send + Sync + 'static,
) -> (Peer, Client, Fh) {
    let peer = Peer::start(move |call, s| {
        if call.prog == scripted::NFS_PROGRAM && call.proc_ == 7 {
            write(call, s)
        } else {
            sane(call, s)
        }
    });
    let mut c = Client::mount(&target(&peer)).unwrap();
    let root = c.root().clone();
    let f = c.create(&root, "f", false).unwrap();
    assert_eq!(f.0, FILE_FH);
    (peer, c, f)
}

#[test]
fn a_sane_scripted_server_mounts_and_takes_writes() {
    let (_peer, mut c, f) = mounted(sane);
    assert_eq!(c.max_write(), 65536);
    let (n, committed) = c.write(&f, 0, &[1; 4096], Stable::Unstable).unwrap();
    assert_eq!((n, committed), (4096, Stable::FileSync));
    assert_eq!(
        c.write_all(&f, 0, &vec![1; 200_000], Stable::FileSync)
            .unwrap(),
        Stable::FileSync
    );
    assert_eq!(c.counts().write, 1 + 4, "200000 bytes in 65536-byte WRITEs");
    c.commit(&f).unwrap();
}

#[test]
fn replies_with_the_wrong_xid_for_ever_end_in_a_bounded_error() {
    // A stray reply every 10 ms, never the right one: the bound on stray
    // replies ends the call before its deadline.
    let peer = Peer::start(|call, s| loop {
        s.write_all(&reply(call.xid.wrapping_add(1000), &[0, 0, 0, 0]))?;
        std::thread::sleep(Duration::from_millis(10));
    });
    let t0 = Instant::now();
    let e = Client::mount(&target(&peer)).err().unwrap();
    assert_one_line(&e, &peer, "MNT");
    assert!(
        matches!(e.call_error(), Some(CallError::XidMismatch { skipped: 16 })),
        "{e}"
    );
    assert!(t0.elapsed() < DEADLINE + SLACK);

    // Slower stray replies (as in the issue, one every so often for ever)
    // end at the deadline of the whole call, not after each reply.
    let peer = Peer::start(|call, s| loop {
        s.write_all(&reply(call.xid ^ 0x5555, &[0, 0, 0, 0]))?;
        std::thread::sleep(Duration::from_millis(150));
    });
    let t0 = Instant::now();
    let e = Client::mount(&target(&peer)).err().unwrap();
    assert_one_line(&e, &peer, "MNT");
    assert!(
        matches!(e.call_error(), Some(CallError::Deadline { .. })),
        "{e}"
    );
    let took = t0.elapsed();
    assert!(took >= DEADLINE && took < DEADLINE + SLACK, "{took:?}");
}

#[test]
fn a_correct_mnt_reply_dripped_a_byte_at_a_time_fails_at_the_deadline() {
    let peer = Peer::start(|call, s| {
        let body = scripted::sane_result(call, 0).unwrap();
        for b in reply(call.xid, &body) {
            s.write_all(&[b])?;
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    });
    let t0 = Instant::now();
    let e = Client::mount(&target(&peer)).err().unwrap();
    let took = t0.elapsed();
    assert_one_line(&e, &peer, "MNT");
    let Some(CallError::Deadline { deadline, received }) = e.call_error() else {
        panic!("{e}");
    };
    assert_eq!(*deadline, DEADLINE);
    assert!((1..40).contains(received), "{received} bytes dripped in");
    assert!(e.to_string().contains("within its 0.4 s deadline"), "{e}");
    assert!(took >= DEADLINE && took < DEADLINE + SLACK, "{took:?}");
}

#[test]
fn a_write_answered_with_count_zero_fails_instead_of_being_sent_for_ever() {
    let (peer, mut c, f) = mounted(|call, s| {
        let body = Xdr::default()
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(2)
            .bytes(&[7; 8]);
        s.write_all(&reply(call.xid, &body.0))
    });
    let e = c.write(&f, 0, &[1; 4096], Stable::FileSync).unwrap_err();
    assert_one_line(&e, &peer, "WRITE");
    assert!(
        matches!(e.call_error(), Some(CallError::NoProgress { sent: 4096 })),
        "{e}"
    );
    assert_eq!(e.errno(), libc::EIO);
    let before = c.counts().write;
    let e = c
        .write_all(&f, 0, &[1; 4096], Stable::FileSync)
        .unwrap_err();
    assert_one_line(&e, &peer, "WRITE");
    assert_eq!(c.counts().write, before + 1, "not sent again");
}

#[test]
fn short_writes_are_sent_again_a_bounded_number_of_times() {
    // A server that takes one byte per WRITE.
    let (peer, mut c, f) = mounted(|call, s| {
        let body = Xdr::default()
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(1)
            .u32(2)
            .bytes(&[7; 8]);
        s.write_all(&reply(call.xid, &body.0))
    });
    let e = c
        .write_all(&f, 0, &[1; 4096], Stable::FileSync)
        .unwrap_err();
    assert_one_line(&e, &peer, "WRITE");
    let calls = 1 + MAX_SHORT_RESENDS;
    assert!(
        matches!(
            e.call_error(),
            Some(&CallError::ShortWrites { done, sent: 4096, calls: c }) if done == calls as usize && c == calls
        ),
        "{e}"
    );
    assert_eq!(c.counts().write, u64::from(calls));
}

#[test]
fn a_write_reply_claiming_more_bytes_than_were_sent_is_refused() {
    let (peer, mut c, f) = mounted(|call, s| {
        let body = Xdr::default()
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(call.write_count() + 1)
            .u32(2)
            .bytes(&[7; 8]);
        s.write_all(&reply(call.xid, &body.0))
    });
    let e = c.write(&f, 0, &[1; 100], Stable::FileSync).unwrap_err();
    assert_one_line(&e, &peer, "WRITE");
    assert_eq!(
        e.to_string(),
        format!(
            "NFS server 127.0.0.1:{}: WRITE reply claims 101 bytes written of the 100 sent",
            peer.port
        )
    );
}

#[test]
fn a_lookup_claiming_a_file_of_2_64_minus_1_bytes_is_refused() {
    let peer = Peer::start(|call, s| answer_sanely(call, s, u64::MAX));
    let mut c = Client::mount(&target(&peer)).unwrap();
    let root = c.root().clone();
    let e = c.lookup(&root, "test_file.0").unwrap_err();
    assert_one_line(&e, &peer, "LOOKUP");
    assert!(
        matches!(
            e.call_error(),
            Some(CallError::ImplausibleSize {
                size: u64::MAX,
                max: 0x7fff_ffff_ffff_ffff
            })
        ),
        "{e}"
    );
    // The largest size a file can have is believed.
    let peer = Peer::start(|call, s| answer_sanely(call, s, i64::MAX as u64));
    let mut c = Client::mount(&target(&peer)).unwrap();
    let root = c.root().clone();
    let (_, attr) = c.lookup(&root, "test_file.0").unwrap().unwrap();
    assert_eq!(attr.size, i64::MAX as u64);
}

#[test]
fn a_record_mark_of_2_31_minus_1_bytes_is_refused_at_once() {
    let peer = Peer::start(|_, s| {
        s.write_all(&0xffff_ffffu32.to_be_bytes())?;
        // Then nothing: the client must not wait for 2 GiB.
        std::thread::sleep(Duration::from_secs(30));
        Ok(())
    });
    let t0 = Instant::now();
    let e = Client::mount(&target(&peer)).err().unwrap();
    assert_one_line(&e, &peer, "MNT");
    assert!(
        matches!(
            e.call_error(),
            Some(CallError::RecordTooLong {
                len: 0x7fff_ffff,
                ..
            })
        ),
        "{e}"
    );
    assert!(t0.elapsed() < DEADLINE, "refused before the deadline");
}

#[test]
fn an_mnt_reply_with_a_file_handle_of_2_31_bytes_is_refused() {
    let peer = Peer::start(|call, s| {
        let body = Xdr::default().u32(0).u32(0x7fff_ffff).bytes(b"short");
        s.write_all(&reply(call.xid, &body.0))
    });
    let e = Client::mount(&target(&peer)).err().unwrap();
    assert_one_line(&e, &peer, "MNT");
    assert_eq!(
        e.to_string(),
        format!(
            "NFS server 127.0.0.1:{}: MNT reply announced a file handle of 2147483647 bytes, more than the 64 allowed",
            peer.port
        )
    );
}

#[test]
fn a_read_returning_more_than_was_asked_is_refused() {
    let peer = Peer::start(|call, s| {
        if call.prog == scripted::NFS_PROGRAM && call.proc_ == 6 {
            let data = vec![9u8; 8192];
            let body = Xdr::default().u32(0).u32(0).u32(8192).u32(0).opaque(&data);
            return s.write_all(&reply(call.xid, &body.0));
        }
        sane(call, s)
    });
    let mut c = Client::mount(&target(&peer)).unwrap();
    let f = Fh(FILE_FH.to_vec());
    let mut buf = vec![0u8; 4096];
    let e = c.read(&f, 0, &mut buf).unwrap_err();
    assert_one_line(&e, &peer, "READ");
    assert!(
        matches!(
            e.call_error(),
            Some(CallError::ReadCountOver {
                count: 8192,
                asked: 4096
            })
        ),
        "{e}"
    );
}

#[test]
fn a_server_that_closes_mid_reply_or_stays_silent_fails_the_call_and_the_connection() {
    let peer = Peer::start(|call, s| {
        if call.prog == MOUNT_PROGRAM {
            return sane(call, s);
        }
        if call.proc_ == 19 {
            return sane(call, s);
        }
        // Half a reply, then silence (the connection stays open).
        let r = reply(call.xid, &scripted::sane_result(call, 0).unwrap());
        s.write_all(&r[..r.len() / 2])?;
        std::thread::sleep(Duration::from_secs(30));
        Ok(())
    });
    let mut c = Client::mount(&target(&peer)).unwrap();
    let root = c.root().clone();
    let t0 = Instant::now();
    let e = c.create(&root, "f", false).unwrap_err();
    assert_one_line(&e, &peer, "CREATE");
    assert_eq!(e.errno(), libc::ETIMEDOUT);
    assert!(t0.elapsed() < DEADLINE + SLACK);
    // The stream is mid-record now: the next call fails at once.
    let t0 = Instant::now();
    let e = c.remove(&root, "f").unwrap_err();
    assert_one_line(&e, &peer, "REMOVE");
    assert!(matches!(e.call_error(), Some(CallError::Unusable)), "{e}");
    assert!(t0.elapsed() < Duration::from_millis(100));

    // A server that closes the connection after half a reply.
    let peer = Peer::start(|call, s| {
        let r = reply(call.xid, &scripted::sane_result(call, 0).unwrap());
        s.write_all(&r[..6])?;
        Err(std::io::Error::other("hang up"))
    });
    let e = Client::mount(&target(&peer)).err().unwrap();
    assert_one_line(&e, &peer, "MNT");
    assert!(e.to_string().contains("the connection broke"), "{e}");
}

#[test]
fn a_record_split_into_fragments_is_put_together() {
    // Legal but unusual: the MNT reply in three fragments.
    let peer = Peer::start(|call, s| {
        if call.prog != MOUNT_PROGRAM {
            return sane(call, s);
        }
        let whole = reply(call.xid, &scripted::sane_result(call, 0).unwrap());
        let msg = &whole[4..];
        for (i, part) in msg.chunks(5).enumerate() {
            let last = (i + 1) * 5 >= msg.len();
            let mark = u32::try_from(part.len()).unwrap() | if last { 0x8000_0000 } else { 0 };
            s.write_all(&mark.to_be_bytes())?;
            s.write_all(part)?;
        }
        Ok(())
    });
    let c = Client::mount(&target(&peer)).unwrap();
    assert_eq!(c.root().0, scripted::ROOT_FH);
}
