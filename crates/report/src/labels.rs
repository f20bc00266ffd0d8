//! Labels: the `KEY=VALUE` pairs that say which configuration a run measured
//! (`layout=2xraidz2`, `slog=yes`, `link=10G`). The same syntax selects runs in
//! `tankbench compare`.

use crate::error::{Error, Result};
use fileio::result::{Environment, RunResult};
use fileio::zfs_facts::{PoolLayout, VdevKind};
use std::collections::BTreeMap;
use zfs_model::layout::{Shape, VdevKind as ShapeKind};

pub type Labels = BTreeMap<String, String>;

/// Parse `--label=k=v,k2=v2` (pass the text after `--label=`).
///
/// Errors name `--label`; use [`parse_labels_for`] to name another option.
pub fn parse_labels(text: &str) -> Result<Labels> {
    parse_labels_for("--label", text)
}

/// Parse a `KEY=VALUE,...` list; `option` names where the text came from so the
/// error tells the user which argument to fix.
///
/// Keys are letters, digits, `_`, `-` and `.` (they become table columns and
/// parts of file names); values are anything but `,` and control characters, and
/// may contain `=` (`opts=a=b` is key `opts`, value `a=b`). A key given twice is an
/// error rather than last-wins, because a silent override mislabels a stored run.
pub fn parse_labels_for(option: &str, text: &str) -> Result<Labels> {
    let err = |message: String| Error::Labels {
        option: option.to_string(),
        message,
    };
    if text.trim().is_empty() {
        return Err(err("no labels given".into()));
    }
    let mut labels = Labels::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(err(format!("empty item in '{text}'")));
        }
        let Some((key, value)) = part.split_once('=') else {
            return Err(err(format!("'{part}' has no '='")));
        };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() {
            return Err(err(format!("'{part}' has an empty key")));
        }
        if let Some(bad) = key
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        {
            return Err(err(format!(
                "key '{key}' contains '{bad}'; keys use letters, digits, '_', '-' and '.'"
            )));
        }
        if value.is_empty() {
            return Err(err(format!("'{part}' has an empty value")));
        }
        if value.chars().any(char::is_control) {
            return Err(err(format!(
                "value of '{key}' contains a control character"
            )));
        }
        if labels.insert(key.to_string(), value.to_string()).is_some() {
            return Err(err(format!("key '{key}' given twice")));
        }
    }
    Ok(labels)
}

/// Merge the labels of several `--label` options; a key repeated across options
/// is an error for the same reason as within one.
pub fn merge_labels(into: &mut Labels, more: Labels) -> Result<()> {
    for (k, v) in more {
        if into.contains_key(&k) {
            return Err(Error::Labels {
                option: "--label".into(),
                message: format!("key '{k}' given twice"),
            });
        }
        into.insert(k, v);
    }
    Ok(())
}

/// Labels the run's recorded facts give it, so that `compare` and `report`
/// group runs by the ZFS they ran on without the user typing it: `layout`
/// (the planner's name, `2xraidz2-12`; several shapes joined by `+`), `log`,
/// `cache` (`yes`/`no`), `special=yes` when the pool has special vdevs, and
/// the dataset's `sync`, `logbias`, `recordsize` (`128K`) and `compression`.
/// None for a run that has no ZFS facts (not on ZFS, a remote NFS target).
pub fn automatic_labels(env: &Environment) -> Labels {
    let mut labels = Labels::new();
    let Some(zfs) = env.zfs.as_ref().filter(|z| z.absent.is_none()) else {
        return labels;
    };
    if let Some(pool) = &zfs.pool {
        if let Some(layout) = layout_name(pool) {
            labels.insert("layout".into(), layout);
        }
        let yes_no = |present: bool| if present { "yes" } else { "no" }.to_string();
        labels.insert("log".into(), yes_no(!pool.logs.is_empty()));
        labels.insert("cache".into(), yes_no(!pool.cache.is_empty()));
        if !pool.special.is_empty() {
            labels.insert("special".into(), "yes".into());
        }
    }
    if let Some(dataset) = &zfs.dataset {
        for name in ["sync", "logbias", "compression"] {
            if let Some(v) = dataset.property(name) {
                labels.insert(name.into(), v.to_string());
            }
        }
        if let Some(bytes) = dataset.recordsize_bytes() {
            labels.insert("recordsize".into(), size_name(bytes));
        }
    }
    labels
}

