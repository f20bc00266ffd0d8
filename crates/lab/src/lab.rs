//! Building and tearing down a lab. Every object is recorded in the state file
//! before (or as soon as) it exists, and teardown walks the record backwards,
//! so a failure half-way, Ctrl-C, or a crash followed by `lab down --all`
//! removes exactly what the lab made.

use crate::parts::diskfs::{DiskConfig, DiskSetConfig};
use crate::parts::net::{self, RelayConfig};
use crate::parts::remote::{self, SshFiles};
use crate::parts::sys::{self, Requirement};
use crate::parts::writeprobe;
use crate::parts::zfsd::{self, Zfsd};
use crate::spec::{Access, Backend, LabSpec, LinkSpec};
use crate::state::{LabInfo, Resource, State};
use crate::{LabError, NotStarted};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};
use zfs_model::dataset::SyncProperty;

/// How to build a lab.
pub struct UpOptions {
    /// The tankbench binary: started as the lab's helper daemons and as the
    /// workload.
    pub tankbench: PathBuf,
    /// Measure the link's round trip and bandwidth and time the pool's
    /// write path (parts::writeprobe) after building it.
    pub measure: bool,
    /// Record every disk request in this new file
    /// (`parts::diskfs::DiskSetConfig::trace_file`); the user's file, left
    /// when the lab is torn down.
    pub disk_trace: Option<PathBuf>,
    /// Progress lines (to stderr in the CLI).
    pub progress: Box<dyn Fn(&str)>,
}

/// The disks `build_disks` made: the FUSE mount and the names of the data
/// and log disks in it.
struct BuiltDisks {
    mount: PathBuf,
    data: Vec<String>,
    log: Vec<String>,
}

pub struct Lab {
    pub dir: PathBuf,
    pub state: State,
    /// Daemons started by this process, reaped at teardown.
    children: Vec<Child>,
}

/// Seconds the write probe runs at each thread count: tens of thousands of
/// writes at the 21-49 us a write measured on zfs-fuse.
const WRITE_PROBE_S: f64 = 1.5;

/// How long a daemon the lab starts may take to be ready.
const READY_LIMIT: Duration = Duration::from_secs(20);

/// Marker in the command line of the lab's daemons (and in nothing else).
const DAEMON_ARG: &str = "__daemon";

fn io(what: impl Into<String>, e: std::io::Error) -> LabError {
    LabError::Io {
        what: what.into(),
        source: e,
    }
}

/// Programs a lab with this spec needs.
pub(crate) fn requirements(spec: &LabSpec) -> Vec<Requirement> {
    let mut r = vec![
        Requirement {
            program: "zpool",
            package: "zfs-fuse",
        },
        Requirement {
            program: "zfs",
            package: "zfs-fuse",
        },
    ];
    if spec.pool.backend != Some(Backend::OpenZfs) && !Path::new("/sys/module/zfs").exists() {
        r.push(Requirement {
            program: "zfs-fuse",
            package: "zfs-fuse",
        });
    }
    if spec.link.is_some() {
        r.push(Requirement {
            program: "ip",
            package: "iproute2",
        });
        r.push(Requirement {
            program: "tc",
            package: "iproute2",
        });
    }
    if spec.access.is_nfs() {
        r.push(Requirement {
            program: "ganesha.nfsd",
            package: "nfs-ganesha nfs-ganesha-vfs",
        });
        r.push(Requirement {
            program: "rpcbind",
            package: "rpcbind",
        });
    }
    if spec.access == Access::Sshfs {
        r.push(Requirement {
            program: "sshd",
            package: "openssh-server",
        });
        r.push(Requirement {
            program: "ssh",
            package: "openssh-client",
        });
        r.push(Requirement {
            program: "ssh-keygen",
            package: "openssh-client",
        });
        r.push(Requirement {
            program: "sshfs",
            package: "sshfs",
        });
    }
    r
}

impl Lab {
    pub(crate) fn dir_for(spec: &LabSpec) -> PathBuf {
        spec.root.join(spec.id())
    }

    /// Build the lab. On any error (or Ctrl-C) everything built so far is torn
    /// down before the error is returned.
    pub fn up(spec: &LabSpec, opts: &UpOptions) -> Result<Lab, LabError> {
        // What the spec asks of this host, before anything is made: a disk
        // bigger than a file may be here, a property the backend lacks.
        spec.check_host()?;
        choose_backend(spec)?;
        sys::check_prerequisites(&requirements(spec))?;
        let dir = Self::dir_for(spec);
        if State::path(&dir).exists() {
            return Err(LabError::AlreadyUp {
                lab: spec.id(),
                name: spec.name.clone(),
                state: State::path(&dir),
            });
        }
        if dir.exists() {
            // Never adopt (and later delete) a directory the lab did not make.
            return Err(LabError::NotOurs {
                what: format!(
                    "{} exists but holds no lab state; remove it yourself if it is a leftover",
                    dir.display()
                ),
            });
        }
        std::fs::create_dir_all(&spec.root)
            .map_err(|e| io(format!("create {}", spec.root.display()), e))?;
        std::fs::create_dir(&dir).map_err(|e| io(format!("create {}", dir.display()), e))?;
        let mut lab = Lab {
            dir: dir.clone(),
            state: State {
                id: spec.id(),
                spec: spec.clone(),
                resources: vec![Resource::Dir { path: dir.clone() }],
                info: None,
            },
            children: Vec::new(),
        };
        lab.state.save(&dir)?;
        let started = Instant::now();
        match lab.build(opts) {
            Ok(mut info) => {
                info.built_in_s = started.elapsed().as_secs_f64();
                lab.state.info = Some(info);
                lab.state.save(&lab.dir)?;
                Ok(lab)
            }
            Err(e) => {
                (opts.progress)(&format!("build failed ({e}); tearing down"));
                if let Err(te) = lab.teardown() {
                    return Err(LabError::BuildAndTeardown {
                        build: Box::new(e),
                        teardown: Box::new(te),
                    });
                }
                Err(e)
            }
        }
    }

    fn record(&mut self, r: Resource) -> Result<(), LabError> {
        self.state.resources.push(r);
        self.state.save(&self.dir)
    }

    fn mkdir(&mut self, path: &Path) -> Result<(), LabError> {
        std::fs::create_dir(path).map_err(|e| io(format!("create {}", path.display()), e))?;
        self.record(Resource::Dir {
            path: path.to_path_buf(),
        })
    }

    fn write_file(&mut self, path: &Path, text: &str) -> Result<(), LabError> {
        std::fs::write(path, text).map_err(|e| io(format!("write {}", path.display()), e))?;
        self.record(Resource::File {
            path: path.to_path_buf(),
        })
    }

