//! Reading the facts on this host: the `zpool` and `zfs` tools, kstat files
//! and sysctl. Every failure becomes a [`ZfsFacts::missing`] entry.

use super::find_tool;
use super::parse;
use super::sampler::Sampler;
use super::{ArcFacts, ArcSnapshot, Dataset, Platform, Property, ZfsFacts};
use crate::environment::MountEntry;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a remote NFS target records instead of facts.
pub(crate) const NFS_ABSENT: &str =
    "remote NFS target: the server's ZFS is not visible from the client";

/// The longest a `zpool`/`zfs` query may take: a hung daemon must not hang
/// the run that asked.
const TOOL_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the `zpool` and `zfs` commands come from: the ones on this host's
/// path, talking to the ZFS its own tools reach, or a caller's that knows
/// where the pool's daemon listens (a lab's private zfs-fuse answers only
/// in its own mount namespace, crates/lab).
pub trait ZfsTools {
    /// The command that runs `program` (`zpool`, `zfs`) against the pool's
    /// ZFS, or why there is none (one line).
    fn command(&self, program: &str) -> Result<Command, String>;
}

/// The tools on this host's path.
pub struct HostTools;

impl ZfsTools for HostTools {
    fn command(&self, program: &str) -> Result<Command, String> {
        let path = find_tool(program).ok_or_else(|| format!("{program}: not installed"))?;
        Ok(Command::new(path))
    }
}

/// The ZFS facts of a run on `dir` (whose mount is `mount`): None when the
/// target is not on ZFS, the facts that could be read otherwise. Nothing
/// here fails: what cannot be read is listed in `missing`.
pub fn capture(dir: &Path, mount: &MountEntry) -> Option<ZfsFacts> {
    capture_with(dir, mount, &HostTools)
}

/// [`capture`] with the pool's `zpool` and `zfs` from `tools`.
pub fn capture_with(dir: &Path, mount: &MountEntry, tools: &dyn ZfsTools) -> Option<ZfsFacts> {
    let tool = |program: &str, args: &[&str]| run_tool(tools, program, args);
    if dir.to_string_lossy().starts_with("nfs://") {
        return Some(ZfsFacts::absent(NFS_ABSENT));
    }
    if mount.fs_type.starts_with("nfs") {
        return Some(ZfsFacts::absent(format!(
            "{} mount of {}: the server's ZFS is not visible from the client",
            mount.fs_type, mount.source
        )));
    }
    let platform = platform_of(&mount.fs_type)?;
    let mut facts = ZfsFacts {
        platform: Some(platform),
        ..ZfsFacts::default()
    };
    if mount.source.is_empty() {
        facts.note_missing("dataset", "the mount names no dataset");
        return Some(facts);
    }
    facts.dataset = dataset(tools, &mount.source, platform, &mut facts.missing);
    let pool_name = mount.source.split('/').next().unwrap_or(&mount.source);
    match tool("zpool", &status_args(platform, pool_name)) {
        Ok(text) => match parse::zpool_status(&text) {
            Ok(mut layout) => {
                layout.version = tool("zpool", &["list", "-H", "-o", "version", pool_name])
                    .ok()
                    .and_then(|v| v.trim().parse().ok());
                facts.pool = Some(layout);
            }
            Err(e) => facts.note_missing("pool", e.to_string()),
        },
        Err(e) => facts.note_missing("pool", e),
    }
    match version(tools, platform) {
        Ok(v) => facts.version = Some(v),
        Err(e) => facts.note_missing("version", e),
    }
    match txg_timeout(platform) {
        Ok(t) => facts.txg_timeout_s = Some(t),
        Err(e) => facts.note_missing("txg_timeout_s", e),
    }
    Some(facts)
}

fn platform_of(fs_type: &str) -> Option<Platform> {
    if fs_type == "zfs" {
        Some(if cfg!(target_os = "freebsd") {
            Platform::Freebsd
        } else {
            Platform::OpenzfsLinux
        })
    } else if fs_type.starts_with("fuse") && fs_type.contains("zfs") {
        Some(Platform::ZfsFuse)
    } else {
        None
    }
}

/// `-P` (full device paths) exists on OpenZFS only; zfs-fuse prints the
/// paths it was given anyway.
fn status_args(platform: Platform, pool: &str) -> Vec<&str> {
    match platform {
        Platform::ZfsFuse => vec!["status", pool],
        _ => vec!["status", "-P", pool],
    }
}