/// The pool's data vdevs in the planner's layout names (`2xraidz2-12`,
/// `12xmirror-2`, `4xstripe`), shapes in pool order joined by `+`; None when
/// a vdev has no planner shape (draid, a vdev being replaced).
pub fn layout_name(pool: &PoolLayout) -> Option<String> {
    let groups = pool.data_groups();
    if groups.is_empty() {
        return None;
    }
    let names: Option<Vec<String>> = groups
        .iter()
        .map(|g| {
            let kind = match (g.kind, g.parity) {
                (VdevKind::Device, _) => ShapeKind::Stripe,
                (VdevKind::Mirror, _) => ShapeKind::Mirror,
                (VdevKind::Raidz, Some(parity)) => ShapeKind::Raidz { parity },
                _ => return None,
            };
            Some(
                Shape {
                    kind,
                    width: g.width,
                    count: g.count,
                }
                .name(),
            )
        })
        .collect();
    names.map(|n| n.join("+"))
}

/// A run's labels: the [`automatic_labels`] of its facts, overridden by the
/// labels it already carries and then by the user's (`--label`): a user who
/// names a key means it.
pub fn with_automatic(result: &RunResult, user: &Labels) -> Labels {
    let mut labels = automatic_labels(&result.environment);
    labels.extend(result.labels.clone());
    labels.extend(user.clone());
    labels
}

