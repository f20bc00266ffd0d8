//! The text formats the facts come in, as pure functions: `zpool status`,
//! `zpool iostat -v` (scripted `-H -p` and zfs-fuse's human-readable form),
//! `zfs get -H -p`, OpenZFS-on-Linux `arcstats` and FreeBSD's `sysctl
//! kstat.zfs.misc.arcstats`.

use super::{
    ArcCounters, ArcSnapshot, IostatLatency, IostatRow, IostatSample, PoolLayout, Property, Vdev,
    VdevClass, VdevKind,
};
use std::collections::BTreeMap;

/// A text that is not in the format its parser reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("zpool status: {reason}")]
    ZpoolStatus { reason: String },
    #[error("{source_name}: no `{field}` counter")]
    ArcField {
        source_name: String,
        field: &'static str,
    },
}

/// `zpool status [-P] POOL`: the pool's state and vdev tree.
pub fn zpool_status(text: &str) -> Result<PoolLayout, FormatError> {
    let bad = |reason: &str| FormatError::ZpoolStatus {
        reason: reason.to_string(),
    };
    let mut pool = PoolLayout::default();
    let mut in_config = false;
    let mut section = VdevClass::Data;
    let mut seen_pool = false;
    for line in text.lines() {
        if !in_config {
            let t = line.trim();
            if t.starts_with("NAME") && t.contains("STATE") {
                in_config = true;
            }
            continue;
        }
        if line.trim().is_empty() {
            if seen_pool {
                break;
            }
            continue;
        }
        if line.trim_start().starts_with("errors:") {
            break;
        }
        // The config lines start with a tab, then two spaces per level.
        let body = line.strip_prefix('\t').unwrap_or(line);
        let indent = body.len() - body.trim_start_matches(' ').len();
        let level = indent / 2;
        let fields: Vec<&str> = body.split_whitespace().collect();
        let Some(&name) = fields.first() else {
            continue;
        };
        let state = fields.get(1).copied().unwrap_or("").to_string();
        if level == 0 {
            if !seen_pool {
                pool.name = name.to_string();
                pool.state = state;
                seen_pool = true;
                continue;
            }
            section = match name {
                "logs" => VdevClass::Log,
                "cache" => VdevClass::Cache,
                "spares" => VdevClass::Spare,
                "special" => VdevClass::Special,
                "dedup" => VdevClass::Dedup,
                _ => return Err(bad(&format!("unknown section '{name}'"))),
            };
            continue;
        }
        let vdev = Vdev {
            name: name.to_string(),
            kind: VdevKind::Device,
            parity: None,
            state,
            children: Vec::new(),
        };
        let tops = match section {
            VdevClass::Pool | VdevClass::Data => &mut pool.data,
            VdevClass::Log => &mut pool.logs,
            VdevClass::Cache => &mut pool.cache,
            VdevClass::Special => &mut pool.special,
            VdevClass::Dedup => &mut pool.dedup,
            VdevClass::Spare => &mut pool.spares,
        };
        if level == 1 {
            tops.push(vdev);
            continue;
        }
        // Level n hangs under the last vdev of level n - 1.
        let mut parent = tops
            .last_mut()
            .ok_or_else(|| bad(&format!("'{name}' has no parent vdev")))?;
        for _ in 2..level {
            parent = parent
                .children
                .last_mut()
                .ok_or_else(|| bad(&format!("'{name}' is indented too deep")))?;
        }
        parent.children.push(vdev);
    }
    if !seen_pool {
        return Err(bad("no config section"));
    }
    for class in [
        &mut pool.data,
        &mut pool.logs,
        &mut pool.cache,
        &mut pool.special,
        &mut pool.dedup,
        &mut pool.spares,
    ] {
        class.iter_mut().for_each(classify);
    }
    Ok(pool)
}

/// Set kind and parity from the name `zpool status` gives a vdev.
fn classify(v: &mut Vdev) {
    v.children.iter_mut().for_each(classify);
    // `raidz2-0`, `mirror-1`; zfs-fuse's iostat and old releases drop the id.
    let base = v.name.split('-').next().unwrap_or(&v.name);
    let parity_of = |digits: &str| -> u32 { digits.parse().unwrap_or(1) };
    (v.kind, v.parity) = if v.name.starts_with('/') || v.children.is_empty() {
        (VdevKind::Device, None)
    } else if base == "mirror" {
        (VdevKind::Mirror, None)
    } else if let Some(p) = base.strip_prefix("raidz") {
        (VdevKind::Raidz, Some(parity_of(p)))
    } else if let Some(rest) = v.name.strip_prefix("draid") {
        // draid2:4d:12c:1s-0
        let p = rest.split(':').next().unwrap_or("");
        (VdevKind::Draid, Some(parity_of(p)))
    } else if base == "replacing" {
        (VdevKind::Replacing, None)
    } else if base == "spare" {
        (VdevKind::Spare, None)
    } else {
        (VdevKind::Other, None)
    };
}

