//! `LabSpec`: what a lab is made of, read from TOML and validated once. Every
//! error names the option and the accepted values.
//!
//! Sizes, layouts, link rates and disk classes are read by zfs-model's parsers,
//! the ones `tankbench plan` uses, so a word means the same bytes, vdevs, bits
//! per second and device in a lab spec as on the `plan` command line. What is
//! the lab's own here are its bounds (what it can build on one machine, each
//! with its reason) and the meaning each size field has (docs/lab.md).

use crate::LabError;
use fileio::text::one_line;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use zfs_model::dataset::SyncProperty;
use zfs_model::diskmodel::{builtin_names, ModelParams};
use zfs_model::layout::{self, Shape, ShapeLimits, VdevKind};
use zfs_model::network::{format_rate, parse_rate, Link};
use zfs_model::units::{self, SizeMeaning};
use zfs_model::ModelError;

/// Where labs live unless the spec or `TANKBENCH_LAB_ROOT` says otherwise.
pub(crate) const DEFAULT_ROOT: &str = "/var/tmp/tb-lab";

/// The spec as written in TOML (before validation).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSpec {
    pub name: String,
    #[serde(default)]
    pub root: Option<PathBuf>,
    pub pool: RawPool,
    #[serde(default)]
    pub link: Option<RawLink>,
    #[serde(default)]
    pub access: Option<String>,
    /// The server: the ARC of the lab's own zfs-fuse daemon.
    #[serde(default)]
    pub server: Option<RawServer>,
    /// User-defined or overridden disk models, by name.
    #[serde(default)]
    pub models: BTreeMap<String, toml::Value>,
    /// Default fileio options for `lab run` without options.
    #[serde(default)]
    pub workload: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPool {
    pub layout: String,
    #[serde(default = "default_disk_model")]
    pub disk: String,
    #[serde(default = "default_disk_size")]
    pub disk_size: String,
    #[serde(default)]
    pub backend: Option<String>,
    #[serde(default)]
    pub ashift: Option<u32>,
    #[serde(default)]
    pub recordsize: Option<String>,
    #[serde(default)]
    pub compression: Option<String>,
    #[serde(default)]
    pub sync: Option<String>,
    #[serde(default)]
    pub log: Option<RawLog>,
}