/// `k=v,k2=v2`, the inverse of [`parse_labels`]; empty for no labels.
pub fn format_labels(labels: &Labels) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether `labels` holds every pair of `selector`.
pub fn matches(labels: &Labels, selector: &Labels) -> bool {
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// 4096 -> "4K", 1048576 -> "1M", 1000 -> "1000" (sysbench's size suffixes).
pub fn size_name(bytes: u64) -> String {
    for (unit, suffix) in [
        (1u64 << 40, "T"),
        (1 << 30, "G"),
        (1 << 20, "M"),
        (1 << 10, "K"),
    ] {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pairs_and_values_with_equals() {
        let l = parse_labels("layout=2xraidz2, slog=yes,opts=a=b").unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(l["layout"], "2xraidz2");
        assert_eq!(l["slog"], "yes");
        assert_eq!(l["opts"], "a=b");
        assert_eq!(format_labels(&l), "layout=2xraidz2,opts=a=b,slog=yes");
    }

    #[test]
    fn errors_name_the_option() {
        for bad in [
            "", "layout", "=x", "layout=", "a=1,,b=2", "a b=1", "a=1,a=2",
        ] {
            let e = parse_labels(bad).unwrap_err().to_string();
            assert!(e.starts_with("--label: "), "{bad:?} -> {e}");
        }
        let e = parse_labels_for("compare A", "x").unwrap_err().to_string();
        assert!(e.starts_with("compare A: 'x' has no '='"), "{e}");
    }

    #[test]
    fn merge_rejects_repeated_keys() {
        let mut l = parse_labels("a=1").unwrap();
        merge_labels(&mut l, parse_labels("b=2").unwrap()).unwrap();
        assert!(merge_labels(&mut l, parse_labels("a=3").unwrap()).is_err());
        assert_eq!(l.len(), 2);
    }

    fn zfs_env(status: &str, properties: &[(&str, &str)]) -> Environment {
        use fileio::zfs_facts::{parse, Dataset, Platform, Property, ZfsFacts};
        Environment {
            zfs: Some(ZfsFacts {
                platform: Some(Platform::OpenzfsLinux),
                pool: Some(parse::zpool_status(status).unwrap()),
                dataset: Some(Dataset {
                    name: "tank/bench".into(),
                    properties: properties
                        .iter()
                        .map(|(k, v)| {
                            let p = Property {
                                value: v.to_string(),
                                source: "local".into(),
                            };
                            (k.to_string(), p)
                        })
                        .collect(),
                }),
                ..ZfsFacts::default()
            }),
            ..Environment::default()
        }
    }

    const OPENZFS_STATUS: &str =
        include_str!("../../fileio/tests/data/zfs/openzfs-zpool-status-P.txt");

    /// `zpool status` text of a pool named tank with `vdevs`, each a list
    /// of (indent level, name) lines.
    fn status_of(lines: &[(usize, &str)]) -> String {
        let mut s = String::from("  pool: tank\n state: ONLINE\nconfig:\n\n\tNAME STATE READ WRITE CKSUM\n\ttank ONLINE 0 0 0\n");
        for (level, name) in lines {
            s.push_str(&format!("\t{}{name} ONLINE 0 0 0\n", "  ".repeat(*level)));
        }
        s + "\nerrors: No known data errors\n"
    }

    #[test]
    fn facts_become_labels_in_the_planners_layout_names() {
        let env = zfs_env(
            OPENZFS_STATUS,
            &[
                ("sync", "standard"),
                ("logbias", "latency"),
                ("recordsize", "1048576"),
                ("compression", "lz4"),
                ("atime", "off"),
            ],
        );
        assert_eq!(
            format_labels(&automatic_labels(&env)),
            "cache=yes,compression=lz4,layout=2xraidz2-6,log=yes,logbias=latency,recordsize=1M,special=yes,sync=standard"
        );
        let mirrors = status_of(&[
            (1, "mirror-0"),
            (2, "/d/a"),
            (2, "/d/b"),
            (1, "mirror-1"),
            (2, "/d/c"),
            (2, "/d/d"),
        ]);
        let labels = automatic_labels(&zfs_env(&mirrors, &[]));
        assert_eq!(format_labels(&labels), "cache=no,layout=2xmirror-2,log=no");
        // The planner reads the name back as the same shape.
        let shape = Shape::parse(&labels["layout"]).unwrap();
        assert_eq!((shape.count, shape.width), (2, 2));
        let mixed = status_of(&[
            (1, "/d/a"),
            (1, "/d/b"),
            (1, "raidz1-2"),
            (2, "/d/c"),
            (2, "/d/d"),
            (2, "/d/e"),
        ]);
        assert_eq!(
            automatic_labels(&zfs_env(&mixed, &[]))["layout"],
            "2xstripe+1xraidz1-3"
        );
        let draid = status_of(&[(1, "draid2:4d:8c:0s-0"), (2, "/d/a"), (2, "/d/b")]);
        assert!(!automatic_labels(&zfs_env(&draid, &[])).contains_key("layout"));
    }

    #[test]
    fn no_facts_no_labels() {
        assert!(automatic_labels(&Environment::default()).is_empty());
        let nfs = Environment {
            zfs: Some(fileio::zfs_facts::ZfsFacts::absent("remote NFS target")),
            ..Environment::default()
        };
        assert!(automatic_labels(&nfs).is_empty());
    }

    #[test]
    fn user_labels_win_over_automatic_ones() {
        let mut run = RunResult::new(
            fileio::result::ResultKind::Measured,
            fileio::spec::RunSpec::builder()
                .mode(fileio::spec::Mode::RndRd)
                .build()
                .unwrap()
                .summary("psync"),
        );
        run.environment = zfs_env(OPENZFS_STATUS, &[("sync", "standard")]);
        run.labels = parse_labels("log=carried").unwrap();
        let user = parse_labels("layout=production,host=a").unwrap();
        assert_eq!(
            format_labels(&with_automatic(&run, &user)),
            "cache=yes,host=a,layout=production,log=carried,special=yes,sync=standard"
        );
    }

    #[test]
    fn selector_matching() {
        let l = parse_labels("layout=3xraidz2,slog=no,link=10G").unwrap();
        assert!(matches(&l, &parse_labels("layout=3xraidz2").unwrap()));
        assert!(matches(&l, &parse_labels("slog=no,link=10G").unwrap()));
        assert!(!matches(&l, &parse_labels("slog=yes").unwrap()));
        assert!(!matches(&l, &parse_labels("disk=ssd").unwrap()));
    }
}
