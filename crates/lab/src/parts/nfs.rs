//! NFS access: nfs-ganesha exporting the pool in the server namespace (its
//! daemon: `tankbench lab __daemon nfs CONFIG`), and the workload's words
//! that point fileio's NFS client at it.
//!
//! The link's added round trip is not made by the relay here: NFS traffic
//! goes straight over the shaped veth, and the client waits the added round
//! trip once per call (`added_rtt_us` of the URL). With one call in flight per
//! connection that is what a longer cable does, and it costs one timed wait
//! per call, where the relay copied every byte through two threads.

use crate::parts::net;
use crate::spec::Access;
use crate::LabError;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

pub(crate) const NFS_PORT: u16 = 2049;
pub(crate) const MOUNT_PORT: u16 = 20048;

/// What the NFS daemon serves, written as JSON by the lab.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct NfsServerConfig {
    pub export: PathBuf,
    pub bind: String,
    pub state_dir: PathBuf,
    /// Created once ganesha serves.
    pub ready_file: PathBuf,
}

impl NfsServerConfig {
    fn server(&self) -> ::nfs::host::ganesha::ServerConfig {
        ::nfs::host::ganesha::ServerConfig {
            export: self.export.clone(),
            bind: self.bind.clone(),
            nfs_port: NFS_PORT,
            mount_port: MOUNT_PORT,
            state_dir: self.state_dir.clone(),
            netns: None,
        }
    }
    /// Files the server writes into its state directory.
    pub fn files(&self) -> Vec<PathBuf> {
        let s = self.server();
        vec![s.config_path(), s.log_path(), self.ready_file.clone()]
    }
}

/// The daemon: rpcbind and ganesha until the lab stops it (SIGTERM), then
/// both are stopped before this exits, so the export is released before the
/// lab destroys the pool.
pub(crate) fn serve(cfg: &NfsServerConfig) -> Result<(), LabError> {
    crate::parts::sys::install_interrupt_handler();
    let mut server =
        ::nfs::host::ganesha::Server::start(&cfg.server()).map_err(|source| LabError::Nfs {
            what: "nfs-ganesha",
            source,
        })?;
    std::fs::write(&cfg.ready_file, b"ready\n").map_err(|e| LabError::Io {
        what: "write the NFS ready file".into(),
        source: e,
    })?;
    let why = server.wait(&crate::parts::sys::interrupted);
    drop(server);
    if why == "stopped" {
        Ok(())
    } else {
        Err(LabError::DaemonEnded {
            what: "nfs server".into(),
            why,
        })
    }
}

/// The export as fileio's `--file-dir`, with the emulated round trip.
pub(crate) fn url(export: &std::path::Path, added_rtt_ms: f64) -> String {
    // rtt_ms is validated to 0..=1000, so µs fit easily; rounding is the point.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rtt_us = (added_rtt_ms * 1000.0).round().max(0.0) as u64;
    format!(
        "nfs://{}{}?nfsport={NFS_PORT}&mountport={MOUNT_PORT}&added_rtt_us={rtt_us}",
        net::server_addr(0),
        export.display()
    )
}

/// The workload's words for NFS access: the files on the export, and for
/// `nfs-stable` every write FILE_SYNC (`--file-extra-flags` gains `sync`,
/// which fileio's NFS client sends as FILE_SYNC writes).
pub(crate) fn workload_args(access: Access, url: &str, args: &[String]) -> Vec<String> {
    let mut out: Vec<String> = args
        .iter()
        .filter(|a| !a.starts_with("--file-dir="))
        .cloned()
        .collect();
    out.push(format!("--file-dir={url}"));
    if access == Access::NfsStable {
        match out
            .iter_mut()
            .find(|a| a.starts_with("--file-extra-flags="))
        {
            Some(a) if a.split(['=', ',']).any(|f| f == "sync") => {}
            Some(a) => a.push_str(",sync"),
            None => out.push("--file-extra-flags=sync".into()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_access_adds_sync_to_the_extra_flags_once() {
        let w = |args: &[&str], access| {
            let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            workload_args(access, "nfs://x/p", &v)
        };
        assert_eq!(
            w(&["--threads=4"], Access::NfsStable),
            [
                "--threads=4",
                "--file-dir=nfs://x/p",
                "--file-extra-flags=sync"
            ]
        );
        assert_eq!(
            w(&["--file-extra-flags=direct"], Access::NfsStable),
            ["--file-extra-flags=direct,sync", "--file-dir=nfs://x/p"]
        );
        assert_eq!(
            w(
                &["--file-extra-flags=sync", "--file-dir=/elsewhere"],
                Access::NfsStable
            ),
            ["--file-extra-flags=sync", "--file-dir=nfs://x/p"]
        );
        assert_eq!(w(&[], Access::Nfs), ["--file-dir=nfs://x/p"]);
        assert_eq!(
            url(std::path::Path::new("/lab/pool"), 0.2),
            "nfs://10.77.0.2/lab/pool?nfsport=2049&mountport=20048&added_rtt_us=200"
        );
    }
}
