//! Pool layouts: the shape of the top-level vdevs ("3 x raidz2-8") and how a
//! shape is laid onto the user's disks. The one layout parser of `plan` and
//! the lab: a layout `plan` prints is a layout a lab spec builds.

use serde::{Deserialize, Serialize};

use crate::disk::{DiskGroup, MAX_DISKS};
use crate::error::{ModelError, Result};

/// Widest mirror the planner accepts. A 4-way mirror already survives three
/// failures like raidz3, so wider ones buy nothing this model can show (their
/// loss probability is far below the ranking floor); the bound also keeps the
/// exact failure-combination counts of the risk model within 128 bits for
/// [`MAX_DISKS`] disks.
pub const MAX_MIRROR_WAYS: u32 = 8;

/// Widest raidz vdev: `zpool create` refuses raidz vdevs of more than 255
/// children ("raidz3 supports no more than 255 devices", zpool_vdev.c).
pub const MAX_RAIDZ_WIDTH: u32 = 255;

/// Redundancy scheme of one top-level vdev.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum VdevKind {
    /// A single disk, no redundancy.
    Stripe,
    /// k copies of every block (k = width).
    Mirror,
    /// Parity p = 1..3.
    Raidz { parity: u32 },
}

impl VdevKind {
    /// The word that starts this vdev in `zpool create` (none for a single
    /// disk, which is named by itself).
    pub fn zpool_word(self) -> Option<String> {
        match self {
            VdevKind::Stripe => None,
            VdevKind::Mirror => Some("mirror".into()),
            VdevKind::Raidz { parity } => Some(format!("raidz{parity}")),
        }
    }
}

/// The rules a shape is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeLimits {
    /// What `zpool create` builds (zpool_vdev.c): a mirror of at least 2
    /// disks, raidzP of P+1 to 255 disks, a stripe vdev of one disk, at least
    /// one vdev. No bound on the number of vdevs: the caller bounds the total
    /// number of disks it is willing to build.
    Zpool,
    /// What the planner evaluates: the zpool rules, and also a mirror of at
    /// most [`MAX_MIRROR_WAYS`] disks, raidzP of at least P+2 disks (one fewer
    /// is a (P+1)-way mirror's tolerance at a higher cost) and at most
    /// [`MAX_DISKS`] vdevs.
    Planner,
}

/// A uniform pool shape: `count` top-level vdevs of `kind`, each `width` disks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shape {
    pub kind: VdevKind,
    pub width: u32,
    pub count: u32,
}

impl Shape {
    /// A shape within the planner's limits.
    pub fn new(kind: VdevKind, width: u32, count: u32) -> Result<Shape> {
        Shape::within(kind, width, count, ShapeLimits::Planner)
    }

    /// A shape within `limits`; the error names the accepted range.
    pub fn within(kind: VdevKind, width: u32, count: u32, limits: ShapeLimits) -> Result<Shape> {
        let shape = Shape { kind, width, count };
        let bad = |reason: String| ModelError::InvalidLayout {
            input: shape.name(),
            reason,
        };
        let planner = limits == ShapeLimits::Planner;
        if count == 0 {
            return Err(bad("a pool needs at least one vdev".into()));
        }
        if planner && count > MAX_DISKS {
            return Err(bad(format!(
                "at most {MAX_DISKS} vdevs (the most disks a plan holds)"
            )));
        }
        match kind {
            VdevKind::Stripe if width != 1 => Err(bad(format!(
                "a stripe vdev is one disk; write {}xstripe for {} disks striped",
                count as u64 * width as u64,
                count as u64 * width as u64
            ))),
            VdevKind::Mirror if width < 2 => Err(bad("a mirror needs at least 2 disks".into())),
            VdevKind::Mirror if planner && width > MAX_MIRROR_WAYS => Err(bad(format!(
                "a mirror has 2 to {MAX_MIRROR_WAYS} disks (a 4-way mirror already survives 3 failures, like raidz3)"
            ))),
            VdevKind::Raidz { parity } if !(1..=3).contains(&parity) => {
                Err(bad("raidz parity is 1, 2 or 3".into()))
            }
            VdevKind::Raidz { parity } => {
                // zpool_vdev.c: raidzP needs at least P+1 devices.
                let least = if planner { parity + 2 } else { parity + 1 };
                let why = if planner && width == parity + 1 {
                    format!(
                        " (with {width} it is a {width}-way mirror's tolerance at a higher cost)"
                    )
                } else {
                    " (zpool create refuses other widths)".to_string()
                };
                if (least..=MAX_RAIDZ_WIDTH).contains(&width) {
                    Ok(shape)
                } else {
                    Err(bad(format!(
                        "raidz{parity} has {least} to {MAX_RAIDZ_WIDTH} disks per vdev{why}"
                    )))
                }
            }
            _ => Ok(shape),
        }
    }