fn default_disk_model() -> String {
    "hdd-7200".into()
}
fn default_disk_size() -> String {
    "8TB".into()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RawLog {
    /// "none", "MODEL" or "MODEL:SIZE".
    Short(String),
    Full {
        disk: String,
        #[serde(default)]
        size: Option<String>,
        #[serde(default)]
        mirror: bool,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    /// The ARC ceiling of the lab's zfs-fuse daemon (`zfs-fuse -m`), a size
    /// as `zfs` reads it: 2G = 2 GiB.
    #[serde(default)]
    pub arc: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    /// A link as `plan --link` takes it (1G, 10G, 2.5G, 2x1G), or the long
    /// forms lacp and custom (with `rate`, `members`).
    pub kind: String,
    #[serde(default)]
    pub rate: Option<String>,
    #[serde(default)]
    pub members: Option<u32>,
    /// Added round-trip time, ms (on top of what the veth pair itself takes).
    #[serde(default)]
    pub rtt_ms: Option<f64>,
}

/// A validated lab specification.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LabSpec {
    /// Short name; every object is called `tb-<name>...`.
    pub name: String,
    pub root: PathBuf,
    pub pool: PoolSpec,
    pub link: Option<LinkSpec>,
    pub access: Access,
    pub workload: Vec<String>,
    /// The server's memory for ZFS (older state files have none).
    #[serde(default)]
    pub server: ServerSpec,
}

/// The server side of a lab beyond its pool.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ServerSpec {
    /// Bytes of ARC the lab's zfs-fuse daemon may hold (`zfs-fuse -m`, whole
    /// MiB); `None`: zfs-fuse's own default.
    pub arc: Option<u64>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    ZfsFuse,
    OpenZfs,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PoolSpec {
    /// The layout in the form `plan` prints it ("3xraidz2-8", groups joined
    /// by " + "): the `layout` label, so equal layouts get equal labels
    /// however they were typed.
    pub layout_text: String,
    /// Groups of uniform vdevs, in the order they are given to `zpool create`.
    pub layout: Vec<Shape>,
    /// `None`: choose at build time (kernel OpenZFS if loaded, else zfs-fuse).
    pub backend: Option<Backend>,
    /// The model's name: a user model's as written, a built-in's as its disk
    /// class is named (`hdd` is `hdd-7200`).
    pub disk_model_name: String,
    pub disk_model: ModelParams,
    pub disk_size: u64,
    pub ashift: Option<u32>,
    pub recordsize: Option<u64>,
    pub compression: Option<String>,
    pub sync: Option<SyncProperty>,
    pub log: Option<LogSpec>,
}

impl PoolSpec {
    /// `8TB hdd-7200, log 10GB ssd-sata`: disk size and model, and the log
    /// device if any (shown by `lab up` and `lab status`).
    pub fn disks_summary(&self) -> String {
        format!(
            "{} {}{}",
            human_bytes(self.disk_size),
            self.disk_model_name,
            self.log
                .as_ref()
                .map(|l| format!(", log {} {}", human_bytes(l.size), l.model_name))
                .unwrap_or_default()
        )
    }

    pub fn disk_count(&self) -> u32 {
        // Validated: at most MAX_DISKS in all.
        self.layout.iter().map(Shape::disks).sum()
    }

    /// `zpool create` words for the data vdevs, given the disk paths in order.
    pub(crate) fn vdev_args(&self, disks: &[PathBuf]) -> Vec<String> {
        let mut out = Vec::new();
        let mut it = disks.iter();
        for g in &self.layout {
            for _ in 0..g.count {
                if let Some(w) = g.kind.zpool_word() {
                    out.push(w);
                }
                for _ in 0..g.width {
                    out.push(
                        it.next()
                            .expect("disk count matches layout")
                            .display()
                            .to_string(),
                    );
                }
            }
        }
        out
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LogSpec {
    pub model_name: String,
    pub model: ModelParams,
    pub size: u64,
    pub mirror: bool,
}

/// Decimal sizes for status lines: "8TB" for a marketed 8 TB disk
/// (8,001,563,222,016 bytes), "10GB".
fn human_bytes(b: u64) -> String {
    const UNITS: [(&str, f64); 4] = [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)];
    for (u, v) in UNITS {
        if b as f64 >= v {
            let x = b as f64 / v;
            return if (x - x.round()).abs() < 0.05 {
                format!("{:.0}{u}", x)
            } else {
                format!("{x:.1}{u}")
            };
        }
    }
    format!("{b}B")
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LinkSpec {
    /// Label, in the form `plan --link` reads: 1G, 10G, 2x1G, 100M.
    pub label: String,
    /// Rate of one member link, bits per second.
    pub rate_bps: u64,
    /// Member links (LACP); one flow uses one member.
    pub members: u32,
    /// Round trip added by the lab's delaying relay, ms.
    pub added_rtt_ms: f64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Local,
    Sshfs,
    /// NFSv3 to nfs-ganesha in the server namespace, with tankbench's own
    /// client: writes as the Linux client sends them (UNSTABLE, COMMIT on
    /// fsync).
    Nfs,
    /// NFSv3 with every WRITE FILE_SYNC, as VMware ESXi's NFS datastore
    /// client sends the writes of a virtual disk.
    #[serde(rename = "nfs-stable")]
    NfsStable,
}

impl Access {
    pub(crate) fn is_nfs(self) -> bool {
        matches!(self, Access::Nfs | Access::NfsStable)
    }
}

/// Most data disks a lab builds. A lab stands for one server's pool, and one
/// server attaches a few hundred disks at most; 1,024 also takes four raidz3
/// vdevs of the widest kind. Built here with zfs-fuse: 1,020 disks (4 x
/// raidz3-255) in 12 s, so the bound is about purpose, not a breaking point.
pub const MAX_DISKS: u64 = 1024;

/// Widest vdev: `zpool create` refuses raidz vdevs of more than 255 devices
/// ("raidz3 supports no more than 255 devices", zfs-fuse and OpenZFS alike).
/// Mirrors are held to the same bound; ZFS sets none, and nobody builds one
/// that wide.
pub(crate) const MAX_VDEV_WIDTH: u32 = 255;

/// ZFS refuses devices smaller than 64 MiB (SPA_MINDEVSIZE).
pub(crate) const MIN_DEVICE_BYTES: u64 = 64 << 20;

/// Largest disk or log device: 1 PiB, ten times the biggest drives sold, and
/// still a whole number of bytes for every sum the lab makes over 1,024 of
/// them. The file system under the lab root may allow less (ext4 stops just
/// short of 16 TiB per file): [`LabSpec::check_host`] asks it before a build.
pub(crate) const MAX_DEVICE_BYTES: u64 = 1 << 50;

/// Fastest link the lab shapes: 100 Gbit/s, more than any client link a NAS
/// comparison needs and more than a veth pair moves on one host; the slowest
/// is 8 kbit/s, below which tbf's burst arithmetic breaks down.
const MAX_RATE_BPS: u64 = 100_000_000_000;
const MIN_RATE_BPS: u64 = 8_000;

/// Most member links of a LACP aggregate: IEEE 802.1AX bundles up to 8 active
/// links.
const MAX_LINK_MEMBERS: u32 = 8;

fn bad(option: &str, got: impl std::fmt::Display, accepted: &str) -> LabError {
    LabError::Invalid {
        field: option.to_string(),
        value: got.to_string(),
        reason: None,
        accepted: accepted.to_string(),
    }
}

/// [`bad`], with why the reader refused the value.
fn bad_because(option: &str, got: &str, e: &ModelError, accepted: &str) -> LabError {
    LabError::Invalid {
        field: option.to_string(),
        value: got.to_string(),
        reason: Some(reason(e)),
        accepted: accepted.to_string(),
    }
}

/// What a zfs-model parse error says about the value, without the value
/// itself (the lab's message names it already).
fn reason(e: &ModelError) -> String {
    match e {
        ModelError::InvalidSize { reason, .. }
        | ModelError::InvalidLayout { reason, .. }
        | ModelError::InvalidValue { reason, .. } => reason.clone(),
        ModelError::UnknownUnit { unit, .. } => format!("unknown unit '{unit}'"),
        other => other.to_string(),
    }
}

/// A device size: read by zfs-model's size parser with the meaning the field
/// has (a marketed disk size goes through the IDEMA rule, as in `plan
/// --disks`; a log device is a partition of exact bytes, as in `plan --log`),
/// within the sizes ZFS and the lab take.
fn device_size(
    option: &str,
    text: &str,
    meaning: SizeMeaning,
    example: &str,
) -> Result<u64, LabError> {
    let accepted = format!(
        "a size from 64M (the smallest device ZFS takes) to 1P, e.g. {example}; TB, GB are decimal, T, G, TiB, GiB binary"
    );
    match units::parse_size(text, meaning) {
        Ok(bytes) if (MIN_DEVICE_BYTES..=MAX_DEVICE_BYTES).contains(&bytes) => Ok(bytes),
        Ok(_) => Err(bad(option, text, &accepted)),
        Err(e) => Err(bad_because(option, text, &e, &accepted)),
    }
}

/// Read a layout: groups joined by `+`, each a shape as `plan --layout`
/// writes it (`3xraidz2-8`, `2x raidz2-12`, `12xmirror-2`, `24xstripe`), held
/// to what `zpool create` builds and to the lab's bounds ([`MAX_DISKS`],
/// [`MAX_VDEV_WIDTH`] for mirrors too). The error names the layout as typed.
pub(crate) fn parse_layout(text: &str) -> Result<Vec<Shape>, String> {
    let groups = layout::parse_groups(text, ShapeLimits::Zpool).map_err(|e| e.to_string())?;
    let mut total: u64 = 0;
    for g in &groups {
        if g.kind == VdevKind::Mirror && g.width > MAX_VDEV_WIDTH {
            return Err(format!(
                "'{text}': a mirror has 2 to {MAX_VDEV_WIDTH} disks per vdev in a lab (as raidz in zpool create)"
            ));
        }
        total += g.count as u64 * g.width as u64;
    }
    if total > MAX_DISKS {
        return Err(format!(
            "'{text}': {total} disks; at most {MAX_DISKS} disks in all (one server's pool)"
        ));
    }
    Ok(groups)
}

impl RawSpec {
    pub fn from_toml(text: &str, origin: &str) -> Result<RawSpec, LabError> {
        toml::from_str(text).map_err(|e| LabError::Spec(format!("{origin}: {}", one_line(&e))))
    }

    /// The model called `name`, and the name it goes by in labels: a user
    /// model's own, a built-in's disk class name.
    fn model(&self, name: &str, option: &str) -> Result<(String, ModelParams), LabError> {
        if let Some(v) = self.models.get(name) {
            // A user model: a table with `kind` (a built-in: a disk class
            // or none) and any parameters to override.
            let table = v.as_table().ok_or_else(|| {
                bad(
                    &format!("models.{name}"),
                    v,
                    "a table with kind = MODEL and parameters",
                )
            })?;
            let base_name = table.get("kind").and_then(|k| k.as_str()).unwrap_or("");
            let (_, base) = ModelParams::builtin(base_name).ok_or_else(|| {
                bad(
                    &format!("models.{name}.kind"),
                    base_name,
                    &builtin_names().join(", "),
                )
            })?;
            let mut merged =
                toml::Value::try_from(&base).expect("a built-in model serializes to TOML");
            let mt = merged.as_table_mut().expect("model serializes to a table");
            for (k, val) in table {
                if k != "kind" {
                    mt.insert(k.clone(), val.clone());
                }
            }
            let params: ModelParams = merged.try_into().map_err(|e: toml::de::Error| {
                LabError::Spec(format!("models.{name}: {}", one_line(&e)))
            })?;
            params
                .validate()
                .and_then(|_| check_model_ranges(&params))
                .map_err(|e| LabError::Spec(format!("models.{name}.{e}")))?;
            return Ok((name.to_string(), params));
        }
        ModelParams::builtin(name)
            .map(|(canonical, params)| (canonical.to_string(), params))
            .ok_or_else(|| {
                let mut accepted: Vec<String> =
                    builtin_names().iter().map(|s| s.to_string()).collect();
                accepted.extend(self.models.keys().cloned());
                bad(option, name, &accepted.join(", "))
            })
    }

    pub fn validate(&self) -> Result<LabSpec, LabError> {
        validate_name(&self.name)?;
        let root = match &self.root {
            Some(r) => r.clone(),
            None => default_root(),
        };
        if !root.is_absolute() {
            return Err(bad("root", root.display(), "an absolute path"));
        }
        let p = &self.pool;
        let layout =
            parse_layout(&p.layout).map_err(|e| LabError::Spec(format!("pool.layout: {e}")))?;
        let backend = match p.backend.as_deref() {
            None | Some("auto") => None,
            Some("zfs-fuse") => Some(Backend::ZfsFuse),
            Some("openzfs") | Some("kernel") => Some(Backend::OpenZfs),
            Some(other) => return Err(bad("pool.backend", other, "auto, zfs-fuse, openzfs")),
        };
        let (disk_model_name, disk_model) = self.model(&p.disk, "pool.disk")?;
        let disk_size = device_size(
            "pool.disk_size",
            &p.disk_size,
            SizeMeaning::MarketedDisk,
            "8TB, 8T, 100G",
        )?;
        if let Some(a) = p.ashift {
            if !(9..=16).contains(&a) {
                return Err(bad("pool.ashift", a, "9 to 16"));
            }
        }
        let recordsize = match &p.recordsize {
            None => None,
            Some(r) => Some(units::parse_block_size(r, 512, 1 << 20).map_err(|_| {
                bad(
                    "pool.recordsize",
                    r,
                    "a power of two from 512 to 1M, e.g. 128K",
                )
            })?),
        };
        if backend == Some(Backend::ZfsFuse) && recordsize.is_some_and(|r| r > 128 << 10) {
            // zfs-fuse: "'recordsize' must be power of 2 from 512 to 128k".
            return Err(bad(
                "pool.recordsize",
                p.recordsize.as_deref().unwrap_or_default(),
                "with backend zfs-fuse (pool version 23, no large blocks) a power of two from 512 to 128K",
            ));
        }
        let compression = p
            .compression
            .as_deref()
            .map(validate_compression)
            .transpose()?;
        let sync = match p.sync.as_deref() {
            None => None,
            Some(s) => Some(
                SyncProperty::parse(s)
                    .ok_or_else(|| bad("pool.sync", s, SyncProperty::ACCEPTED))?,
            ),
        };
        let log = self.validate_log()?;
        let link = self.link.as_ref().map(validate_link).transpose()?;
        let access = validate_access(self.access.as_deref(), link.is_some())?;
        let arc = self
            .server
            .as_ref()
            .and_then(|s| s.arc.as_deref())
            .map(validate_arc)
            .transpose()?;
        if arc.is_some() && backend == Some(Backend::OpenZfs) {
            return Err(bad(
                "server.arc",
                self.server.as_ref().and_then(|s| s.arc.as_deref()).unwrap_or_default(),
                "with backend openzfs: nothing (the kernel's ARC is the whole machine's; set zfs_arc_max yourself)",
            ));
        }
        Ok(LabSpec {
            name: self.name.clone(),
            root,
            pool: PoolSpec {
                layout_text: layout::groups_name(&layout),
                layout,
                backend,
                disk_model_name,
                disk_model,
                disk_size,
                ashift: p.ashift,
                recordsize,
                compression,
                sync,
                log,
            },
            link,
            access,
            workload: self.workload.clone(),
            server: ServerSpec { arc },
        })
    }

    fn validate_log(&self) -> Result<Option<LogSpec>, LabError> {
        Ok(match &self.pool.log {
            None => None,
            Some(RawLog::Short(s)) if s == "none" || s.is_empty() => None,
            Some(RawLog::Short(s)) => {
                let (m, size) = match s.split_once(':') {
                    Some((m, sz)) => (m, Some(sz)),
                    None => (s.as_str(), None),
                };
                Some(self.log_spec(m, size, false)?)
            }
            Some(RawLog::Full { disk, size, mirror }) => {
                Some(self.log_spec(disk, size.as_deref(), *mirror)?)
            }
        })
    }

    fn log_spec(&self, model: &str, size: Option<&str>, mirror: bool) -> Result<LogSpec, LabError> {
        let (model_name, params) = self.model(model, "pool.log")?;
        let size = match size {
            None => 10_000_000_000,
            Some(s) => device_size("pool.log size", s, SizeMeaning::Exact, "10GB, 16G")?,
        };
        Ok(LogSpec {
            model_name,
            model: params,
            size,
            mirror,
        })
    }
}

/// Ranges for a user model's parameters, on top of
/// [`ModelParams::validate`]'s physical sense: beyond them a lab either crawls
/// (a slow disk model turns every request into a stall of seconds) or holds
/// absurd state (one slot per command the device works on). The message starts
/// with the field name.
fn check_model_ranges(params: &ModelParams) -> Result<(), String> {
    fn within(field: &str, v: f64, lo: f64, hi: f64, why: &str) -> Result<(), String> {
        if (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(format!(
                "{field}: invalid value '{v}'; accepted: {lo} to {hi} ({why})"
            ))
        }
    }
    match params {
        ModelParams::Hdd(p) => {
            within(
                "rpm",
                p.rpm,
                3600.0,
                20000.0,
                "drives spin at 4200 to 15000 rpm",
            )?;
            within(
                "avg_seek_ms",
                p.avg_seek_ms,
                0.1,
                100.0,
                "drives seek in 2 to 15 ms",
            )?;
            within(
                "track_to_track_ms",
                p.track_to_track_ms,
                0.0,
                100.0,
                "at most avg_seek_ms",
            )?;
            let rate = "a 1 MiB request may take at most about a second; no device passes 100 GB/s";
            within("media_mb_s", p.media_mb_s, 1.0, 100_000.0, rate)?;
            within("interface_mb_s", p.interface_mb_s, 1.0, 100_000.0, rate)?;
            within(
                "overhead_ms",
                p.overhead_ms,
                0.0,
                100.0,
                "controllers take well under 1 ms",
            )?;
            if p.cache_bytes > 4 << 30 {
                return Err(format!(
                    "cache_bytes: invalid value '{}'; accepted: 0 to {} (drive caches hold 64 to 512 MiB)",
                    p.cache_bytes,
                    4u64 << 30
                ));
            }
            Ok(())
        }
        ModelParams::Flash(p) => {
            let latency = "flash answers in well under a millisecond; longer stalls the lab";
            within("read_ms", p.read_ms, 0.0, 1000.0, latency)?;
            within("write_ms", p.write_ms, 0.0, 1000.0, latency)?;
            within(
                "flush_ms",
                p.flush_ms,
                0.0,
                10_000.0,
                "consumer drives flush in a few ms",
            )?;
            within(
                "flush_ms_per_mb",
                p.flush_ms_per_mb,
                0.0,
                1000.0,
                "programming 1 MB takes about 1 ms",
            )?;
            let rate = "a 1 MiB request may take at most about a second; no device passes 100 GB/s";
            within("read_mb_s", p.read_mb_s, 1.0, 100_000.0, rate)?;
            within("write_mb_s", p.write_mb_s, 1.0, 100_000.0, rate)?;
            within(
                "destage_ms",
                p.destage_ms,
                0.0,
                60_000.0,
                "drives program their buffer within a second or so",
            )?;
            if p.cache_bytes > 4 << 30 {
                return Err(format!(
                    "cache_bytes: invalid value '{}'; accepted: 0 to {} (the lab keeps the previous content of every cached write in memory)",
                    p.cache_bytes,
                    4u64 << 30
                ));
            }
            if !(1..=1024).contains(&p.parallelism) {
                return Err(format!(
                    "parallelism: invalid value '{}'; accepted: 1 to 1024 (commands a device works on at once; the model keeps a slot for each)",
                    p.parallelism
                ));
            }
            Ok(())
        }
        ModelParams::None => Ok(()),
    }
}

/// The deepest existing directory at or above `path` (where the lab root
/// will be made).
fn existing_ancestor(path: &Path) -> Option<&Path> {
    path.ancestors().find(|p| p.is_dir())
}

/// An unnamed file (O_TMPFILE) in a directory, to ask the file system how
/// large a sparse file may be: nothing is ever visible, and closing it frees it.
struct SparseProbe(std::fs::File);

impl SparseProbe {
    fn open(dir: &Path) -> Option<SparseProbe> {
        use std::os::unix::fs::OpenOptionsExt;
        // open(2) with O_TMPFILE (std adds O_CLOEXEC); without O_CREAT, so it
        // can never open or create a named file.
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .mode(0o600)
            .open(dir)
            .ok()
            .map(SparseProbe)
    }

    /// ftruncate(2) on the unnamed file: sparse, allocates nothing. Sizes
    /// past off_t are refused by set_len itself.
    fn fits(&self, bytes: u64) -> bool {
        self.0.set_len(bytes).is_ok()
    }

    /// The largest size that fits, below `too_big` (bisection; about 50 calls).
    fn largest_below(&self, too_big: u64) -> u64 {
        let (mut ok, mut bad) = (0u64, too_big);
        while bad - ok > 1 {
            let mid = ok + (bad - ok) / 2;
            if self.fits(mid) {
                ok = mid;
            } else {
                bad = mid;
            }
        }
        ok
    }
}

/// The added round trip a link gets unless `rtt_ms` says otherwise: the low
/// end of the application round trip `plan` assumes for its speed
/// (zfs-model's `Link::round_trip_ms`: 1 GbE 100-200 µs, 10 GbE 20-60 µs);
/// the veth pair and the relay add a few tens of µs themselves, which lands
/// inside that range (docs/lab.md).
fn default_added_rtt_ms(rate_bps: u64, members: u32) -> f64 {
    Link {
        members,
        gbit_per_s: rate_bps as f64 / 1e9,
    }
    .round_trip_ms()
    .low
}

/// `server.arc`: a size as `zfs` reads it (one-letter units binary), in
/// whole MiB within zfs-fuse's range for `-m`.
fn validate_arc(text: &str) -> Result<u64, LabError> {
    let (lo, hi) = crate::parts::zfsd::ARC_MIB_RANGE;
    let accepted = format!(
        "a whole number of MiB from {lo}M to {}G (zfs-fuse's --max-arc-size range), e.g. 2G; TB, GB are decimal, T, G, TiB, GiB binary",
        hi >> 10
    );
    match units::parse_size(text, SizeMeaning::Exact) {
        Ok(b) => match crate::parts::zfsd::arc_mib(b) {
            Some(m) if (lo..=hi).contains(&m) => Ok(b),
            _ => Err(bad("server.arc", text, &accepted)),
        },
        Err(e) => Err(bad_because("server.arc", text, &e, &accepted)),
    }
}

/// A size in binary units for labels and status lines: 2G, 512M (whole
/// units only; otherwise MiB with decimals).
pub(crate) fn binary_size(bytes: u64) -> String {
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{:.1}M", bytes as f64 / f64::from(1u32 << 20))
}

fn validate_name(name: &str) -> Result<(), LabError> {
    let name_ok = !name.is_empty()
        && name.len() <= 8
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !name_ok {
        // Interface names are limited to 15 characters: tb-NAME-c0.
        return Err(bad("name", name, "1 to 8 characters from a-z and 0-9"));
    }
    Ok(())
}

fn validate_compression(c: &str) -> Result<String, LabError> {
    let ok = matches!(c, "on" | "off" | "lzjb" | "gzip" | "zle" | "lz4" | "zstd")
        || c.strip_prefix("gzip-")
            .is_some_and(|n| matches!(n, "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"));
    if !ok {
        return Err(bad(
            "pool.compression",
            c,
            "on, off, lzjb, gzip, gzip-1..9, zle, lz4, zstd",
        ));
    }
    Ok(c.to_string())
}

fn validate_access(access: Option<&str>, has_link: bool) -> Result<Access, LabError> {
    match (access, has_link) {
        (None, true) | (Some("sshfs"), true) => Ok(Access::Sshfs),
        (Some("nfs"), true) => Ok(Access::Nfs),
        (Some("nfs-stable"), true) => Ok(Access::NfsStable),
        (None, false) | (Some("local"), false) => Ok(Access::Local),
        (Some("local"), true) => Err(LabError::Spec(
            "access: 'local' runs on the server side and uses no link; remove [link] or use access = \"sshfs\"".into(),
        )),
        (Some(remote @ ("sshfs" | "nfs" | "nfs-stable")), false) => Err(LabError::Spec(format!(
            "access: '{remote}' needs a [link] (kind = \"1G\", \"10G\", \"lacp\" or \"custom\")"
        ))),
        (Some(other), _) => Err(bad("access", other, "local, sshfs, nfs, nfs-stable")),
    }
}

fn validate_link(l: &RawLink) -> Result<LinkSpec, LabError> {
    let rates = "8K to 100G per link, such as 1G, 2.5G, 100M, 1gbit";
    let in_range = |bps: u64| (MIN_RATE_BPS..=MAX_RATE_BPS).contains(&bps);
    let rate = |default: Option<u64>| -> Result<u64, LabError> {
        match (&l.rate, default) {
            (Some(r), _) => parse_rate(r)
                .ok()
                .filter(|bps| in_range(*bps))
                .ok_or_else(|| bad("link.rate", r, &format!("a rate from {rates}"))),
            (None, Some(d)) => Ok(d),
            (None, None) => Err(LabError::Spec(format!(
                "link.rate: required for link.kind = '{}' (e.g. rate = \"1gbit\")",
                l.kind
            ))),
        }
    };
    if let Some(r) = l.rtt_ms {
        if !(r.is_finite() && (0.0..=1000.0).contains(&r)) {
            return Err(bad(
                "link.rtt_ms",
                r,
                "0 to 1000 (ms added to the round trip)",
            ));
        }
    }
    let kind = l.kind.trim().to_ascii_lowercase();
    if l.members.is_some() && kind != "lacp" {
        return Err(LabError::Spec(
            "link.members: only for link.kind = \"lacp\" (or write the count in the kind, e.g. \"2x1G\")".into(),
        ));
    }
    let (rate_bps, members, added_rtt_ms) = match kind.as_str() {
        "lacp" => {
            let m = l.members.unwrap_or(2);
            if !(2..=MAX_LINK_MEMBERS).contains(&m) {
                return Err(bad("link.members", m, "2 to 8"));
            }
            let r = rate(Some(1_000_000_000))?;
            (r, m, default_added_rtt_ms(r, m))
        }
        // Only the rate given: no added round trip unless rtt_ms asks.
        "custom" => (rate(None)?, 1, 0.0),
        _ => {
            let accepted = format!(
                "a link as `plan --link` takes it, [COUNTx]RATE with {rates} (2x1G: a LACP pair), or lacp, custom"
            );
            let link = match Link::parse_any_rate(&l.kind) {
                Ok(Some(link)) => link,
                Ok(None) => {
                    return Err(LabError::Spec(format!(
                        "link.kind: '{}': for local access leave out [link]",
                        l.kind
                    )))
                }
                Err(_) => return Err(bad("link.kind", &l.kind, &accepted)),
            };
            if l.rate.is_some() {
                return Err(LabError::Spec(format!(
                    "link.rate: '{}' fixes the rate; use kind = \"custom\" for another rate",
                    l.kind
                )));
            }
            let r = link.bits_per_s();
            if !in_range(r) || link.members > MAX_LINK_MEMBERS {
                return Err(bad(
                    "link.kind",
                    &l.kind,
                    &format!("{accepted}; COUNT 1 to {MAX_LINK_MEMBERS}"),
                ));
            }
            (r, link.members, default_added_rtt_ms(r, link.members))
        }
    };
    let label = if members > 1 {
        format!("{members}x{}", format_rate(rate_bps))
    } else {
        format_rate(rate_bps)
    };
    Ok(LinkSpec {
        label,
        rate_bps,
        members,
        added_rtt_ms: l.rtt_ms.unwrap_or(added_rtt_ms),
    })
}

pub fn default_root() -> PathBuf {
    std::env::var_os("TANKBENCH_LAB_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_ROOT))
}

/// Read and validate a spec file.
pub fn load(path: &Path) -> Result<LabSpec, LabError> {
    let text = zfs_model::config_file::read_config(path)
        .map_err(|e| LabError::Spec(format!("read lab spec {}: {e}", path.display())))?;
    RawSpec::from_toml(&text, &path.display().to_string())?.validate()
}

impl LabSpec {
    pub fn from_toml(text: &str) -> Result<LabSpec, LabError> {
        RawSpec::from_toml(text, "spec")?.validate()
    }

    /// Every disk and log device of the lab is a sparse file under `root`:
    /// check that the file system there allows files that big (ext4 with
    /// 4 KiB blocks stops just short of 16 TiB; XFS, btrfs and tmpfs go far
    /// beyond) before anything is built. Asked of the file system itself with
    /// an unnamed temporary file; where it cannot make one, the build reports
    /// a file too large by itself.
    pub fn check_host(&self) -> Result<(), LabError> {
        let Some(dir) = existing_ancestor(&self.root) else {
            return Ok(());
        };
        let Some(probe) = SparseProbe::open(dir) else {
            return Ok(());
        };
        let mut sizes = vec![("pool.disk_size", self.pool.disk_size)];
        if let Some(log) = &self.pool.log {
            sizes.push(("pool.log size", log.size));
        }
        for (field, bytes) in sizes {
            if probe.fits(bytes) {
                continue;
            }
            let largest_gib = probe.largest_below(bytes) >> 30;
            return Err(LabError::Spec(format!(
                "{field}: {bytes} bytes ({:.1} TiB) is more than one file can hold on the file system of {}; accepted there: 64M to {largest_gib}G",
                bytes as f64 / (1u64 << 40) as f64,
                dir.display()
            )));
        }
        Ok(())
    }

    /// The prefixed name of the lab: `tb-<name>`.
    pub fn id(&self) -> String {
        format!("tb-{}", self.name)
    }

    /// Labels describing this configuration, put into each RunResult.
    pub fn labels(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        m.insert("lab".into(), self.id());
        m.insert("layout".into(), self.pool.layout_text.clone());
        m.insert("disk".into(), self.pool.disk_model_name.clone());
        m.insert(
            "slog".into(),
            match &self.pool.log {
                Some(l) => l.model_name.clone(),
                None => "none".into(),
            },
        );
        m.insert(
            "link".into(),
            self.link
                .as_ref()
                .map(|l| l.label.clone())
                .unwrap_or_else(|| "local".into()),
        );
        m.insert(
            "arc".into(),
            self.server
                .arc
                .map(binary_size)
                .unwrap_or_else(|| "default".into()),
        );
        m.insert(
            "access".into(),
            match self.access {
                Access::Local => "local".into(),
                Access::Sshfs => "sshfs".into(),
                Access::Nfs => "nfs".into(),
                Access::NfsStable => "nfs-stable".into(),
            },
        );
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool_with(extra: &str) -> LabSpec {
        LabSpec::from_toml(&format!(
            "name = \"x\"\n[pool]\nlayout = \"mirror-2\"\n{extra}\n"
        ))
        .unwrap()
    }

    /// A disk size means what it means in `plan --disks` (a marketed "8TB" is
    /// the IDEMA capacity); a log size what it means in `plan --log` (exact
    /// bytes); one-letter units are binary, as zfs(8) reads them.
    #[test]
    fn sizes_mean_what_they_mean_in_plan() {
        let idema_8tb = 8_001_563_222_016;
        assert_eq!(pool_with("disk_size = \"8TB\"").pool.disk_size, idema_8tb);
        assert_eq!(pool_with("").pool.disk_size, idema_8tb);
        let plan_8tb = zfs_model::disk::DiskGroup::parse(
            "24x8TB",
            zfs_model::disk::DiskClass::Hdd7200,
            &Default::default(),
        )
        .unwrap()
        .bytes;
        assert_eq!(plan_8tb, idema_8tb);
        assert_eq!(pool_with("disk_size = \"8T\"").pool.disk_size, 8 << 40);
        assert_eq!(pool_with("disk_size = \"100G\"").pool.disk_size, 100 << 30);
        assert_eq!(
            pool_with("disk_size = \"8001563222016\"").pool.disk_size,
            idema_8tb
        );
        // Below 50 GB the IDEMA rule does not apply: decimal bytes.
        assert_eq!(
            pool_with("disk_size = \"10GB\"").pool.disk_size,
            10_000_000_000
        );
        let log = |text: &str| {
            pool_with(&format!("log = \"ssd-plp:{text}\""))
                .pool
                .log
                .unwrap()
                .size
        };
        assert_eq!(log("10GB"), 10_000_000_000);
        assert_eq!(log("100GB"), 100_000_000_000);
        assert_eq!(log("1.5G"), 1_610_612_736);
        assert_eq!(pool_with("recordsize = \"4K\"").pool.recordsize, Some(4096));
        let e = LabSpec::from_toml(
            "name = \"x\"\n[pool]\nlayout = \"mirror-2\"\ndisk_size = \"12 parsecs\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("pool.disk_size: invalid value '12 parsecs' (unknown unit 'parsecs')"),
            "{e}"
        );
    }

    #[test]
    fn links_are_read_as_plan_reads_them() {
        let link = |table: &str| pool_with(&format!("[link]\n{table}")).link.unwrap();
        let one = link("kind = \"1G\"");
        assert_eq!(
            (one.label.as_str(), one.rate_bps, one.members),
            ("1G", 1_000_000_000, 1)
        );
        assert!((one.added_rtt_ms - 0.1).abs() < 1e-12, "{one:?}");
        let ten = link("kind = \"10GbE\"");
        assert_eq!((ten.label.as_str(), ten.added_rtt_ms), ("10G", 0.02));
        let pair = link("kind = \"2x1G\"");
        assert_eq!(pair, link("kind = \"lacp\"\nmembers = 2\nrate = \"1gbit\""));
        assert_eq!(pair.label, "2x1G");
        assert_eq!(link("kind = \"2.5G\"").rate_bps, 2_500_000_000);
        let custom = link("kind = \"custom\"\nrate = \"100mbit\"");
        assert_eq!((custom.label.as_str(), custom.added_rtt_ms), ("100M", 0.0));
        // Every link plan takes, within the lab's rates, is a lab link.
        for text in ["1G", "10G", "2x10G", "25G", "100G", "4x2.5G"] {
            let plan = Link::parse(text).unwrap().unwrap();
            let lab = link(&format!("kind = \"{text}\""));
            assert_eq!(
                (lab.rate_bps, lab.members),
                (plan.bits_per_s(), plan.members)
            );
            assert_eq!(Link::parse(&lab.label).unwrap(), Some(plan), "{text}");
        }
    }

    #[test]
    fn layouts() {
        let l = parse_layout("2x raidz2-12").unwrap();
        assert_eq!(l, vec![Shape::parse("2xraidz2-12").unwrap()]);
        let l = parse_layout("3 x raidz2-8").unwrap();
        assert_eq!(l[0].count, 3);
        let l = parse_layout("raidz2-6 + mirror-2").unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(layout::groups_name(&l), "1xraidz2-6 + 1xmirror-2");
        // zpool create's own limits, not the planner's.
        assert_eq!(parse_layout("raidz1-2").unwrap()[0].width, 2);
        assert!(parse_layout("raidz3-3").unwrap_err().contains("4 to 255"));
        assert!(parse_layout("raid5-4").is_err());
        // The planner's forms: a stripe of single disks, a 2-way mirror.
        let s = pool_with("").pool.clone();
        assert_eq!(s.layout, parse_layout("1xmirror-2").unwrap());
        let stripe = parse_layout("24xstripe").unwrap();
        assert_eq!(stripe[0].disks(), 24);
        assert!(parse_layout("stripe-4")
            .unwrap_err()
            .contains("write 4xstripe"));
        assert_eq!(parse_layout("12xmirror").unwrap()[0].width, 2);
    }

    #[test]
    fn full_spec() {
        let s = LabSpec::from_toml(
            r#"
name = "ci"
[pool]
layout = "raidz2-6"
disk = "hdd"
disk_size = "8TB"
log = "ssd-plp:1G"
[link]
kind = "1G"
[models.slow]
kind = "hdd"
rpm = 5400
"#,
        )
        .unwrap();
        assert_eq!(s.pool.disk_count(), 6);
        assert_eq!(s.access, Access::Sshfs);
        assert_eq!(s.link.as_ref().unwrap().label, "1G");
        assert_eq!(s.pool.log.as_ref().unwrap().size, 1 << 30);
        let disks: Vec<PathBuf> = (0..6).map(|i| PathBuf::from(format!("/d{i}"))).collect();
        assert_eq!(s.pool.vdev_args(&disks)[0], "raidz2");
        assert_eq!(s.pool.vdev_args(&disks).len(), 7);
        // Labels name layouts and classes as `plan` does.
        assert_eq!(s.labels()["slog"], "ssd-sata");
        assert_eq!(s.labels()["disk"], "hdd-7200");
        assert_eq!(s.labels()["layout"], "1xraidz2-6");
        let stripe = pool_with("").pool.clone();
        let mut striped = stripe.clone();
        striped.layout = parse_layout("3xstripe + mirror-2").unwrap();
        let disks: Vec<PathBuf> = (0..5).map(|i| PathBuf::from(format!("/d{i}"))).collect();
        assert_eq!(
            striped.vdev_args(&disks),
            ["/d0", "/d1", "/d2", "mirror", "/d3", "/d4"]
        );
    }

    #[test]
    fn user_model_overrides() {
        let s = LabSpec::from_toml(
            "name = \"x\"\n[pool]\nlayout = \"mirror-2\"\ndisk = \"slow\"\n[models.slow]\nkind = \"hdd\"\nrpm = 5400\n",
        )
        .unwrap();
        match s.pool.disk_model {
            ModelParams::Hdd(h) => {
                assert!((h.rpm - 5400.0).abs() < 1e-9, "{h:?}");
                assert!((h.avg_seek_ms - 8.5).abs() < 1e-9, "{h:?}");
            }
            _ => panic!("expected hdd"),
        }
    }

    /// Every number in a spec has a range; out of it, one line naming the
    /// field and the accepted range.
    #[test]
    fn numbers_out_of_range_name_the_field_and_the_range() {
        let pool = |extra: &str| format!("name = \"x\"\n[pool]\nlayout = \"mirror-2\"\n{extra}\n");
        let cases: Vec<(String, &str, &str)> = vec![
            (
                "name = \"x\"\n[pool]\nlayout = \"100000x raidz2-6\"\n".into(),
                "pool.layout",
                "at most 1024 disks",
            ),
            (
                "name = \"x\"\n[pool]\nlayout = \"99999999999x mirror-2\"\n".into(),
                "pool.layout",
                "at most 1024 disks",
            ),
            (
                "name = \"x\"\n[pool]\nlayout = \"2x raidz3-255 + 3x raidz3-255\"\n".into(),
                "pool.layout",
                "at most 1024 disks",
            ),
            (
                "name = \"x\"\n[pool]\nlayout = \"raidz2-256\"\n".into(),
                "pool.layout",
                "3 to 255",
            ),
            (
                "name = \"x\"\n[pool]\nlayout = \"mirror-256\"\n".into(),
                "pool.layout",
                "2 to 255",
            ),
            (
                "name = \"x\"\n[pool]\nlayout = \"mirror-99999999999\"\n".into(),
                "pool.layout",
                "2 to 255",
            ),
            (pool("disk_size = \"2P\""), "pool.disk_size", "64M"),
            (pool("disk_size = \"2000TB\""), "pool.disk_size", "1P"),
            (pool("disk_size = \"1e400\""), "pool.disk_size", "1P"),
            (pool("disk_size = \"63M\""), "pool.disk_size", "64M"),
            (pool("log = \"ssd-plp:2P\""), "pool.log size", "1P"),
            (pool("ashift = 17"), "pool.ashift", "9 to 16"),
            (pool("recordsize = \"2M\""), "pool.recordsize", "512 to 1M"),
            (
                pool("backend = \"zfs-fuse\"\nrecordsize = \"1M\""),
                "pool.recordsize",
                "512 to 128K",
            ),
            (
                pool("[link]\nkind = \"custom\"\nrate = \"101gbit\""),
                "link.rate",
                "8K to 100G",
            ),
            (
                pool("[link]\nkind = \"lacp\"\nmembers = 100000"),
                "link.members",
                "2 to 8",
            ),
            (pool("[link]\nkind = \"400G\""), "link.kind", "8K to 100G"),
            (pool("[link]\nkind = \"9x1G\""), "link.kind", "COUNT 1 to 8"),
            (
                pool("[link]\nkind = \"1G\"\nrtt_ms = 1e9"),
                "link.rtt_ms",
                "0 to 1000",
            ),
        ];
        for (text, field, range) in cases {
            let e = LabSpec::from_toml(&text).unwrap_err().to_string();
            assert!(
                e.starts_with(field) && e.contains(range) && !e.contains('\n'),
                "{text}: {e}"
            );
        }
    }

    /// The same for the numbers of a user disk model: one line naming
    /// models.NAME.FIELD and the accepted range.
    #[test]
    fn model_numbers_out_of_range_name_the_field_and_the_range() {
        let model = |kind: &str, field: &str, value: &str| {
            format!(
                "name = \"x\"\n[pool]\nlayout = \"mirror-2\"\ndisk = \"m\"\n[models.m]\nkind = \"{kind}\"\n{field} = {value}\n"
            )
        };
        let mut cases = Vec::new();
        for (kind, field, value, range) in [
            ("hdd", "rpm", "1.0", "3600 to 20000"),
            ("hdd", "rpm", "1e12", "3600 to 20000"),
            ("hdd", "avg_seek_ms", "1e6", "0.1 to 100"),
            ("hdd", "media_mb_s", "0.001", "1 to 100000"),
            ("hdd", "interface_mb_s", "1e9", "1 to 100000"),
            ("hdd", "overhead_ms", "1e6", "0 to 100"),
            ("hdd", "cache_bytes", "9999999999999", "0 to 4294967296"),
            ("ssd", "read_ms", "5000.0", "0 to 1000"),
            ("ssd", "write_ms", "5000.0", "0 to 1000"),
            ("ssd", "flush_ms", "1e7", "0 to 10000"),
            ("ssd", "flush_ms_per_mb", "1e7", "0 to 1000"),
            ("ssd", "destage_ms", "1e6", "0 to 60000"),
            ("ssd", "cache_bytes", "9999999999999", "0 to 4294967296"),
            ("ssd", "read_mb_s", "0.5", "1 to 100000"),
            ("ssd", "write_mb_s", "1e9", "1 to 100000"),
            ("ssd", "parallelism", "4000000000", "1 to 1024"),
        ] {
            cases.push((model(kind, field, value), "models.m.", range));
            let field_name = format!("models.m.{field}");
            let e = LabSpec::from_toml(&model(kind, field, value))
                .unwrap_err()
                .to_string();
            assert!(e.contains(&field_name), "{field} = {value}: {e}");
        }
        for (text, field, range) in cases {
            let e = LabSpec::from_toml(&text).unwrap_err().to_string();
            assert!(
                e.starts_with(field) && e.contains(range) && !e.contains('\n'),
                "{text}: {e}"
            );
        }
    }

    /// The edges of the layout and size ranges themselves are accepted.
    #[test]
    fn layout_and_size_edges_are_accepted() {
        for ok in [
            "name = \"x\"\n[pool]\nlayout = \"4x raidz3-255 + 2x mirror-2\"\n",
            "name = \"x\"\n[pool]\nlayout = \"mirror-255\"\ndisk_size = \"1P\"\n",
        ] {
            let s = LabSpec::from_toml(ok).unwrap();
            assert!(u64::from(s.pool.disk_count()) <= MAX_DISKS);
        }
    }

    /// A disk bigger than one file may be on the lab root's file system is
    /// refused before a build, with the largest size that fits there.
    #[test]
    fn disk_sizes_are_checked_against_the_host_file_system() {
        let root = tempfile::tempdir().unwrap();
        let spec = |size: &str| {
            LabSpec::from_toml(&format!(
                "name = \"x\"\nroot = \"{}\"\n[pool]\nlayout = \"mirror-2\"\ndisk_size = \"{size}\"\n",
                root.path().join("labs").display()
            ))
            .unwrap()
        };
        spec("8T")
            .check_host()
            .expect("8 TiB sparse files fit everywhere the lab runs");
        let Some(probe) = SparseProbe::open(root.path()) else {
            eprintln!("SKIP: this file system makes no unnamed temporary files (O_TMPFILE)");
            return;
        };
        if probe.fits(MAX_DEVICE_BYTES) {
            eprintln!(
                "SKIP: this file system holds files of 1 PiB; no disk size is too big for it"
            );
            return;
        }
        // ext4 here: the limit is found, named, and the limit itself passes.
        let largest = probe.largest_below(MAX_DEVICE_BYTES);
        let e = spec("1P").check_host().unwrap_err().to_string();
        assert!(e.starts_with("pool.disk_size:"), "{e}");
        assert!(e.contains(&format!("64M to {}G", largest >> 30)), "{e}");
        spec(&format!("{}G", largest >> 30)).check_host().unwrap();
        // Nothing was left behind by the probe.
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
    }

    #[test]
    fn errors_name_the_option() {
        let e =
            LabSpec::from_toml("name = \"x\"\n[pool]\nlayout = \"raidz2-6\"\ndisk = \"floppy\"\n")
                .unwrap_err();
        assert!(
            e.to_string().contains("pool.disk") && e.to_string().contains("ssd-sata"),
            "{e}"
        );
        let e =
            LabSpec::from_toml("name = \"Bad_Name\"\n[pool]\nlayout = \"raidz2-6\"\n").unwrap_err();
        assert!(e.to_string().starts_with("name:"), "{e}");
        let e = LabSpec::from_toml(
            "name = \"x\"\n[pool]\nlayout = \"raidz2-6\"\n[link]\nkind = \"5Q\"\n",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("link.kind") && e.to_string().contains("lacp"),
            "{e}"
        );
        let e = LabSpec::from_toml(
            "name = \"x\"\n[pool]\nlayout = \"raidz2-6\"\nsync = \"sometimes\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("pool.sync"), "{e}");
    }

    /// `server.arc`: sizes as zfs reads them, whole MiB within zfs-fuse's
    /// `-m` range; refused with kernel OpenZFS, whose ARC is the machine's.
    #[test]
    fn server_arc_is_a_size_in_zfs_fuse_range() {
        let with = |arc: &str, extra: &str| {
            LabSpec::from_toml(&format!(
                "name = \"x\"\n[pool]\nlayout = \"mirror-2\"\n{extra}\n[server]\narc = \"{arc}\"\n"
            ))
        };
        assert_eq!(with("2G", "").unwrap().server.arc, Some(2 << 30));
        assert_eq!(with("2GiB", "").unwrap().server.arc, Some(2 << 30));
        assert_eq!(with("16M", "").unwrap().server.arc, Some(16 << 20));
        assert_eq!(with("16G", "").unwrap().server.arc, Some(16 << 30));
        assert_eq!(with("2G", "").unwrap().labels()["arc"], "2G");
        assert_eq!(pool_with("").server.arc, None);
        assert_eq!(pool_with("").labels()["arc"], "default");
        for bad in ["8M", "17G", "1.5M", "2GB", "lots"] {
            let e = with(bad, "").unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("server.arc: invalid value '{bad}'"))
                    && e.contains("16M to 16G")
                    && !e.contains('\n'),
                "{e}"
            );
        }
        let e = with("2G", "backend = \"openzfs\"").unwrap_err().to_string();
        assert!(e.contains("server.arc") && e.contains("zfs_arc_max"), "{e}");
        let e = LabSpec::from_toml(
            "name = \"x\"\n[pool]\nlayout = \"mirror-2\"\n[server]\nram = \"2G\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("ram"), "{e}");
    }
}
