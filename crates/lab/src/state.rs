//! The state file: every object a lab creates, in creation order, written to
//! disk after each step so that `lab down` (or `lab down --all` after a crash)
//! can remove exactly what was made and nothing else.

use crate::parts::net::LinkMeasurement;
use crate::parts::writeprobe::WritePathMeasurement;
use crate::parts::zfsd::Zfsd;
use crate::spec::{Backend, LabSpec};
use crate::LabError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Resource {
    /// A directory the lab created (removed only when empty).
    Dir { path: PathBuf },
    /// A file the lab created.
    File { path: PathBuf },
    /// A daemon process the lab started; `tag` must appear in its command line
    /// before it is signalled (guards against pid reuse).
    Process {
        pid: i32,
        tag: String,
        what: String,
        /// Its start time (field 22 of /proc/PID/stat), where recorded: a
        /// process with this pid but another start time is not ours.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start_time: Option<u64>,
    },
    /// A FUSE or sshfs mount the lab made.
    Mount { path: PathBuf },
    /// A ZFS pool the lab created, served by the lab's own zfs-fuse daemon
    /// (`zfsd`) or by the machine's ZFS (kernel OpenZFS; older labs: the
    /// shared zfs-fuse daemon).
    Pool {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        zfsd: Option<Zfsd>,
    },
    /// A network namespace (its veth ends and qdiscs go with it).
    Netns { name: String },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    pub id: String,
    pub spec: LabSpec,
    /// Creation order; teardown walks it backwards.
    pub resources: Vec<Resource>,
    /// Filled in once the lab is up.
    #[serde(default)]
    pub info: Option<LabInfo>,
}

pub(crate) const STATE_FILE: &str = "state.json";

impl State {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(STATE_FILE)
    }

    pub fn load(dir: &Path) -> Result<State, LabError> {
        let p = Self::path(dir);
        let text = std::fs::read_to_string(&p).map_err(|e| LabError::Io {
            what: format!("read lab state {}", p.display()),
            source: e,
        })?;
        serde_json::from_str(&text).map_err(|e| LabError::Damaged {
            what: format!("lab state {}", p.display()),
            message: e.to_string(),
        })
    }

    /// Write atomically (`report::atomic`: a temporary file flushed, then
    /// renamed) so a crash never leaves half a state file, and a failed
    /// write leaves no temporary file behind.
    pub fn save(&self, dir: &Path) -> Result<(), LabError> {
        let p = Self::path(dir);
        let text = serde_json::to_string_pretty(self).expect("state serializes");
        report::atomic::write_atomically(&p, text.as_bytes(), report::atomic::Existing::Replace)
            .map_err(|e| LabError::Io {
                what: format!("write lab state {}", p.display()),
                source: e,
            })
    }
}

/// What was built, for `lab status` and for running workloads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LabInfo {
    pub backend: Backend,
    pub pool: String,
    pub pool_mountpoint: PathBuf,
    /// Where workloads run (the sshfs mount, or the pool's mount point).
    pub workdir: PathBuf,
    /// Network namespace workloads run in (None: the host's).
    pub client_netns: Option<String>,
    /// NFS access: the export as fileio's `--file-dir` (workloads run with
    /// tankbench's NFS client; `workdir` is then only their current directory).
    #[serde(default)]
    pub nfs_url: Option<String>,
    pub disk_mount: PathBuf,
    pub disks: Vec<String>,
    pub log_disks: Vec<String>,
    pub link: Option<LinkMeasurement>,
    /// The pool's buffered write path as timed after the build.
    #[serde(default)]
    pub write_path: Option<WritePathMeasurement>,
    pub built_in_s: f64,
    /// The lab's own zfs-fuse daemon (None with kernel OpenZFS).
    #[serde(default)]
    pub zfsd: Option<Zfsd>,
}
