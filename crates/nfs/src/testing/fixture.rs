//! A throw-away NFS server for tests: a network namespace of its own (so its
//! rpcbind and ports collide with nothing) with ganesha exporting a
//! directory on 10.79.0.1, an address that exists only in it. Needs root, `ip`, rpcbind and nfs-ganesha.

use crate::host::ganesha::{Server, ServerConfig};
use crate::host::{io, HostError};
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

pub struct TestServer {
    pub(crate) netns: String,
    pub url: String,
    server: Option<Server>,
    /// ganesha's configuration and log; removed with the server.
    _state: TempDir,
}

/// A new directory for the server's state under the system's temporary
/// directory, named `tb-nfs-TAG-` and a random suffix; removed, with what
/// ganesha wrote in it, when dropped.
fn state_dir(tag: &str) -> std::io::Result<TempDir> {
    tempfile::Builder::new()
        .prefix(&format!("tb-nfs-{tag}-"))
        .tempdir()
}

fn ip(args: &[&str]) -> Result<(), HostError> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(io("run ip"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(HostError::Command {
            command: format!("ip {}", args.join(" ")),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

impl TestServer {
    /// Serve `export` (which must exist) from namespace `tb-nfs-TAG-PID`.
    pub fn start(tag: &str, export: &Path) -> Result<TestServer, HostError> {
        let netns = format!("tb-nfs-{tag}-{}", std::process::id());
        let state = state_dir(tag).map_err(io("create the server's state directory"))?;
        ip(&["netns", "add", &netns])?;
        let mut t = TestServer {
            netns: netns.clone(),
            url: String::new(),
            server: None,
            _state: state,
        };
        ip(&["-n", &netns, "link", "set", "lo", "up"])?;
        // ganesha resolves Bind_addr with AI_ADDRCONFIG, which finds no IPv4
        // address in a namespace that has only loopback: give it a veth pair
        // (both ends here; the dummy link type is not in every kernel).
        let (a, b) = ("tbnfs0", "tbnfs1");
        ip(&[
            "-n", &netns, "link", "add", a, "type", "veth", "peer", "name", b,
        ])?;
        ip(&["-n", &netns, "addr", "add", "10.79.0.1/24", "dev", a])?;
        ip(&["-n", &netns, "link", "set", a, "up"])?;
        ip(&["-n", &netns, "link", "set", b, "up"])?;
        let cfg = ServerConfig {
            export: export.to_path_buf(),
            bind: "10.79.0.1".into(),
            nfs_port: 2049,
            mount_port: 20048,
            state_dir: t._state.path().to_path_buf(),
            netns: Some(PathBuf::from(format!("/run/netns/{netns}"))),
        };
        t.server = Some(Server::start(&cfg)?);
        t.url = cfg.url();
        Ok(t)
    }

    /// Run `f` on a thread inside the server's network namespace (threads it
    /// starts stay there too).
    pub fn in_netns<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let path = format!("/run/netns/{}", self.netns);
        std::thread::spawn(move || {
            let ns = std::fs::File::open(&path).expect("the test's network namespace");
            // SAFETY: the descriptor is open for the call; setns(2) moves
            // only this new thread.
            let rc =
                unsafe { libc::setns(std::os::fd::AsRawFd::as_raw_fd(&ns), libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
            f()
        })
        .join()
        .expect("the test thread in the namespace panicked")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        drop(self.server.take());
        let _ = ip(&["netns", "del", &self.netns]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_directory_is_new_named_for_the_test_and_removed_with_it() {
        let a = state_dir("x").unwrap();
        let b = state_dir("x").unwrap();
        for d in [&a, &b] {
            assert_eq!(d.path().parent(), Some(std::env::temp_dir().as_path()));
            let name = d.path().file_name().unwrap().to_string_lossy();
            assert!(name.starts_with("tb-nfs-x-"), "{name}");
            assert!(d.path().is_dir());
        }
        // Two servers of one process (and tag) never share one.
        assert_ne!(a.path(), b.path());
        let path = a.path().to_path_buf();
        std::fs::write(path.join("ganesha.log"), "written by the server").unwrap();
        drop(a);
        assert!(!path.exists());
    }
}