    /// Name of one vdev: "raidz2-8", "mirror-2", "stripe".
    pub fn vdev_name(&self) -> String {
        match self.kind {
            VdevKind::Stripe => "stripe".into(),
            VdevKind::Mirror => format!("mirror-{}", self.width),
            VdevKind::Raidz { parity } => format!("raidz{parity}-{}", self.width),
        }
    }

    /// "3xraidz2-8": the form `--explain` and `--layout` accept.
    pub fn name(&self) -> String {
        format!("{}x{}", self.count, self.vdev_name())
    }

    pub fn disks(&self) -> u32 {
        // Saturating: Shape's fields are public, and a shape built by hand
        // past Shape::new's bounds must not panic when it is described.
        self.count.saturating_mul(self.width)
    }

    /// Disk failures one vdev survives.
    pub fn vdev_tolerance(&self) -> u32 {
        match self.kind {
            VdevKind::Stripe => 0,
            VdevKind::Mirror => self.width - 1,
            VdevKind::Raidz { parity } => parity,
        }
    }

    /// Disks of a vdev that carry data rather than redundancy.
    pub fn data_disks_per_vdev(&self) -> u32 {
        match self.kind {
            VdevKind::Stripe | VdevKind::Mirror => 1,
            VdevKind::Raidz { parity } => self.width - parity,
        }
    }

    /// Parse "3xraidz2-8", "raidz2-8" (one vdev), "12xmirror" (2-way),
    /// "8xmirror-3", "24xstripe" or "24xdisk", within the planner's limits.
    pub fn parse(input: &str) -> Result<Shape> {
        Shape::parse_within(input, ShapeLimits::Planner)
    }

    /// [`Shape::parse`] held to `limits`. Spaces and case do not matter
    /// ("3 x RAIDZ2-8"); a number with more digits than any count saturates,
    /// so it is refused as out of range rather than as not a number.
    pub fn parse_within(input: &str, limits: ShapeLimits) -> Result<Shape> {
        let text = input.trim().to_ascii_lowercase().replace(' ', "");
        let bad = |reason: &str| ModelError::InvalidLayout {
            input: input.to_string(),
            reason: reason.to_string(),
        };
        let (count, vdev) = match text.split_once('x') {
            Some((count, vdev))
                if !count.is_empty() && count.chars().all(|c| c.is_ascii_digit()) =>
            {
                (count.parse::<u32>().unwrap_or(u32::MAX), vdev)
            }
            _ => (1, text.as_str()),
        };
        let expected = "expected [COUNTx]VDEV with VDEV one of raidz1-WIDTH (or raidz-WIDTH), raidz2-WIDTH, raidz3-WIDTH, mirror[-WAYS], stripe; e.g. 3xraidz2-8";
        let (kind_text, width_text) = match vdev.split_once('-') {
            Some((k, w)) => (k, Some(w)),
            None => (vdev, None),
        };
        let width = match width_text {
            // Digits too many for a u32 are a width far beyond any vdev:
            // the limits reject it with the accepted range.
            Some(w) if !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()) => {
                Some(w.parse::<u32>().unwrap_or(u32::MAX))
            }
            Some(_) => return Err(bad(expected)),
            None => None,
        };
        let (kind, width) = match kind_text {
            "stripe" | "disk" => (VdevKind::Stripe, width.unwrap_or(1)),
            "mirror" => (VdevKind::Mirror, width.unwrap_or(2)),
            "raidz" | "raidz1" => (
                VdevKind::Raidz { parity: 1 },
                width.ok_or_else(|| bad(expected))?,
            ),
            "raidz2" => (
                VdevKind::Raidz { parity: 2 },
                width.ok_or_else(|| bad(expected))?,
            ),
            "raidz3" => (
                VdevKind::Raidz { parity: 3 },
                width.ok_or_else(|| bad(expected))?,
            ),
            _ => return Err(bad(expected)),
        };
        Shape::within(kind, width, count, limits).map_err(|e| match e {
            ModelError::InvalidLayout { reason, .. } => ModelError::InvalidLayout {
                input: input.to_string(),
                reason,
            },
            other => other,
        })
    }
}

