//! Remote access: sshd in the server namespace (own config, keys made by the
//! lab, listening on the server's loopback only, reachable through the
//! delaying relay) and sshfs in the client namespace mounting the pool's
//! dataset.

use crate::parts::net;
use crate::parts::sys;
use crate::LabError;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct SshFiles {
    pub dir: PathBuf,
    pub host_key: PathBuf,
    pub client_key: PathBuf,
    pub authorized_keys: PathBuf,
    pub config: PathBuf,
    pub log: PathBuf,
}

impl SshFiles {
    pub fn new(dir: &Path) -> SshFiles {
        SshFiles {
            dir: dir.to_path_buf(),
            host_key: dir.join("tb_host_ed25519"),
            client_key: dir.join("tb_client_ed25519"),
            authorized_keys: dir.join("authorized_keys"),
            config: dir.join("sshd_config"),
            log: dir.join("sshd.log"),
        }
    }

    /// Every file this module creates (for the state file).
    pub(crate) fn all_files(&self) -> Vec<PathBuf> {
        let mut v = vec![
            self.host_key.clone(),
            self.host_key.with_extension("pub"),
            self.client_key.clone(),
            self.client_key.with_extension("pub"),
            self.authorized_keys.clone(),
            self.config.clone(),
            self.log.clone(),
            self.dir.join("sshfs.log"),
        ];
        v.retain(|p| p.exists());
        v
    }
}

fn keygen(path: &Path, comment: &str) -> Result<(), LabError> {
    sys::run(
        "ssh-keygen",
        ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"]
            .iter()
            .map(|s| s.to_string())
            .chain([path.display().to_string()]),
    )?;
    Ok(())
}

/// OpenSSH's sftp-server program, where a distribution puts it (Debian,
/// Fedora, others); None when it is not installed.
pub(crate) fn sftp_server() -> Option<PathBuf> {
    [
        "/usr/lib/openssh/sftp-server",
        "/usr/libexec/openssh/sftp-server",
        "/usr/libexec/sftp-server",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// Generate keys and the sshd configuration.
pub fn prepare(files: &SshFiles, id: &str) -> Result<(), LabError> {
    keygen(&files.host_key, &format!("{id}-host"))?;
    keygen(&files.client_key, &format!("{id}-client"))?;
    let pubkey = std::fs::read_to_string(files.client_key.with_extension("pub")).map_err(|e| {
        LabError::Io {
            what: "read the lab's client public key".into(),
            source: e,
        }
    })?;
    let write = |p: &Path, text: &str| {
        std::fs::write(p, text).map_err(|e| LabError::Io {
            what: format!("write {}", p.display()),
            source: e,
        })
    };
    write(&files.authorized_keys, &pubkey)?;
    let sftp =
        sftp_server().map_or_else(|| "internal-sftp".to_string(), |p| p.display().to_string());
    // Only the lab's own key gets in; loopback of the server namespace only.
    let cfg = format!(
        "# sshd for lab {id}; made by tankbench lab\n\
         ListenAddress 127.0.0.1\n\
         Port 22\n\
         HostKey {host}\n\
         AuthorizedKeysFile {auth}\n\
         PermitRootLogin prohibit-password\n\
         PasswordAuthentication no\n\
         KbdInteractiveAuthentication no\n\
         PubkeyAuthentication yes\n\
         UsePAM no\n\
         StrictModes no\n\
         UseDNS no\n\
         PidFile none\n\
         Subsystem sftp {sftp}\n",
        host = files.host_key.display(),
        auth = files.authorized_keys.display(),
    );
    write(&files.config, &cfg)
}

/// The sshd command, to be started in the server namespace.
pub(crate) fn sshd_command(files: &SshFiles) -> Result<Command, LabError> {
    let sshd = sys::which("sshd").ok_or_else(|| {
        LabError::Missing("program `sshd` (apt-get install openssh-server)".into())
    })?;
    let mut c = Command::new(sshd);
    // -D: stay in the foreground so the lab owns the process; -E: log to file.
    c.arg("-D")
        .arg("-f")
        .arg(&files.config)
        .arg("-E")
        .arg(&files.log);
    Ok(c)
}

/// Mount `remote_dir` of the server at `mountpoint`, from the client
/// namespace, over member link 0 (one flow uses one member link).
pub(crate) fn mount_sshfs(
    id: &str,
    files: &SshFiles,
    remote_dir: &Path,
    mountpoint: &Path,
) -> Result<(), LabError> {
    let log = files.dir.join("sshfs.log");
    mount_sshfs_as(
        id,
        files,
        (remote_dir, mountpoint),
        &format!("{id}-sshfs"),
        &[],
        &log,
    )
}

/// [`mount_sshfs`] with its own file system name, sshfs options added to the
/// lab's (e.g. another `sftp_server`), and its output in `log`.
pub(crate) fn mount_sshfs_as(
    id: &str,
    files: &SshFiles,
    (remote_dir, mountpoint): (&Path, &Path),
    fsname: &str,
    extra_options: &[String],
    log: &Path,
) -> Result<(), LabError> {
    let ssh_opts = [
        format!("IdentityFile={}", files.client_key.display()),
        "StrictHostKeyChecking=no".into(),
        "UserKnownHostsFile=/dev/null".into(),
        "BatchMode=yes".into(),
        "LogLevel=ERROR".into(),
        "ConnectTimeout=10".into(),
        // No user ssh configuration may redirect the connection.
        "ssh_command=ssh -F /dev/null".into(),
        format!("fsname={fsname}"),
    ];
    let mut c = Command::new("sshfs");
    c.arg(format!(
        "root@{}:{}",
        net::server_addr(0),
        remote_dir.display()
    ))
    .arg(mountpoint)
    .arg("-p")
    .arg(net::SSH_PORT.to_string());
    for o in ssh_opts.iter().chain(extra_options) {
        c.arg("-o").arg(o);
    }
    sys::in_netns(&mut c, &net::client_ns(id))?;
    // sshfs daemonizes once the mount is up, so this returns then. Its output
    // goes to a file (the ssh child it leaves running would hold a pipe).
    sys::log_output_to(&mut c, log, false)?;
    let status = c.status().map_err(|e| LabError::Spawn {
        command: sys::describe(&c),
        source: e,
    })?;
    if !status.success() {
        return Err(LabError::Command {
            command: sys::describe(&c),
            status: status.code().unwrap_or(-1),
            stderr: std::fs::read_to_string(log)
                .unwrap_or_default()
                .trim()
                .to_string(),
        });
    }
    Ok(())
}
