//! ZFS rule sets: the metaslab sizing and slop ("reserved space") rules changed
//! over the years, and the numbers `zpool list` / `zfs list` print depend on
//! which one the pool runs under (`vdev_metaslab_set_size()` in OpenZFS
//! `module/zfs/vdev.c`, `spa_get_slop_space()` in `module/zfs/spa_misc.c`,
//! `dsl_pool_adjustedsize()` in `module/zfs/dsl_pool.c` for pool-version ZFS).

use serde::Serialize;

use crate::error::{ModelError, Result};
use crate::units::{GIB, MIB};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RuleSet {
    /// Pool-version ZFS (≤ v28), illumos before Nov 2014, ZoL ≤ 0.6.3 and
    /// zfs-fuse (pool version 23).
    PoolV23,
    /// illumos 4951 (Nov 2014), ZoL 0.6.4–0.6.5.
    Zol064,
    /// ZoL 0.7.x.
    Zol07,
    /// OpenZFS 0.8.0–2.0.5: 16 GiB metaslabs, slop as 0.7.
    OpenZfs08,
    /// OpenZFS 2.0.6–2.0.7: slop capped at 128 GiB.
    OpenZfs206,
    /// OpenZFS ≥ 2.1.0: embedded-log metaslabs reduce the slop.
    OpenZfs21,
}

/// How metaslab sizes are chosen for a top-level vdev.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MetaslabRule {
    /// shift = highbit(asize / 200), no upper cap: ~200 metaslabs per vdev.
    About200PerVdev,
    /// Aim for 16 GiB (2^34 max) metaslabs, between 16 and 131,072 of them.
    Capped16GiB,
}

/// How the slop reserve is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SlopRule {
    /// max(dspace / 64, 32 MiB) (`dsl_pool_adjustedsize()`).
    OneIn64,
    /// max(dspace / 32, 32 MiB).
    OneIn32,
    /// max(dspace / 32, min(dspace / 2, 128 MiB)).
    OneIn32Min128MiB,
    /// max(min(dspace / 32, 128 GiB), min(dspace / 2, 128 MiB)).
    OneIn32Cap128GiB,
    /// The 2.1+ rule: capped at 128 GiB and reduced by the embedded-log space.
    EmbeddedLogAware,
}

impl RuleSet {
    pub const ALL: [RuleSet; 6] = [
        RuleSet::OpenZfs21,
        RuleSet::OpenZfs206,
        RuleSet::OpenZfs08,
        RuleSet::Zol07,
        RuleSet::Zol064,
        RuleSet::PoolV23,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RuleSet::PoolV23 => "pool-v23",
            RuleSet::Zol064 => "zol-0.6.4",
            RuleSet::Zol07 => "zol-0.7",
            RuleSet::OpenZfs08 => "openzfs-0.8",
            RuleSet::OpenZfs206 => "openzfs-2.0.6",
            RuleSet::OpenZfs21 => "openzfs-2.1",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            RuleSet::PoolV23 => "pool version 23 (zfs-fuse, illumos before 2014, ZoL <= 0.6.3)",
            RuleSet::Zol064 => "ZoL 0.6.4-0.6.5 / illumos 4951",
            RuleSet::Zol07 => "ZoL 0.7.x",
            RuleSet::OpenZfs08 => "OpenZFS 0.8.0-2.0.5",
            RuleSet::OpenZfs206 => "OpenZFS 2.0.6-2.0.7",
            RuleSet::OpenZfs21 => "OpenZFS 2.1 and later (current)",
        }
    }

    pub fn accepted() -> String {
        let mut names: Vec<&str> = RuleSet::ALL.iter().map(|r| r.name()).collect();
        names.extend(["current", "zfs-fuse"]);
        names.join(", ")
    }

    pub fn parse(input: &str) -> Result<RuleSet> {
        let wanted = input.trim().to_ascii_lowercase();
        match wanted.as_str() {
            "current" | "openzfs" => return Ok(RuleSet::OpenZfs21),
            "zfs-fuse" | "v23" => return Ok(RuleSet::PoolV23),
            _ => {}
        }
        RuleSet::ALL
            .into_iter()
            .find(|r| r.name() == wanted)
            .ok_or_else(|| ModelError::UnknownChoice {
                what: "ZFS rule set",
                input: input.to_string(),
                accepted: RuleSet::accepted(),
            })
    }

    pub fn metaslab_rule(self) -> MetaslabRule {
        match self {
            RuleSet::PoolV23 | RuleSet::Zol064 | RuleSet::Zol07 => MetaslabRule::About200PerVdev,
            _ => MetaslabRule::Capped16GiB,
        }
    }

    pub fn slop_rule(self) -> SlopRule {
        match self {
            RuleSet::PoolV23 => SlopRule::OneIn64,
            RuleSet::Zol064 => SlopRule::OneIn32,
            RuleSet::Zol07 | RuleSet::OpenZfs08 => SlopRule::OneIn32Min128MiB,
            RuleSet::OpenZfs206 => SlopRule::OneIn32Cap128GiB,
            RuleSet::OpenZfs21 => SlopRule::EmbeddedLogAware,
        }
    }

    /// Smallest metaslab shift: SPA_MAXBLOCKSHIFT, 17 (128 KiB) before large
    /// blocks, 24 (16 MiB) since. Only vdevs of a few GiB are affected.
    pub fn min_metaslab_shift(self) -> u32 {
        match self {
            RuleSet::PoolV23 => 17,
            _ => 24,
        }
    }

    /// Whether a top-level vdev with more than 64 metaslabs gives one of them
    /// to the embedded log class (OpenZFS 2.1+).
    pub fn has_embedded_log(self) -> bool {
        self == RuleSet::OpenZfs21
    }
}