/// Parse a pool of several uniform groups joined by `+`, each a [`Shape`]:
/// "2xraidz2-6 + 1xmirror-2" (a lab spec may mix vdev kinds; the planner
/// evaluates one shape at a time).
pub fn parse_groups(input: &str, limits: ShapeLimits) -> Result<Vec<Shape>> {
    input
        .split('+')
        .map(|part| Shape::parse_within(part, limits))
        .collect()
}

/// "2xraidz2-6 + 1xmirror-2": the groups' names, in the form [`parse_groups`]
/// reads back.
pub fn groups_name(groups: &[Shape]) -> String {
    groups
        .iter()
        .map(Shape::name)
        .collect::<Vec<_>>()
        .join(" + ")
}

/// One top-level vdev built from disks of one group.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct VdevPlacement {
    /// Index into the disk groups.
    pub group: usize,
    pub vdevs: u32,
}

/// A shape laid onto concrete disks: which group feeds which vdevs, and the
/// disks left over as hot spares.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Layout {
    pub shape: Shape,
    pub placements: Vec<VdevPlacement>,
    /// Hot spares per disk group (leftover disks and requested spares).
    pub spares: Vec<u32>,
}

impl Layout {
    /// Place `shape` on `groups`, filling each group with whole vdevs before
    /// the next (a vdev never mixes disk groups: its size would drop to the
    /// smallest member). At least `min_spares` disks must stay over as hot
    /// spares; all leftover disks count as spares.
    pub fn fit(shape: Shape, groups: &[DiskGroup], min_spares: u32) -> Result<Layout> {
        if groups.is_empty() {
            return Err(ModelError::NoDisks);
        }
        // Summed wide: the groups of a request are bounded in total
        // (MAX_DISKS), but fit is public and must not overflow on any input.
        let total: u64 = groups.iter().map(|g| g.count as u64).sum();
        let mut remaining = shape.count;
        let mut placements = Vec::new();
        let mut spares = Vec::with_capacity(groups.len());
        for (index, group) in groups.iter().enumerate() {
            let vdevs = (group.count / shape.width).min(remaining);
            if vdevs > 0 {
                placements.push(VdevPlacement {
                    group: index,
                    vdevs,
                });
            }
            remaining -= vdevs;
            spares.push(group.count - vdevs * shape.width);
        }
        if remaining > 0 {
            let reason = if groups.len() > 1 {
                format!(
                    "{} vdevs of {} disks need {} disks of one size each, there are {} disks in {} groups",
                    shape.count,
                    shape.width,
                    shape.disks(),
                    total,
                    groups.len()
                )
            } else {
                format!("it needs {} disks, there are {}", shape.disks(), total)
            };
            return Err(ModelError::LayoutDoesNotFit {
                layout: shape.name(),
                reason,
            });
        }
        let spare_total: u32 = spares.iter().sum();
        if spare_total < min_spares {
            return Err(ModelError::LayoutDoesNotFit {
                layout: shape.name(),
                reason: format!(
                    "it leaves {spare_total} disks for the {min_spares} requested hot spares"
                ),
            });
        }
        Ok(Layout {
            shape,
            placements,
            spares,
        })
    }

    pub fn spare_count(&self) -> u32 {
        self.spares.iter().sum()
    }