/// The dataset's recorded properties. `all` rather than a list: zfs-fuse
/// refuses a list naming a property it lacks (`sync`).
fn dataset(
    tools: &dyn ZfsTools,
    name: &str,
    platform: Platform,
    missing: &mut std::collections::BTreeMap<String, String>,
) -> Option<Dataset> {
    let text = match run_tool(
        tools,
        "zfs",
        &[
            "get",
            "-H",
            "-p",
            "-o",
            "property,value,source",
            "all",
            name,
        ],
    ) {
        Ok(t) => t,
        Err(e) => {
            missing.insert("dataset".into(), e);
            return None;
        }
    };
    let all = parse::zfs_get(&text);
    let mut properties: std::collections::BTreeMap<String, Property> = Dataset::PROPERTIES
        .iter()
        .filter_map(|p| all.get(*p).map(|v| (p.to_string(), v.clone())))
        .collect();
    if platform == Platform::ZfsFuse && !properties.contains_key("sync") {
        // The sync property came after zfs-fuse's code base; every fsync
        // there commits through the ZIL, which is what sync=standard means.
        properties.insert(
            "sync".into(),
            Property {
                value: "standard".into(),
                source: "implied".into(),
            },
        );
    }
    for p in Dataset::PROPERTIES {
        if !properties.contains_key(p) {
            missing.insert(format!("dataset.{p}"), "not a property of this ZFS".into());
        }
    }
    Some(Dataset {
        name: name.to_string(),
        properties,
    })
}

fn version(tools: &dyn ZfsTools, platform: Platform) -> Result<String, String> {
    match platform {
        Platform::OpenzfsLinux => std::fs::read_to_string("/sys/module/zfs/version")
            .map(|v| v.trim().to_string())
            .or_else(|_| zfs_version_command(tools)),
        Platform::Freebsd => zfs_version_command(tools),
        Platform::ZfsFuse => {
            let text = run_tool(tools, "zpool", &["upgrade", "-v"])?;
            parse::pool_version_supported(&text)
                .map(|v| format!("zfs-fuse, pool version {v}"))
                .ok_or_else(|| "zpool upgrade -v names no pool version".to_string())
        }
    }
}

/// `zfs version` (OpenZFS 0.8 and later): `zfs-2.1.5-1` then `zfs-kmod-...`;
/// the kernel module's line is the one that runs the pool.
fn zfs_version_command(tools: &dyn ZfsTools) -> Result<String, String> {
    let text = run_tool(tools, "zfs", &["version"])?;
    let kmod = text.lines().find(|l| l.starts_with("zfs-kmod-"));
    kmod.or(text.lines().next())
        .map(|l| l.trim().trim_start_matches("zfs-kmod-").to_string())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| "zfs version printed nothing".to_string())
}

fn txg_timeout(platform: Platform) -> Result<u64, String> {
    let parse = |text: String, what: &str| {
        text.trim()
            .parse()
            .map_err(|_| format!("{what}: not a number: {}", text.trim()))
    };
    match platform {
        Platform::OpenzfsLinux => {
            let path = "/sys/module/zfs/parameters/zfs_txg_timeout";
            let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            parse(text, path)
        }
        Platform::Freebsd => parse(
            tool("sysctl", &["-n", "vfs.zfs.txg.timeout"])?,
            "vfs.zfs.txg.timeout",
        ),
        Platform::ZfsFuse => {
            Err("zfs-fuse has no tunable interface (its compiled-in zfs_txg_timeout is 5 s)".into())
        }
    }
}

/// The ARC now, with where it was read.
pub(crate) fn arc_now(platform: Platform) -> Result<(String, ArcSnapshot), String> {
    match platform {
        Platform::OpenzfsLinux => {
            let path = "/proc/spl/kstat/zfs/arcstats";
            let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            let snapshot = parse::arc_snapshot(&parse::linux_arcstats(&text), path)
                .map_err(|e| e.to_string())?;
            Ok((path.to_string(), snapshot))
        }
        Platform::Freebsd => {
            let what = "sysctl kstat.zfs.misc.arcstats";
            let text = tool("sysctl", &["kstat.zfs.misc.arcstats"])?;
            let snapshot = parse::arc_snapshot(&parse::freebsd_arcstats(&text), what)
                .map_err(|e| e.to_string())?;
            Ok((what.to_string(), snapshot))
        }
        Platform::ZfsFuse => Err(
            "zfs-fuse publishes no ARC statistics here (/proc/spl/kstat/zfs comes with the kernel module; zfs-fuse's own kstats need its /zfs-kstat mount)".into(),
        ),
    }
}