/// `zfs get -H -p -o property,value,source ...`: property -> (value, source).
pub fn zfs_get(text: &str) -> BTreeMap<String, Property> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split('\t');
            let (name, value, source) = (f.next()?, f.next()?, f.next().unwrap_or("-"));
            Some((
                name.to_string(),
                Property {
                    value: value.to_string(),
                    source: source.to_string(),
                },
            ))
        })
        .collect()
}

/// OpenZFS on Linux `/proc/spl/kstat/zfs/arcstats`: a kstat header line, a
/// `name type data` line, then one `name type value` line per counter.
pub fn linux_arcstats(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .skip(2)
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let (name, _kind, value) = (f.next()?, f.next()?, f.next()?);
            Some((name.to_string(), value.parse().ok()?))
        })
        .collect()
}

/// FreeBSD `sysctl kstat.zfs.misc.arcstats`: `kstat.zfs.misc.arcstats.NAME: VALUE`.
pub fn freebsd_arcstats(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            let name = key.trim().strip_prefix("kstat.zfs.misc.arcstats.")?;
            Some((name.to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// The figures a run records from the named counters of either source.
pub fn arc_snapshot(
    counters: &BTreeMap<String, u64>,
    source_name: &str,
) -> Result<ArcSnapshot, FormatError> {
    let need = |field: &'static str| {
        counters
            .get(field)
            .copied()
            .ok_or_else(|| FormatError::ArcField {
                source_name: source_name.to_string(),
                field,
            })
    };
    let have = |field: &str| counters.get(field).copied().unwrap_or(0);
    Ok(ArcSnapshot {
        size_bytes: need("size")?,
        target_bytes: have("c"),
        max_bytes: have("c_max"),
        counters: ArcCounters {
            hits: need("hits")?,
            misses: need("misses")?,
            demand_data_hits: have("demand_data_hits"),
            demand_data_misses: have("demand_data_misses"),
            l2_hits: have("l2_hits"),
            l2_misses: have("l2_misses"),
        },
    })
}

/// A number as zpool prints it: exact (`-p`: `1234`) or human (`28.5K`,
/// `1.11M`, binary units); None for `-`.
pub(crate) fn quantity(text: &str) -> Option<f64> {
    let t = text.trim();
    let (digits, scale) = match t.chars().last()? {
        'K' => (&t[..t.len() - 1], 1u64 << 10),
        'M' => (&t[..t.len() - 1], 1 << 20),
        'G' => (&t[..t.len() - 1], 1 << 30),
        'T' => (&t[..t.len() - 1], 1 << 40),
        'P' => (&t[..t.len() - 1], 1 << 50),
        'E' => (&t[..t.len() - 1], 1 << 60),
        _ => (t, 1),
    };
    let v: f64 = digits.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v * scale as f64)
}

/// A [`quantity`] of bytes as a whole number: quantities are finite and
/// not negative, and a human form (`1.11M`) is only that precise anyway.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn whole_bytes(v: f64) -> u64 {
    v.round() as u64
}

/// Reads `zpool iostat -v POOL INTERVAL` line by line into samples: a line
/// for the pool starts an interval, the vdev and device lines follow.
/// Headers and separators are skipped, so the scripted form (`-H -p`, tab
/// separated, optionally `-l`) and zfs-fuse's table read alike.
pub(crate) struct IostatReader {
    pool: String,
    /// Which class each vdev and device name belongs to (zfs-fuse prints no
    /// `logs` heading in iostat, so a log device is known by its name).
    layout: Option<PoolLayout>,
    current: Option<IostatSample>,
    section: Option<VdevClass>,
    /// Rows of the last complete sample: a sample cut off by the stop is
    /// kept only when it has as many.
    complete_rows: Option<usize>,
}

impl IostatReader {
    pub fn new(pool: &str, layout: Option<PoolLayout>) -> IostatReader {
        IostatReader {
            pool: pool.to_string(),
            layout,
            current: None,
            section: None,
            complete_rows: None,
        }
    }