/// Position of the highest set bit, counting from 1 (highbit(0) = 0).
pub fn highbit(value: u64) -> u32 {
    64 - value.leading_zeros()
}

/// log2 of the metaslab size for a top-level vdev of `asize` bytes.
pub fn metaslab_shift(rules: RuleSet, asize: u64) -> u32 {
    let floor = rules.min_metaslab_shift();
    match rules.metaslab_rule() {
        MetaslabRule::About200PerVdev => highbit(asize / 200).max(floor),
        MetaslabRule::Capped16GiB => {
            const DEFAULT_SHIFT: u32 = 29;
            const MIN_COUNT: u64 = 16;
            const DEFAULT_COUNT: u64 = 200;
            const MAX_SHIFT: u32 = 34;
            const COUNT_LIMIT: u64 = 1 << 17;
            let count_at_default = asize >> DEFAULT_SHIFT;
            let mut shift = if count_at_default < MIN_COUNT {
                highbit(asize / MIN_COUNT)
            } else if count_at_default > DEFAULT_COUNT {
                highbit(asize / DEFAULT_COUNT)
            } else {
                DEFAULT_SHIFT
            };
            if shift < floor {
                shift = floor;
            } else if shift > MAX_SHIFT {
                shift = MAX_SHIFT;
                if (asize >> shift) > COUNT_LIMIT {
                    shift = highbit(asize / COUNT_LIMIT);
                }
            }
            shift
        }
    }
}

/// The slop reserve for a pool whose normal class deflates to `dspace` bytes
/// (already excluding embedded-log metaslabs) with `embedded_log` bytes of
/// embedded-log space.
pub fn slop_bytes(rules: RuleSet, dspace: u64, embedded_log: u64) -> u64 {
    const MIN_SLOP_OLD: u64 = 32 * MIB;
    const MIN_SLOP: u64 = 128 * MIB;
    const MAX_SLOP: u64 = 128 * GIB;
    match rules.slop_rule() {
        SlopRule::OneIn64 => (dspace >> 6).max(MIN_SLOP_OLD),
        SlopRule::OneIn32 => (dspace >> 5).max(MIN_SLOP_OLD),
        SlopRule::OneIn32Min128MiB => (dspace >> 5).max((dspace >> 1).min(MIN_SLOP)),
        SlopRule::OneIn32Cap128GiB => (dspace >> 5).min(MAX_SLOP).max((dspace >> 1).min(MIN_SLOP)),
        SlopRule::EmbeddedLogAware => {
            let slop0 = (dspace >> 5).min(MAX_SLOP);
            let reduced = slop0 - embedded_log.min(slop0 / 2);
            reduced.max((dspace >> 1).min(MIN_SLOP))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highbit_counts_from_one() {
        assert_eq!(highbit(0), 0);
        assert_eq!(highbit(1), 1);
        assert_eq!(highbit(1 << 40), 41);
    }

    #[test]
    fn metaslab_shifts_match_the_spec() {
        // Current rules (commit c853f382db): 16 GiB metaslabs for big vdevs.
        assert_eq!(metaslab_shift(RuleSet::OpenZfs21, 192_037_169_135_616), 34);
        assert_eq!(metaslab_shift(RuleSet::OpenZfs21, 8_001_548_713_984), 34);
        // Pool v23, as `zdb -C` showed on zfs-fuse 0.7.0: 1 TiB on a 192 TiB
        // vdev, 512 GiB, 64 GiB.
        assert_eq!(metaslab_shift(RuleSet::PoolV23, 211_106_119_286_784), 40);
        assert_eq!(metaslab_shift(RuleSet::PoolV23, 105_553_059_643_392), 39);
        assert_eq!(metaslab_shift(RuleSet::PoolV23, 70_368_706_428_928), 39);
        assert_eq!(metaslab_shift(RuleSet::PoolV23, 8_796_088_303_616), 36);
        // Small vdevs under the current rule: 16 metaslabs, 512 MiB band.
        assert_eq!(metaslab_shift(RuleSet::OpenZfs21, 3 * GIB), 28);
        assert_eq!(metaslab_shift(RuleSet::OpenZfs21, 50 * GIB), 29);
    }

    #[test]
    fn rule_sets_parse_by_name_and_alias() {
        assert_eq!(RuleSet::parse("zfs-fuse").unwrap(), RuleSet::PoolV23);
        assert_eq!(RuleSet::parse("current").unwrap(), RuleSet::OpenZfs21);
        let err = RuleSet::parse("solaris-11").unwrap_err().to_string();
        assert!(
            err.contains("pool-v23") && err.contains("openzfs-2.1"),
            "{err}"
        );
    }
}
