//! The client against a real nfs-ganesha in a network namespace.

use nfs::testing::fixture::TestServer;
use nfs::{Client, Stable, Target};

fn server(tag: &str) -> Option<(TestServer, tempfile::TempDir)> {
    testkit::require(["root", "ip", "rpcbind", "ganesha.nfsd"])?;
    // ganesha's VFS layer needs a file system with file handles; /tmp's is
    // the usual ext4 or tmpfs.
    let dir = tempfile::tempdir().unwrap();
    let s = TestServer::start(tag, dir.path()).unwrap();
    Some((s, dir))
}

#[test]
fn files_made_over_nfs_hold_what_was_written_and_calls_are_counted() {
    let Some((srv, dir)) = server("rw") else {
        return;
    };
    let url = srv.url.clone();
    let counts = srv.in_netns(move || {
        let t = Target::parse(&url).unwrap();
        let mut c = Client::mount(&t).unwrap();
        assert!(c.max_write() >= 4096 && c.max_read() >= 4096);
        let root = c.root().clone();
        assert!(c.lookup(&root, "f").unwrap().is_none());
        let f = c.create(&root, "f", true).unwrap();
        // GUARDED create of an existing file fails with EEXIST.
        let e = c.create(&root, "f", true).unwrap_err();
        assert_eq!(e.errno(), libc::EEXIST, "{e}");
        let block = vec![0x5au8; 4096];
        let (n, committed) = c.write(&f, 8192, &block, Stable::FileSync).unwrap();
        assert_eq!((n, committed), (4096, Stable::FileSync));
        c.write(&f, 0, &block[..100], Stable::Unstable).unwrap();
        c.commit(&f).unwrap();
        assert_eq!(c.getattr(&f).unwrap().size, 12288);
        let mut back = vec![0u8; 4096];
        assert_eq!(c.read(&f, 8192, &mut back).unwrap(), 4096);
        assert_eq!(back, block);
        // A second connection sees the same file.
        let mut c2 = c.another().unwrap();
        let (f2, attr) = c2.lookup(&root, "f").unwrap().unwrap();
        assert_eq!((f2, attr.size), (f.clone(), 12288));
        c.set_size(&f, 4096).unwrap();
        assert_eq!(c.read(&f, 8192, &mut back).unwrap(), 0, "read past the end");
        c.counts()
    });
    assert_eq!(std::fs::metadata(dir.path().join("f")).unwrap().len(), 4096);
    assert_eq!(
        (
            counts.read,
            counts.write,
            counts.stable_write,
            counts.commit
        ),
        (2, 2, 1, 1)
    );
    let url = srv.url.clone();
    srv.in_netns(move || {
        let t = Target::parse(&url).unwrap();
        let mut c = Client::mount(&t).unwrap();
        let root = c.root().clone();
        assert!(c.remove(&root, "f").unwrap());
        assert!(!c.remove(&root, "f").unwrap(), "gone already");
    });
    assert!(!dir.path().join("f").exists());
}

#[test]
fn a_directory_below_the_export_mounts_and_a_missing_one_is_refused() {
    let Some((srv, dir)) = server("sub") else {
        return;
    };
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/x"), b"hello").unwrap();
    let url = srv.url.clone();
    srv.in_netns(move || {
        let below = url.replacen("?", "/sub?", 1);
        let mut c = Client::mount(&Target::parse(&below).unwrap()).unwrap();
        let root = c.root().clone();
        let (_, attr) = c.lookup(&root, "x").unwrap().expect("x in sub");
        assert_eq!(attr.size, 5);
        let missing = url.replacen("?", "/nothing?", 1);
        let e = Client::mount(&Target::parse(&missing).unwrap())
            .err()
            .unwrap();
        assert!(e.to_string().contains("no directory nothing"), "{e}");
    });
}