    /// Read one line, seen `t_s` seconds after the sampler started; returns
    /// the previous interval once this line starts the next one.
    pub fn line(&mut self, line: &str, t_s: f64) -> Option<IostatSample> {
        let fields: Vec<&str> = if line.contains('\t') {
            line.split('\t').map(str::trim).collect()
        } else {
            line.split_whitespace().collect()
        };
        let name = *fields.first()?;
        let rest_blank = fields[1..].iter().all(|f| *f == "-" || f.is_empty());
        if rest_blank {
            self.section = match name {
                "logs" => Some(VdevClass::Log),
                "cache" => Some(VdevClass::Cache),
                "special" => Some(VdevClass::Special),
                "dedup" => Some(VdevClass::Dedup),
                "spares" => Some(VdevClass::Spare),
                _ => self.section,
            };
            return None;
        }
        if fields.len() < 7 || fields[3..7].iter().any(|f| quantity(f).is_none()) {
            return None; // a heading or a separator
        }
        let mut done = None;
        let class = if name == self.pool {
            done = self.current.take();
            if let Some(s) = &done {
                self.complete_rows = Some(s.rows.len());
            }
            self.current = Some(IostatSample {
                t_s,
                rows: Vec::new(),
            });
            self.section = None;
            VdevClass::Pool
        } else if let Some(section) = self.section {
            section
        } else {
            self.layout
                .as_ref()
                .and_then(|l| l.class_of(name))
                .unwrap_or(VdevClass::Data)
        };
        let sample = self.current.as_mut()?;
        let exact = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
        let latency = (fields.len() >= 15).then(|| IostatLatency {
            total_wait_read_ns: exact(7),
            total_wait_write_ns: exact(8),
            disk_wait_read_ns: exact(9),
            disk_wait_write_ns: exact(10),
            syncq_wait_read_ns: exact(11),
            syncq_wait_write_ns: exact(12),
            asyncq_wait_read_ns: exact(13),
            asyncq_wait_write_ns: exact(14),
        });
        let rate = |i: usize| quantity(fields[i]).unwrap_or(0.0);
        sample.rows.push(IostatRow {
            name: name.to_string(),
            class,
            alloc_bytes: quantity(fields[1]).map(whole_bytes),
            free_bytes: quantity(fields[2]).map(whole_bytes),
            read_ops_per_s: rate(3),
            write_ops_per_s: rate(4),
            read_bytes_per_s: rate(5),
            write_bytes_per_s: rate(6),
            latency,
        });
        done
    }

    /// The interval in progress when the output ended, if it is whole (as
    /// many rows as the one before it).
    pub fn finish(self) -> Option<IostatSample> {
        let last = self.current?;
        (Some(last.rows.len()) == self.complete_rows).then_some(last)
    }
}

/// Every interval in a recorded `zpool iostat -v` output (`t_s` counts
/// intervals from 1), the last one only if whole.
pub fn iostat_samples(
    text: &str,
    pool: &str,
    layout: Option<PoolLayout>,
    interval_s: f64,
) -> Vec<IostatSample> {
    let mut reader = IostatReader::new(pool, layout);
    let mut out = Vec::new();
    let mut n = 0.0;
    for line in text.lines() {
        if line.split(['\t', ' ']).find(|f| !f.is_empty()) == Some(pool) {
            n += 1.0;
        }
        out.extend(reader.line(line, n * interval_s));
    }
    out.extend(reader.finish());
    out
}

/// The first pool version number in `zpool upgrade -v` ("This system is
/// currently running ZFS pool version 23.").
pub(crate) fn pool_version_supported(text: &str) -> Option<u32> {
    let line = text.lines().find(|l| l.contains("pool version"))?;
    let after = line.split("pool version").nth(1)?;
    after
        .trim()
        .trim_end_matches('.')
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_exact_and_human_forms() {
        assert_eq!(quantity("1234"), Some(1234.0));
        assert_eq!(quantity("28.5K"), Some(28.5 * 1024.0));
        assert_eq!(quantity("1.11M"), Some(1.11 * 1048576.0));
        assert_eq!(quantity("2T"), Some(2.0 * (1u64 << 40) as f64));
        assert_eq!(quantity("-"), None);
        assert_eq!(quantity("ONLINE"), None);
        assert_eq!(quantity(""), None);
    }

    #[test]
    fn zfs_get_reads_tab_separated_triples() {
        let p = zfs_get("sync\tstandard\tdefault\nrecordsize\t1048576\tlocal\n");
        assert_eq!(p["sync"].value, "standard");
        assert_eq!(p["recordsize"].source, "local");
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn a_status_without_config_is_an_error() {
        let e = zpool_status("cannot open 'x': no such pool\n").unwrap_err();
        assert_eq!(e.to_string(), "zpool status: no config section");
    }

    #[test]
    fn zfs_fuse_upgrade_text_gives_the_pool_version() {
        assert_eq!(
            pool_version_supported(
                "This system is currently running ZFS pool version 23.\n\nThe following..."
            ),
            Some(23)
        );
        assert_eq!(pool_version_supported("nothing"), None);
    }
}