/// `program args` within [`TOOL_TIMEOUT`]: its stdout, or why not (one line).
pub fn tool(program: &str, args: &[&str]) -> Result<String, String> {
    run_tool(&HostTools, program, args)
}

/// `program args` from `tools` within [`TOOL_TIMEOUT`]: its stdout, or why
/// not (one line).
fn run_tool(tools: &dyn ZfsTools, program: &str, args: &[&str]) -> Result<String, String> {
    let shown = format!("{program} {}", args.join(" "));
    let mut child = tools
        .command(program)?
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{shown}: {e}"))?;
    let deadline = Instant::now() + TOOL_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{shown}: no answer within {} s",
                    TOOL_TIMEOUT.as_secs()
                ));
            }
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{shown}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(format!(
            "{shown}: {}",
            crate::text::one_line(err.lines().next().unwrap_or("failed"))
        ))
    }
}

/// The run-time facts, taken around a run: the ARC before and after, and
/// `zpool iostat` while it runs. Start it just before the workers, finish
/// it after them; dropping it unfinished stops the sampler.
/// Why a run on zfs-fuse has no iostat samples.
pub(crate) const ZFS_FUSE_NO_IOSTAT: &str =
    "not sampled on zfs-fuse: its zpool iostat during the run's I/O was seen to stall the pool's FUSE requests";

pub struct Watch {
    platform: Option<Platform>,
    arc_before: Option<Result<(String, ArcSnapshot), String>>,
    sampler: Option<Result<Sampler, String>>,
}

impl Watch {
    /// Start watching the ZFS of `facts` (nothing when there is none), with
    /// iostat samples every `interval_s` seconds.
    pub fn start(facts: Option<&ZfsFacts>, interval_s: u64) -> Watch {
        let idle = Watch {
            platform: None,
            arc_before: None,
            sampler: None,
        };
        let Some(facts) = facts.filter(|f| f.absent.is_none()) else {
            return idle;
        };
        let Some(platform) = facts.platform else {
            return idle;
        };
        let pool = facts
            .pool
            .as_ref()
            .map(|p| p.name.clone())
            .or_else(|| facts.dataset.as_ref().map(|d| d.pool_name().to_string()));
        Watch {
            platform: Some(platform),
            arc_before: Some(arc_now(platform)),
            sampler: match platform {
                // zfs-fuse answers `zpool iostat` through the same daemon
                // that serves the run's FUSE requests; with the two at once
                // a run's fsync was seen to wait for ever (a test run here,
                // 2026-12-01). A benchmark must not hang for a fact.
                Platform::ZfsFuse => Some(Err(ZFS_FUSE_NO_IOSTAT.to_string())),
                _ => pool.map(|pool| {
                    Sampler::start(platform, &pool, facts.pool.clone(), interval_s.max(1))
                }),
            },
        }
    }

    /// The sample interval for a run limited to `time_s` seconds (0: no
    /// time limit): 1 s, coarser for long runs so a result stays small
    /// (at most about 600 samples).
    pub(crate) fn interval_for(time_s: u64) -> u64 {
        (time_s / 600).max(1)
    }

    /// Stop, and put the ARC deltas and the samples into `facts`.
    pub fn finish(mut self, facts: &mut Option<ZfsFacts>) {
        let Some(facts) = facts.as_mut() else {
            return;
        };
        if let (Some(platform), Some(before)) = (self.platform, self.arc_before.take()) {
            match before.and_then(|(source, b)| arc_now(platform).map(|(_, a)| (source, b, a))) {
                Ok((source, before, after)) => {
                    facts.arc = Some(ArcFacts::over(&source, before, after));
                }
                Err(e) => facts.note_missing("arc", e),
            }
        }
        match self.sampler.take() {
            Some(Ok(sampler)) => match sampler.stop() {
                Ok(samples) if !samples.is_empty() => facts.iostat = samples,
                Ok(_) => facts.note_missing(
                    "iostat",
                    "the run ended before zpool iostat completed an interval",
                ),
                Err(e) => facts.note_missing("iostat", e),
            },
            Some(Err(e)) => facts.note_missing("iostat", e),
            None => {}
        }
    }
}