    /// Start a helper daemon (`tankbench lab __daemon KIND CONFIG`), optionally
    /// in a network namespace, in its own session so a Ctrl-C at the terminal
    /// reaches the lab (which tears down) rather than killing the daemons under
    /// a live pool.
    fn spawn_daemon(
        &mut self,
        mut cmd: Command,
        what: &str,
        tag: &str,
        log: &Path,
    ) -> Result<i32, LabError> {
        sys::log_output_to(&mut cmd, log, false)?;
        self.record(Resource::File {
            path: log.to_path_buf(),
        })?;
        sys::own_session(&mut cmd);
        let child = sys::spawn(&mut cmd)?;
        let pid = child.id() as i32;
        self.children.push(child);
        self.record(Resource::Process {
            pid,
            tag: tag.to_string(),
            what: what.to_string(),
            start_time: zfsd::start_time(pid),
        })?;
        Ok(pid)
    }

    /// Wait until `ready` holds, failing early if daemon `pid` died (its log
    /// is quoted).
    fn wait_ready(
        &mut self,
        what: &str,
        pid: i32,
        log: &Path,
        mut ready: impl FnMut() -> bool,
    ) -> Result<(), LabError> {
        let deadline = Instant::now() + READY_LIMIT;
        loop {
            if ready() {
                return Ok(());
            }
            let exited = self
                .children
                .iter_mut()
                .find(|c| c.id() as i32 == pid)
                .and_then(|c| c.try_wait().ok().flatten())
                .is_some();
            if exited || Instant::now() > deadline {
                return Err(LabError::NotStarted {
                    what: what.to_string(),
                    how: if exited {
                        NotStarted::Exited
                    } else {
                        NotStarted::Within(READY_LIMIT.as_secs())
                    },
                    last_line: sys::last_line(log),
                });
            }
            sys::check_interrupted()?;
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn build(&mut self, opts: &UpOptions) -> Result<LabInfo, LabError> {
        let spec = self.state.spec.clone();
        let id = spec.id();
        let say = |s: &str| (opts.progress)(&format!("[{id}] {s}"));
        if !opts.tankbench.is_file() {
            return Err(LabError::Missing(format!(
                "tankbench binary not found at {} (set TANKBENCH_BIN or build it: cargo build -p tankbench)",
                opts.tankbench.display()
            )));
        }
        let disks = self.build_disks(&spec, opts, &say)?;
        let (backend, pool_mp, zfsd) = self.create_pool(&spec, &disks, &say)?;

        let mut workdir = pool_mp.clone();
        let mut client_netns = None;
        let mut link_measured = None;
        let mut nfs_url = None;
        if let Some(link) = &spec.link {
            self.build_link(&id, link, opts, &say)?;
            if spec.access == Access::Sshfs {
                workdir = self.mount_sshfs(&id, &pool_mp, &say)?;
                client_netns = Some(net::client_ns(&id));
            }
            if spec.access.is_nfs() {
                nfs_url = Some(self.start_nfs(&id, &pool_mp, link, opts, &say)?);
                client_netns = Some(net::client_ns(&id));
            }
            if opts.measure {
                let m = net::measure(&id, link, 1.0)?;
                say(&format!(
                    "measured: rtt {:.3} ms (min {:.3}), one flow {:.0} Mbit/s, all members {:.0} Mbit/s",
                    m.rtt_ms_median, m.rtt_ms_min, m.single_flow_mbit_s, m.aggregate_mbit_s
                ));
                link_measured = Some(m);
            }
        }
        let write_path = if opts.measure {
            let m = writeprobe::measure(&pool_mp, WRITE_PROBE_S, &|| sync_txg(&id, zfsd.as_ref()))?;
            // The probe's writes are dirty in the open txg: sync them now, so
            // the txg they would start does not sync inside the first
            // measurement (in zfs-fuse a txg sync slows commits about
            // fourfold while it lasts, docs/what-if.md) and the txg timer
            // starts again from here, as it did from the pool's creation.
            sync_txg(&id, zfsd.as_ref())?;
            say(&format!(
                "measured: pool write path {:.0} us a buffered 4 KiB write at one thread, {:.0} writes/s from one thread and {:.0} from two",
                m.request_us(),
                m.one_thread_writes_per_s,
                m.two_threads_writes_per_s
            ));
            Some(m)
        } else {
            None
        };
        Ok(LabInfo {
            backend,
            pool: id.clone(),
            pool_mountpoint: pool_mp,
            workdir,
            client_netns,
            nfs_url,
            disk_mount: disks.mount,
            disks: disks.data,
            log_disks: disks.log,
            link: link_measured,
            write_path,
            built_in_s: 0.0,
            zfsd,
        })
    }

    /// The sparse backing files and the latency-injecting FUSE file system
    /// that shows them as disks.
    fn build_disks(
        &mut self,
        spec: &LabSpec,
        opts: &UpOptions,
        say: &dyn Fn(&str),
    ) -> Result<BuiltDisks, LabError> {
        let id = spec.id();
        let backing = self.dir.join("backing");
        let disk_mount = self.dir.join("disks");
        self.mkdir(&backing)?;
        self.mkdir(&disk_mount)?;
        let mut disks = Vec::new();
        let n = spec.pool.disk_count();
        for i in 0..n {
            disks.push(DiskConfig {
                name: format!("tb-d{i:02}"),
                backing: backing.join(format!("tb-d{i:02}.img")),
                size: spec.pool.disk_size,
                model: own_drive(&spec.pool.disk_model, i as u64),
            });
        }
        let mut log_names = Vec::new();
        if let Some(log) = &spec.pool.log {
            for i in 0..if log.mirror { 2 } else { 1 } {
                let name = format!("tb-log{i}");
                disks.push(DiskConfig {
                    name: name.clone(),
                    backing: backing.join(format!("{name}.img")),
                    size: log.size,
                    model: own_drive(&log.model, u64::MAX - i),
                });
                log_names.push(name);
            }
        }
        say(&format!("disks: {n} x {}", spec.pool.disks_summary()));
        for d in &disks {
            // Sparse: set_len allocates nothing, so terabytes cost no space.
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&d.backing)
                .map_err(|e| io(format!("create {}", d.backing.display()), e))?;
            self.record(Resource::File {
                path: d.backing.clone(),
            })?;
            f.set_len(d.size)
                .map_err(|e| io(format!("size {}", d.backing.display()), e))?;
        }
        let stats_file = self.dir.join("disk-stats.json");
        self.record(Resource::File {
            path: stats_file.clone(),
        })?;
        self.record(Resource::File {
            path: stats_file.with_extension("tmp"),
        })?;
        let cfg = DiskSetConfig {
            mountpoint: disk_mount.clone(),
            fsname: format!("{id}-disks"),
            stats_file: Some(stats_file),
            trace_file: opts.disk_trace.clone(),
            disks: disks.clone(),
        };
        let cfg_path = self.dir.join("disks.json");
        self.write_file(
            &cfg_path,
            &serde_json::to_string_pretty(&cfg).expect("serializes"),
        )?;
        let mut cmd = Command::new(&opts.tankbench);
        cmd.args(["lab", DAEMON_ARG, "disks"]).arg(&cfg_path);
        let log = self.dir.join("disks.log");
        let tag = cfg_path.display().to_string();
        let pid = self.spawn_daemon(cmd, "disk file system", &tag, &log)?;
        // Recorded before it exists: teardown unmounts only if mounted.
        self.record(Resource::Mount {
            path: disk_mount.clone(),
        })?;
        let dm = disk_mount.clone();
        self.wait_ready("disk file system", pid, &log, || {
            crate::parts::diskfs::is_fuse_mount(&dm)
        })?;
        sys::check_interrupted()?;
        Ok(BuiltDisks {
            mount: disk_mount,
            data: disks[..n as usize].iter().map(|d| d.name.clone()).collect(),
            log: log_names,
        })
    }

    /// `zpool create` over the disks, mounted under the lab directory; with
    /// zfs-fuse, by the lab's own daemon, started here.
    fn create_pool(
        &mut self,
        spec: &LabSpec,
        disks: &BuiltDisks,
        say: &dyn Fn(&str),
    ) -> Result<(Backend, PathBuf, Option<Zfsd>), LabError> {
        let id = spec.id();
        let backend = choose_backend(spec)?;
        let pool_mp = self.dir.join("pool");
        self.mkdir(&pool_mp)?;
        let daemon = if backend == Backend::ZfsFuse {
            // Shared before the daemon's namespace copies it: the dataset
            // zfs-fuse mounts here must reach the host's mount table.
            self.record(Resource::Mount {
                path: pool_mp.clone(),
            })?;
            zfsd::share_mount_point(&pool_mp)?;
            Some(self.start_zfsd(spec, say)?)
        } else {
            None
        };
        let data_paths: Vec<PathBuf> = disks.data.iter().map(|d| disks.mount.join(d)).collect();
        let mut args: Vec<String> = vec!["create".into(), "-f".into()];
        if let Some(a) = spec.pool.ashift {
            args.push("-o".into());
            args.push(format!("ashift={a}"));
        }
        args.push("-m".into());
        args.push(pool_mp.display().to_string());
        if let Some(r) = spec.pool.recordsize {
            args.push("-O".into());
            args.push(format!("recordsize={r}"));
        }
        if let Some(c) = &spec.pool.compression {
            args.push("-O".into());
            args.push(format!("compression={c}"));
        }
        // Validated against the backend in choose_backend: zfs-fuse takes
        // only "standard", which is how its pool version 23 behaves anyway,
        // and has no property to set ("invalid property 'sync'").
        if let Some(s) = spec
            .pool
            .sync
            .as_ref()
            .filter(|_| backend != Backend::ZfsFuse)
        {
            args.push("-O".into());
            args.push(format!("sync={s}"));
        }
        args.push(id.clone());
        args.extend(spec.pool.vdev_args(&data_paths));
        if !disks.log.is_empty() {
            args.push("log".into());
            if disks.log.len() > 1 {
                args.push("mirror".into());
            }
            for l in &disks.log {
                args.push(disks.mount.join(l).display().to_string());
            }
        }
        say(&format!(
            "pool {id}: {} on {backend:?}",
            spec.pool.layout_text
        ));
        self.record(Resource::Pool {
            name: id.clone(),
            zfsd: daemon.clone(),
        })?;
        let mut create = zfs_command(daemon.as_ref(), "zpool")?;
        create.args(&args);
        sys::run_cmd(&mut create)?;
        if !sys::is_mounted(&pool_mp) {
            return Err(LabError::NotMounted {
                what: format!("pool {id} was created but"),
                path: pool_mp.clone(),
            });
        }
        sys::check_interrupted()?;
        Ok((backend, pool_mp, daemon))
    }

    /// The lab's own zfs-fuse daemon, in a mount namespace of its own with
    /// the lab's zfsrc, socket, lock, pool cache and kstat directory
    /// (crate::parts::zfsd), and the ARC `server.arc` asks for.
    fn start_zfsd(&mut self, spec: &LabSpec, say: &dyn Fn(&str)) -> Result<Zfsd, LabError> {
        let bin = sys::which("zfs-fuse").ok_or_else(|| {
            LabError::Missing("program `zfs-fuse` (apt-get install zfs-fuse)".into())
        })?;
        zfsd::ensure_fixed_paths()?;
        let ddir = self.dir.join("zfsd");
        self.mkdir(&ddir)?;
        for (_, name) in zfsd::PRIVATE_PATHS {
            self.mkdir(&ddir.join(name))?;
        }
        self.write_file(&ddir.join("etc").join("zfsrc"), zfsd::ZFSRC)?;
        // What zfs-fuse makes in its directories (removed if there).
        for made in zfsd::DAEMON_FILES {
            self.record(Resource::File {
                path: ddir.join(made),
            })?;
        }
        let arc_mib = spec.server.arc.and_then(zfsd::arc_mib);
        say(&format!(
            "zfs-fuse of the lab: ARC {}",
            arc_mib.map_or_else(|| "zfs-fuse's default".to_string(), |m| format!("{m} MiB"))
        ));
        let cmd = zfsd::daemon_command(&bin, &ddir, arc_mib)?;
        let log = ddir.join("zfs-fuse.log");
        let tag = ddir.display().to_string();
        let pid = self.spawn_daemon(cmd, zfsd::WHAT, &tag, &log)?;
        let daemon = Zfsd {
            pid,
            start_time: zfsd::start_time(pid).unwrap_or_default(),
            tag,
        };
        daemon.detach_foreign_mounts()?;
        let probe = daemon.clone();
        self.wait_ready("zfs-fuse", pid, &log, || {
            probe.command("zpool").is_ok_and(|mut c| {
                sys::status_within(c.arg("list"), ZPOOL_ANSWER_LIMIT) == sys::Within::Succeeded
            })
        })?;
        sys::check_interrupted()?;
        Ok(daemon)
    }

    /// The network namespaces joined by the link, and the delaying relay in
    /// the server namespace.
    fn build_link(
        &mut self,
        id: &str,
        link: &LinkSpec,
        opts: &UpOptions,
        say: &dyn Fn(&str),
    ) -> Result<(), LabError> {
        say(&format!(
            "link {}: {} member(s) at {} bit/s, +{} ms round trip",
            link.label, link.members, link.rate_bps, link.added_rtt_ms
        ));
        let mut namespaces = Vec::new();
        let created = net::create(id, &self.dir, link, &mut |ns| {
            namespaces.push(ns);
            Ok(())
        });
        for ns in namespaces {
            self.record(Resource::Netns { name: ns })?;
        }
        created?;
        sys::check_interrupted()?;
        // Relay (delay + probe) in the server namespace.
        let mut forwards = Vec::new();
        for m in 0..link.members {
            forwards.push((
                format!("{}:{}", net::server_addr(m), net::SSH_PORT),
                "127.0.0.1:22".to_string(),
            ));
            forwards.push((
                format!("{}:{}", net::server_addr(m), net::PROBE_PORT),
                net::PROBE_BACKEND.to_string(),
            ));
        }
        let ready = self.dir.join("relay.ready");
        // The spec accepts rtt_ms from 0 to 1000 only (validate_link), so
        // half of it in µs is 0..=500_000 and the cast is exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let one_way_us = (link.added_rtt_ms * 1000.0 / 2.0).round() as u64;
        let rcfg = RelayConfig {
            forwards,
            one_way_us,
            probe_listen: net::PROBE_BACKEND.to_string(),
            ready_file: ready.clone(),
        };
        let rcfg_path = self.dir.join("relay.json");
        self.write_file(
            &rcfg_path,
            &serde_json::to_string_pretty(&rcfg).expect("serializes"),
        )?;
        let mut cmd = Command::new(&opts.tankbench);
        cmd.args(["lab", DAEMON_ARG, "relay"]).arg(&rcfg_path);
        sys::in_netns(&mut cmd, &net::server_ns(id))?;
        let log = self.dir.join("relay.log");
        let tag = rcfg_path.display().to_string();
        self.record(Resource::File {
            path: ready.clone(),
        })?;
        let pid = self.spawn_daemon(cmd, "relay", &tag, &log)?;
        self.wait_ready("relay", pid, &log, || ready.exists())?;
        sys::check_interrupted()?;
        Ok(())
    }

    /// sshd in the server namespace and an sshfs mount of the pool in the
    /// client namespace; returns the client's mount point.
    fn mount_sshfs(
        &mut self,
        id: &str,
        pool_mp: &Path,
        say: &dyn Fn(&str),
    ) -> Result<PathBuf, LabError> {
        let ssh_dir = self.dir.join("ssh");
        self.mkdir(&ssh_dir)?;
        let files = SshFiles::new(&ssh_dir);
        let prep = remote::prepare(&files, id);
        for f in files.all_files() {
            self.record(Resource::File { path: f })?;
        }
        prep?;
        // sshd needs its privilege-separation directory. It is a
        // system directory other sshd instances share, so it is made
        // if missing but not recorded (and never removed).
        std::fs::create_dir_all("/run/sshd").map_err(|e| io("create /run/sshd", e))?;
        let mut cmd = remote::sshd_command(&files)?;
        sys::in_netns(&mut cmd, &net::server_ns(id))?;
        let log = ssh_dir.join("sshd.stderr");
        let tag = files.config.display().to_string();
        let pid = self.spawn_daemon(cmd, "sshd", &tag, &log)?;
        if !files.log.exists() {
            // sshd creates its log file itself; record it for removal.
            std::fs::File::create(&files.log).map_err(|e| io("create sshd log", e))?;
        }
        self.record(Resource::File {
            path: files.log.clone(),
        })?;
        let sns = net::server_ns(id);
        self.wait_ready("sshd", pid, &log, || {
            sys::with_netns(&sns, || {
                Ok(std::net::TcpStream::connect("127.0.0.1:22").is_ok())
            })
            .unwrap_or(false)
        })?;
        let client_mp = self.dir.join("client");
        self.mkdir(&client_mp)?;
        say("sshfs mount in the client namespace");
        self.record(Resource::Mount {
            path: client_mp.clone(),
        })?;
        self.record(Resource::File {
            path: ssh_dir.join("sshfs.log"),
        })?;
        remote::mount_sshfs(id, &files, pool_mp, &client_mp)?;
        Ok(client_mp)
    }

    /// nfs-ganesha exporting the pool in the server namespace; returns the
    /// export's address for fileio's NFS client.
    fn start_nfs(
        &mut self,
        id: &str,
        pool_mp: &Path,
        link: &LinkSpec,
        opts: &UpOptions,
        say: &dyn Fn(&str),
    ) -> Result<String, LabError> {
        let dir = self.dir.join("nfs");
        self.mkdir(&dir)?;
        let cfg = crate::parts::nfs::NfsServerConfig {
            export: pool_mp.to_path_buf(),
            bind: net::server_addr(0),
            state_dir: dir.clone(),
            ready_file: dir.join("ready"),
        };
        for f in cfg.files() {
            self.record(Resource::File { path: f })?;
        }
        let cfg_path = dir.join("nfs.json");
        self.write_file(
            &cfg_path,
            &serde_json::to_string_pretty(&cfg).expect("serializes"),
        )?;
        say("nfs-ganesha exporting the pool in the server namespace");
        let mut cmd = Command::new(&opts.tankbench);
        cmd.args(["lab", DAEMON_ARG, "nfs"]).arg(&cfg_path);
        sys::in_netns(&mut cmd, &net::server_ns(id))?;
        let log = dir.join("daemon.log");
        let tag = cfg_path.display().to_string();
        let pid = self.spawn_daemon(cmd, "nfs server", &tag, &log)?;
        let ready = cfg.ready_file.clone();
        self.wait_ready("nfs server", pid, &log, || ready.exists())?;
        Ok(crate::parts::nfs::url(pool_mp, link.added_rtt_ms))
    }

    /// Open a running lab by name.
    pub fn open(root: &Path, name: &str) -> Result<Lab, LabError> {
        let dir = root.join(format!("tb-{name}"));
        if !State::path(&dir).exists() {
            return Err(LabError::NotUp {
                name: name.to_string(),
                dir,
            });
        }
        Ok(Lab {
            state: State::load(&dir)?,
            dir,
            children: Vec::new(),
        })
    }

    /// Every lab with a state file under `root`.
    pub fn list(root: &Path) -> Vec<Lab> {
        let mut out = Vec::new();
        if let Ok(rd) = std::fs::read_dir(root) {
            for e in rd.flatten() {
                let dir = e.path();
                let is_lab = e.file_name().to_str().is_some_and(|n| n.starts_with("tb-"));
                if is_lab && State::path(&dir).exists() {
                    if let Ok(state) = State::load(&dir) {
                        out.push(Lab {
                            dir,
                            state,
                            children: Vec::new(),
                        });
                    }
                }
            }
        }
        out.sort_by(|a, b| a.state.id.cmp(&b.state.id));
        out
    }

    /// Per-disk counters of the disk file system (updated about once a second).
    pub fn disk_stats(&self) -> Vec<crate::parts::diskfs::DiskStats> {
        std::fs::read_to_string(self.dir.join("disk-stats.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// Per-disk counters as they are now: waits out the disk daemon's
    /// one-second publishing interval, then asks it to publish (statfs).
    pub fn disk_stats_now(&self) -> Vec<crate::parts::diskfs::DiskStats> {
        std::thread::sleep(Duration::from_millis(1100));
        if let Some(info) = self.info() {
            let _ = crate::parts::diskfs::ask_to_publish(&info.disk_mount);
        }
        self.disk_stats()
    }

    pub fn info(&self) -> Option<&LabInfo> {
        self.state.info.as_ref()
    }

    /// What was built, or the error of a lab whose build did not finish.
    pub fn built(&self) -> Result<&LabInfo, LabError> {
        self.info().ok_or_else(|| LabError::NotBuilt {
            lab: self.state.id.clone(),
            name: self.state.spec.name.clone(),
        })
    }

    /// Tear the lab down (idempotent per object).
    pub fn down(mut self) -> Result<(), LabError> {
        self.teardown()
    }

    /// Remove every recorded object, newest first. Keeps going after a failure
    /// so one stuck object does not strand the rest; the objects that could not
    /// be removed stay in the state file for another `lab down`. A pool that
    /// cannot be destroyed is the exception: everything made before it (its
    /// disk daemon, disk mount and backing files) stays, because a pool whose
    /// disks vanish is suspended by ZFS (failmode=wait) and every later
    /// `zpool destroy` of it blocks forever (seen with zfs-fuse), whereas with
    /// its disks in place the next `lab down` destroys it.
    fn teardown(&mut self) -> Result<(), LabError> {
        let mut failures = Vec::new();
        let mut kept = Vec::new();
        // The pool's file system, taken while it is still mounted: a pool
        // that will not go names what holds it.
        // Only when the topmost mount there is the pool's (zfs-fuse's or
        // kernel ZFS's): under it the lab's bind of the directory is the
        // host's root file system, which every process is on.
        let pool_mount = self.state.info.as_ref().and_then(|i| {
            sys::mount_at(&i.pool_mountpoint)
                .filter(|(_, fstype)| matches!(fstype.as_str(), "fuse.zfs" | "zfs"))
                .map(|(id, _)| id)
        });
        // resources[0] is the lab directory holding the state file: it goes
        // last, and only when everything else is gone.
        while self.state.resources.len() > 1 {
            let r = self.state.resources.pop().expect("non-empty");
            let pool_stays = match remove(&r, &mut self.children) {
                Ok(()) => false,
                Err(e) => {
                    let pool = matches!(r, Resource::Pool { .. });
                    failures.push(if pool {
                        // What holds the pool's mount, so the user knows what
                        // to stop before the next try.
                        let holders = pool_mount.map(sys::holders_of).unwrap_or_default();
                        let held = if holders.is_empty() {
                            String::new()
                        } else {
                            format!("; in use by {}", holders.join(", "))
                        };
                        format!(
                            "{}: {e}{held} (its disks are kept for the next try)",
                            describe(&r)
                        )
                    } else {
                        format!("{}: {e}", describe(&r))
                    });
                    kept.push(r);
                    pool
                }
            };
            let mut st = self.state.clone();
            st.resources.extend(kept.iter().rev().cloned());
            let _ = st.save(&self.dir);
            if pool_stays {
                break;
            }
        }
        if !failures.is_empty() {
            kept.reverse();
            self.state.resources.extend(kept);
            let _ = self.state.save(&self.dir);
            return Err(LabError::Teardown { left: failures });
        }
        let _ = std::fs::remove_file(State::path(&self.dir));
        if let Some(r) = self.state.resources.pop() {
            remove(&r, &mut self.children)?;
        }
        if let Some(root) = self.dir.parent() {
            // The shared root goes too once empty, if it is the lab's own.
            if root
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("tb-"))
            {
                let _ = std::fs::remove_dir(root);
            }
        }
        Ok(())
    }
}

fn describe(r: &Resource) -> String {
    match r {
        Resource::Dir { path } => format!("directory {}", path.display()),
        Resource::File { path } => format!("file {}", path.display()),
        Resource::Process { pid, what, .. } => format!("{what} (pid {pid})"),
        Resource::Mount { path } => format!("mount {}", path.display()),
        Resource::Pool { name, .. } => format!("pool {name}"),
        Resource::Netns { name } => format!("network namespace {name}"),
    }
}

/// Remove one recorded object if it still exists.
fn remove(r: &Resource, children: &mut Vec<Child>) -> Result<(), LabError> {
    match r {
        Resource::Mount { path } => {
            // A FUSE server may still be finishing requests: retry briefly.
            let mut last = Ok(());
            for _ in 0..50 {
                if !sys::is_mounted(path) {
                    return Ok(());
                }
                last = sys::umount(path);
                if last.is_ok() {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            last
        }
        Resource::Process {
            pid,
            tag,
            what,
            start_time,
        } => {
            if start_time.is_some_and(|t| zfsd::start_time(*pid) != Some(t)) {
                // The pid now belongs to another process: ours is gone.
                return Ok(());
            }
            // zfs-fuse takes a few seconds to close its pools and exit.
            let grace = if what == zfsd::WHAT { 30 } else { 5 };
            sys::stop_pid(*pid, tag, Duration::from_secs(grace));
            if let Some(i) = children.iter().position(|c| c.id() as i32 == *pid) {
                let mut c = children.remove(i);
                let _ = c.wait();
            }
            if sys::pid_alive(*pid)
                && sys::pid_cmdline(*pid)
                    .iter()
                    .any(|a| a.contains(tag.as_str()))
            {
                return Err(LabError::StillRunning { pid: *pid });
            }
            Ok(())
        }
        Resource::Pool { name, zfsd } => destroy_pool(name, zfsd.as_ref()),
        Resource::Netns { name } => {
            if sys::netns_path(name).exists() {
                sys::run("ip", ["netns", "del", name.as_str()])?;
            }
            Ok(())
        }
        Resource::File { path } => match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io(format!("remove {}", path.display()), e)),
        },
        Resource::Dir { path } => match std::fs::remove_dir(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            // Not empty: something the lab did not create is inside; keep it.
            Err(e) => Err(io(format!("remove {}", path.display()), e)),
        },
    }
}

/// `program` (zpool, zfs) talking to the lab's own daemon, or to the
/// machine's ZFS when there is none.
pub(crate) fn zfs_command(daemon: Option<&Zfsd>, program: &str) -> Result<Command, LabError> {
    match daemon {
        Some(d) => d.command(program),
        None => Ok(Command::new(program)),
    }
}

/// Wait until pool `name`'s open txg has synced. `zfs inherit` of a
/// property the dataset already inherits changes nothing, but runs as a
/// sync task, which returns once its txg is on disk (`dsl_sync_task_do`
/// waits with `txg_wait_synced`); zfs-fuse has no `zpool sync`.
fn sync_txg(name: &str, daemon: Option<&Zfsd>) -> Result<(), LabError> {
    let mut cmd = zfs_command(daemon, "zfs")?;
    sys::run_cmd(cmd.args(["inherit", "atime", name])).map(|_| ())
}

/// Whether `name` is a pool; an error when zfs-fuse does not answer.
fn pool_exists(name: &str, daemon: Option<&Zfsd>) -> Result<bool, LabError> {
    let mut cmd = zfs_command(daemon, "zpool")?;
    match sys::status_within(
        cmd.args(["list", "-H", "-o", "name", name]),
        ZPOOL_ANSWER_LIMIT,
    ) {
        sys::Within::Succeeded => Ok(true),
        sys::Within::Failed => Ok(false),
        sys::Within::TimedOut => Err(zfs_fuse_hangs()),
    }
}

fn destroy_pool(name: &str, daemon: Option<&Zfsd>) -> Result<(), LabError> {
    if !name.starts_with("tb-") {
        return Err(LabError::NotOurs {
            what: format!("refusing to destroy pool '{name}' without the tb- prefix"),
        });
    }
    // A lab's own daemon that is gone took its pool with it: the pool was in
    // its private cache only, and nothing else imports it.
    if sys::which("zpool").is_none() || daemon.is_some_and(|d| !d.alive()) {
        return Ok(());
    }
    match pool_exists(name, daemon) {
        Ok(true) => {}
        Ok(false) => return Ok(()),
        // A lab's own daemon that does not answer serves nothing else.
        Err(e) => return stop_own_daemon(name, daemon).then_some(()).ok_or(e),
    }
    let mut last = Ok(());
    for _ in 0..10 {
        // zfs-fuse answers "pool is busy" while it still unmounts the
        // dataset; a later try succeeds.
        let mut cmd = zfs_command(daemon, "zpool")?;
        match sys::run_cmd_within(cmd.args(["destroy", "-f", name]), ZPOOL_DESTROY_LIMIT) {
            Some(r) => last = r.map(|_| ()),
            // Seen: three labs whose daemons had wedged held `lab down --all`
            // for 13 minutes in `zpool destroy -f`, which answered only once
            // the daemons were killed by hand.
            None => {
                let hung = LabError::Missing(format!(
                    "zfs-fuse did not finish `zpool destroy -f {name}` within {} s; stop the zfs-fuse that serves it when nothing uses the pool, then run lab down again",
                    ZPOOL_DESTROY_LIMIT.as_secs()
                ));
                return stop_own_daemon(name, daemon).then_some(()).ok_or(hung);
            }
        }
        if last.is_ok() || !pool_exists(name, daemon)? {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    // Still busy. Reproduced (crates/lab/tests/zfsd_lab.rs): after a
    // destroy refused while a process held a file in the pool, zfs-fuse
    // went on calling the pool busy once nothing held it, so no later
    // `lab down` could finish. Whatever still uses the pool gets I/O errors
    // once the daemon is gone; the pool's mount is removed after it, or
    // named if something holds it open.
    if stop_own_daemon(name, daemon) {
        return Ok(());
    }
    last
}

/// Stop a lab's own zfs-fuse (it serves this lab's pool only, and a daemon
/// that is gone took its pool with it); whether it is gone. `false` for the
/// system's daemon, which other pools may use.
fn stop_own_daemon(pool: &str, daemon: Option<&Zfsd>) -> bool {
    let Some(d) = daemon else {
        return false;
    };
    sys::stop_pid(d.pid, &d.tag, Duration::from_secs(30));
    // SIGKILL is delivered, not yet acted on, when stop_pid returns.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while d.alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if d.alive() {
        return false;
    }
    // A killed FUSE server leaves its mounts behind, disconnected: the
    // pool's datasets, deepest first. One still held stays, and the
    // removal of its mount point then says so.
    let mut ours: Vec<_> = sys::mounts()
        .into_iter()
        .filter(|m| {
            m.fstype == "fuse.zfs"
                && (m.source == pool || m.source.starts_with(&format!("{pool}/")))
        })
        .collect();
    ours.sort_by_key(|m| std::cmp::Reverse(m.target.components().count()));
    for m in ours {
        let _ = sys::umount(&m.target);
    }
    true
}

/// `model` for drive `stream` of the lab: a hard disk draws its rotational
/// positions from a stream of its own, as the simulator's pool gives each
/// of its disks (sim::components::Pool::new, LogDevice::mirrored). With one
/// seed for all, the drives of a raidz or mirror would turn in step, as
/// spindle-synchronised drives do, and a commit would wait for one drive's
/// rotation instead of the slowest of those it writes.
fn own_drive(
    model: &zfs_model::diskmodel::ModelParams,
    stream: u64,
) -> zfs_model::diskmodel::ModelParams {
    let mut m = model.clone();
    if let zfs_model::diskmodel::ModelParams::Hdd(p) = &mut m {
        p.seed = fileio::rng::SeededStream::new(p.seed, stream).next_u64();
    }
    m
}

/// Kernel OpenZFS when its module is loaded (or asked for), else zfs-fuse.
fn choose_backend(spec: &LabSpec) -> Result<Backend, LabError> {
    let kernel = Path::new("/sys/module/zfs").exists();
    let b = match spec.pool.backend {
        Some(Backend::OpenZfs) if !kernel => {
            return Err(LabError::Missing(
                "pool.backend = \"openzfs\" needs the kernel OpenZFS module (modprobe zfs; packages zfs-dkms zfsutils-linux)".into(),
            ))
        }
        Some(Backend::ZfsFuse) if kernel => {
            return Err(LabError::Spec(
                "pool.backend = \"zfs-fuse\": the kernel OpenZFS module is loaded and owns the zpool command; use \"openzfs\" or \"auto\"".into(),
            ))
        }
        Some(b) => b,
        None if kernel => Backend::OpenZfs,
        None => Backend::ZfsFuse,
    };
    if b == Backend::ZfsFuse {
        if let Some(s) = spec.pool.sync.filter(|s| *s != SyncProperty::Standard) {
            return Err(LabError::Spec(format!(
                "pool.sync: '{s}' is not supported by zfs-fuse (pool version 23 has no sync property); accepted with zfs-fuse: standard"
            )));
        }
        // zfs-fuse: "'recordsize' must be power of 2 from 512 to 128k" (pool
        // version 23 predates large blocks).
        if let Some(r) = spec.pool.recordsize.filter(|r| *r > 128 << 10) {
            return Err(LabError::Spec(format!(
                "pool.recordsize: {}K is too large for zfs-fuse (pool version 23 has no large blocks); accepted with zfs-fuse: a power of two from 512 to 128K",
                r >> 10
            )));
        }
    }
    Ok(b)
}

/// How long `zpool list` may take before zfs-fuse counts as hung. It answers
/// in well under a second; a daemon with a suspended pool (its disks gone,
/// failmode=wait) never does, and neither would the build.
const ZPOOL_ANSWER_LIMIT: Duration = Duration::from_secs(30);

/// How long `zpool destroy` may take: it writes out the pool's dirty data
/// (at most the lab's ARC, 512 MiB by default, at the emulated disks' rate)
/// before it returns.
const ZPOOL_DESTROY_LIMIT: Duration = Duration::from_secs(120);

fn pool_list() -> sys::Within {
    sys::status_within(Command::new("zpool").arg("list"), ZPOOL_ANSWER_LIMIT)
}

fn zfs_fuse_hangs() -> LabError {
    LabError::Missing(format!(
        "zfs-fuse does not answer `zpool list` within {} s (a pool whose disks are gone is suspended and blocks it); restart the daemon when nothing uses it",
        ZPOOL_ANSWER_LIMIT.as_secs()
    ))
}

/// What `lab down --all` found and removed beyond the state files.
#[derive(Debug, Default)]
pub struct Sweep {
    pub removed: Vec<String>,
    pub kept: Vec<String>,
}

/// Tear down every lab with a state file under `root`, then remove leftovers of
/// crashed runs that carry the lab's marks: network namespaces
/// `tb-*-client`/`tb-*-server` marked as a lab's under `root` whose state is
/// gone ([`sweep_namespaces`]), pools `tb-*` whose disks live under `root`,
/// mounts under `root/tb-*`, and the lab's own daemons. Nothing without the
/// prefix is touched.
pub fn down_all(root: &Path) -> Sweep {
    let mut sweep = Sweep::default();
    for lab in Lab::list(root) {
        let id = lab.state.id.clone();
        match lab.down() {
            Ok(()) => sweep.removed.push(format!("lab {id}")),
            Err(e) => sweep.kept.push(format!("lab {id}: {e}")),
        }
    }
    let root_s = root.display().to_string();
    let in_root = |p: &str| {
        Path::new(p)
            .strip_prefix(root)
            .ok()
            .and_then(|rest| rest.components().next())
            .and_then(|c| c.as_os_str().to_str().map(|s| s.starts_with("tb-")))
            .unwrap_or(false)
    };
    // sshfs mounts first (they hold the pool busy), then pools, then disks.
    let mut mounts: Vec<PathBuf> = sys::mounts()
        .into_iter()
        .filter(|m| in_root(&m.target.display().to_string()) && m.fstype != "fuse.zfs")
        .map(|m| m.target)
        .collect();
    mounts.sort_by_key(|p| std::cmp::Reverse(p.ends_with("client")));
    for m in mounts.iter().filter(|p| p.ends_with("client")) {
        match sys::umount(m) {
            Ok(()) => sweep.removed.push(format!("mount {}", m.display())),
            Err(e) => sweep.kept.push(format!("mount {}: {e}", m.display())),
        }
    }
    let answers = pool_list();
    if answers == sys::Within::TimedOut {
        sweep.kept.push(format!("pools: {}", zfs_fuse_hangs()));
    }
    if answers == sys::Within::Succeeded {
        let names = sys::run("zpool", ["list", "-H", "-o", "name"]).unwrap_or_default();
        for name in names
            .lines()
            .map(str::trim)
            .filter(|n| n.starts_with("tb-"))
        {
            let status = sys::run("zpool", ["status", name]).unwrap_or_default();
            if status.contains(&root_s) {
                match destroy_pool(name, None) {
                    Ok(()) => sweep.removed.push(format!("pool {name}")),
                    Err(e) => sweep.kept.push(format!("pool {name}: {e}")),
                }
            }
        }
    }
    sweep_zfs_daemons(&in_root, &mut sweep);
    for m in mounts.iter().filter(|p| !p.ends_with("client")) {
        if !sys::is_mounted(m) {
            continue;
        }
        match sys::umount(m) {
            Ok(()) => sweep.removed.push(format!("mount {}", m.display())),
            Err(e) => sweep.kept.push(format!("mount {}: {e}", m.display())),
        }
    }
    // Daemons: the lab's own (`__daemon` with a config under root/tb-*) and
    // sshd started with a config there.
    for pid in sys::all_pids() {
        let cmd = sys::pid_cmdline(pid);
        let ours = (cmd.iter().any(|a| a == DAEMON_ARG)
            || cmd.first().is_some_and(|a| a.ends_with("sshd")))
            && cmd.iter().any(|a| in_root(a));
        if ours && pid != std::process::id() as i32 {
            let tag = cmd.iter().find(|a| in_root(a)).cloned().unwrap_or_default();
            sys::stop_pid(pid, &tag, Duration::from_secs(3));
            sweep
                .removed
                .push(format!("process {pid} ({})", cmd.join(" ")));
        }
    }
    sweep_namespaces(root, &mut sweep);
    // Directories under root without a state file are reported, not deleted:
    // without the record the lab cannot prove it made every file inside.
    if let Ok(rd) = std::fs::read_dir(root) {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with("tb-") {
                sweep.kept.push(format!(
                    "directory {} (no state file; inspect and remove it yourself)",
                    e.path().display()
                ));
            }
        }
    }
    sweep
}

/// Network namespace names are global (`/run/netns`), labs are not: a lab
/// under another root may be up with its namespaces. A lab's namespaces go
/// with its teardown (they are in its state file); a `tb-*-client` or
/// `tb-*-server` namespace left after that is removed only when its owner
/// mark (net::owner) names a lab directory directly under `root` that has no
/// state file any more: a leftover of a lab of this root whose record is
/// gone. A namespace marked with another root's lab, or without a mark (made
/// by hand or by a tankbench before the mark), is not this root's to remove
/// and is left alone.
fn sweep_namespaces(root: &Path, sweep: &mut Sweep) {
    let Ok(rd) = std::fs::read_dir("/run/netns") else {
        return;
    };
    let roots: Vec<PathBuf> = [
        std::path::absolute(root).ok(),
        std::fs::canonicalize(root).ok(),
    ]
    .into_iter()
    .flatten()
    .collect();
    for e in rd.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if !(n.starts_with("tb-") && (n.ends_with("-client") || n.ends_with("-server"))) {
            continue;
        }
        let Some(owner) = net::owner(&n) else {
            continue;
        };
        let of_this_root = owner.parent().is_some_and(|p| roots.iter().any(|r| r == p))
            && owner
                .file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with("tb-"));
        if !of_this_root || State::path(&owner).exists() {
            continue;
        }
        match sys::run("ip", ["netns", "del", n.as_str()]) {
            Ok(_) => sweep.removed.push(format!("network namespace {n}")),
            Err(e) => sweep.kept.push(format!("network namespace {n}: {e}")),
        }
    }
}

/// The labs' own zfs-fuse daemons (a daemon directory under root/tb-* in
/// their command line): their pools first, then the daemons. The machine's
/// daemon carries no such mark and is never touched.
fn sweep_zfs_daemons(in_root: &dyn Fn(&str) -> bool, sweep: &mut Sweep) {
    for pid in sys::all_pids() {
        let cmd = sys::pid_cmdline(pid);
        let is_zfs_fuse = cmd.first().is_some_and(|a| a.ends_with("zfs-fuse"));
        let Some(tag) = cmd.iter().find(|a| in_root(a)).filter(|_| is_zfs_fuse) else {
            continue;
        };
        let daemon = Zfsd {
            pid,
            start_time: zfsd::start_time(pid).unwrap_or_default(),
            tag: tag.clone(),
        };
        let names = daemon
            .command("zpool")
            .and_then(|mut c| sys::run_cmd(c.args(["list", "-H", "-o", "name"])))
            .unwrap_or_default();
        let mut pools_kept = false;
        for name in names
            .lines()
            .map(str::trim)
            .filter(|n| n.starts_with("tb-"))
        {
            match destroy_pool(name, Some(&daemon)) {
                Ok(()) => sweep.removed.push(format!("pool {name}")),
                Err(e) => {
                    pools_kept = true;
                    sweep.kept.push(format!("pool {name}: {e}"));
                }
            }
        }
        if pools_kept {
            sweep.kept.push(format!(
                "zfs-fuse (pid {pid}): kept, a pool of it could not be destroyed"
            ));
            continue;
        }
        sys::stop_pid(pid, tag, Duration::from_secs(30));
        sweep
            .removed
            .push(format!("process {pid} ({})", cmd.join(" ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each hard disk of a lab turns on its own (the simulator's disks do):
    /// two drives of one model draw different rotational positions, the same
    /// drive the same ones every time; a flash device has no rotation.
    #[test]
    fn each_hard_disk_draws_its_own_rotational_positions() {
        use zfs_model::diskmodel::{FlashParams, HddParams, ModelParams};
        let hdd = ModelParams::Hdd(HddParams::default());
        let seed = |m: &ModelParams| match m {
            ModelParams::Hdd(p) => p.seed,
            ModelParams::Flash(p) => p.seed,
            ModelParams::None => 0,
        };
        assert_ne!(seed(&own_drive(&hdd, 0)), seed(&own_drive(&hdd, 1)));
        assert_eq!(seed(&own_drive(&hdd, 3)), seed(&own_drive(&hdd, 3)));
        let flash = ModelParams::Flash(FlashParams::default());
        assert_eq!(own_drive(&flash, 5), flash);
    }

    /// A command that does not answer in time is reported as hanging (and
    /// killed), not waited for; one that answers is not.
    #[test]
    fn commands_that_hang_are_not_waited_for() {
        let limit = Duration::from_millis(200);
        assert_eq!(
            sys::status_within(&mut Command::new("true"), Duration::from_secs(60)),
            sys::Within::Succeeded
        );
        assert_eq!(
            sys::status_within(&mut Command::new("false"), Duration::from_secs(60)),
            sys::Within::Failed
        );
        assert_eq!(
            sys::status_within(Command::new("sleep").arg("600"), limit),
            sys::Within::TimedOut
        );
    }

    /// A running daemon is found by its name, as zfs-fuse is before the lab
    /// would start another one (and remove its pid file).
    #[test]
    fn a_running_daemon_is_found_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("tbfake-daemon");
        std::fs::copy("/bin/sleep", &fake).unwrap();
        assert_eq!(sys::process_named("tbfake-daemon"), None);
        let mut child = testkit::spawn_fresh_copy(Command::new(&fake).arg("600"));
        let found = sys::process_named("tbfake-daemon");
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found, Some(child.id() as i32));
    }

    /// A pool that cannot be destroyed keeps what it was built on; what was
    /// made after it still goes, and everything left is recorded.
    #[test]
    fn a_pool_that_stays_keeps_its_disks() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("tb-keep");
        let disks = dir.join("disks");
        std::fs::create_dir_all(&disks).unwrap();
        let disk = disks.join("tb-d00");
        let later = dir.join("sshd.conf");
        std::fs::write(&disk, "").unwrap();
        std::fs::write(&later, "").unwrap();
        let resources = vec![
            Resource::Dir { path: dir.clone() },
            Resource::Dir {
                path: disks.clone(),
            },
            Resource::File { path: disk.clone() },
            // Refused without running zpool: the lab destroys only tb- pools.
            Resource::Pool {
                name: "not-ours".into(),
                zfsd: None,
            },
            Resource::File {
                path: later.clone(),
            },
        ];
        let spec = LabSpec::from_toml("name = \"keep\"\n[pool]\nlayout = \"mirror-2\"\n").unwrap();
        let lab = Lab {
            dir: dir.clone(),
            state: State {
                id: "tb-keep".into(),
                spec,
                resources: resources.clone(),
                info: None,
            },
            children: Vec::new(),
        };
        let e = lab.down().unwrap_err().to_string();
        assert!(
            e.contains("pool not-ours") && e.contains("disks are kept"),
            "{e}"
        );
        assert!(disk.exists() && !later.exists());
        let state = State::load(&dir).unwrap();
        assert_eq!(state.resources, resources[..4]);
    }
}
