//! Software storage lab: latency-injecting FUSE disks, ZFS pools, network
//! links, remote mounts and matrix runs, all built from real parts on one Linux
//! machine and torn down again.
//!
//! Layout, one way down: [`experiments`] (what is done with a lab: runs,
//! matrices, crashes, durability, predictions) use [`lab`] (the environment:
//! build and teardown, with its record in [`state`]), which assembles the
//! [`parts`] (disks, undo log, zfs-fuse daemon, links, remote access,
//! system helpers); all of them read [`spec`] (the TOML, validated once).
//! Nothing below calls what is above it.
//!
//! Flow: [`spec::LabSpec`] -> [`lab::Lab::up`] (disks, pool, link, remote
//! mount; each object recorded in a state file as it is made) -> workloads
//! ([`experiments::run`]) -> [`lab::Lab::down`] (reverse order). The
//! [`experiments::matrix`] runner repeats that for every combination of a
//! matrix file.

mod error;
pub mod experiments;
pub mod lab;
pub mod parts;
pub mod spec;
pub mod state;

use parts::{diskfs, net, nfs};

pub use error::{LabError, NotStarted};
pub use lab::{Lab, UpOptions};
pub use spec::LabSpec;
pub use state::LabInfo;

/// Entry point of the lab's helper daemons (`tankbench lab __daemon KIND
/// CONFIG`): the disk file system and the delaying relay. They are separate
/// processes so that `lab up` can return while the lab keeps running.
pub fn daemon_main(args: &[String]) -> Result<(), LabError> {
    let usage = || LabError::Usage("tankbench lab __daemon disks|relay|nfs CONFIG.json");
    let kind = args.first().ok_or_else(usage)?;
    let cfg_path = args.get(1).ok_or_else(usage)?;
    let text = std::fs::read_to_string(cfg_path).map_err(|e| LabError::Io {
        what: format!("read {cfg_path}"),
        source: e,
    })?;
    let bad = |e: serde_json::Error| LabError::Damaged {
        what: format!("daemon configuration {cfg_path}"),
        message: e.to_string(),
    };
    match kind.as_str() {
        "disks" => {
            let cfg: diskfs::DiskSetConfig = serde_json::from_str(&text).map_err(bad)?;
            diskfs::serve(&cfg).map_err(|e| LabError::Io {
                what: format!("serve disks at {}", cfg.mountpoint.display()),
                source: e,
            })
        }
        "nfs" => {
            let cfg: nfs::NfsServerConfig = serde_json::from_str(&text).map_err(bad)?;
            nfs::serve(&cfg)
        }
        "relay" => {
            let cfg: net::RelayConfig = serde_json::from_str(&text).map_err(bad)?;
            net::serve_relay(&cfg)
        }
        _ => Err(usage()),
    }
}