    pub fn name(&self) -> String {
        self.shape.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::{DiskClass, PerfOverrides};

    fn disks(spec: &str) -> Vec<DiskGroup> {
        spec.split(',')
            .map(|g| DiskGroup::parse(g, DiskClass::Hdd7200, &PerfOverrides::default()).unwrap())
            .collect()
    }

    #[test]
    fn shapes_parse_and_name_round_trip() {
        for text in [
            "3xraidz2-8",
            "1xraidz3-24",
            "12xmirror-2",
            "8xmirror-3",
            "24xstripe",
        ] {
            assert_eq!(Shape::parse(text).unwrap().name(), text);
        }
        assert_eq!(Shape::parse("12xmirror").unwrap().width, 2);
        assert_eq!(Shape::parse("raidz1-5").unwrap().count, 1);
        assert!(Shape::parse("2xraidz4-8").is_err());
        assert!(Shape::parse("1xraidz2-3").is_err());
        assert!(Shape::parse("2xraid5-8").is_err());
        for (bad, needle) in [
            ("99999999999xmirror-2", "at most 10000 vdevs"),
            ("10001xmirror-2", "at most 10000 vdevs"),
            ("mirror-9", "2 to 8"),
            ("raidz2-256", "4 to 255"),
            ("raidz2-99999999999", "4 to 255"),
            ("raidz2-3", "4 to 255"),
            ("2xstripe-4", "write 8xstripe"),
        ] {
            let err = Shape::parse(bad).unwrap_err().to_string();
            assert!(err.contains(bad) && err.contains(needle), "{bad}: {err}");
        }
    }

    /// What `zpool create` builds is wider than what the planner evaluates:
    /// every planner shape is also a zpool shape.
    #[test]
    fn zpool_limits_are_zpool_create_s() {
        let zpool = |t: &str| Shape::parse_within(t, ShapeLimits::Zpool);
        assert_eq!(zpool("raidz1-2").unwrap().width, 2);
        assert_eq!(zpool("raidz3-4").unwrap().width, 4);
        assert_eq!(zpool("mirror-12").unwrap().width, 12);
        assert_eq!(zpool("20000xmirror-2").unwrap().count, 20000);
        for (bad, needle) in [
            ("raidz2-2", "3 to 255"),
            ("raidz3-256", "4 to 255"),
            ("mirror-1", "at least 2"),
            ("0xmirror-2", "at least one vdev"),
            ("stripe-3", "write 3xstripe"),
        ] {
            let err = zpool(bad).unwrap_err().to_string();
            assert!(err.contains(bad) && err.contains(needle), "{bad}: {err}");
        }
        let groups = parse_groups("2x raidz2-6 + Mirror-2", ShapeLimits::Zpool).unwrap();
        assert_eq!(groups_name(&groups), "2xraidz2-6 + 1xmirror-2");
        assert_eq!(
            parse_groups(&groups_name(&groups), ShapeLimits::Zpool).unwrap(),
            groups
        );
        assert!(parse_groups("raidz2-6 +", ShapeLimits::Zpool).is_err());
        assert_eq!(
            VdevKind::Raidz { parity: 3 }.zpool_word().as_deref(),
            Some("raidz3")
        );
    }

    #[test]
    fn layouts_fit_groups_and_leave_spares() {
        let groups = disks("24x8TB");
        let l = Layout::fit(Shape::parse("3xraidz2-7").unwrap(), &groups, 0).unwrap();
        assert_eq!(l.spare_count(), 3);
        let err = Layout::fit(Shape::parse("4xraidz2-8").unwrap(), &groups, 0).unwrap_err();
        assert!(
            err.to_string().contains("needs 32 disks, there are 24"),
            "{err}"
        );
        assert!(Layout::fit(Shape::parse("3xraidz2-8").unwrap(), &groups, 1).is_err());

        let mixed = disks("12x8TB,12x4TB");
        let l = Layout::fit(Shape::parse("4xraidz2-6").unwrap(), &mixed, 0).unwrap();
        assert_eq!(l.placements.len(), 2);
        assert!(Layout::fit(Shape::parse("3xraidz2-8").unwrap(), &mixed, 0).is_err());
    }
}
