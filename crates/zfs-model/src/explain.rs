//! `--explain`: the capacity arithmetic for one layout, step by step, with the
//! numbers substituted, so every figure in the table can be traced by hand
//! and checked against `zpool list -p` / `zfs get -p`.

use serde::Serialize;

use crate::capacity::{capacity, Capacity, CapacityOptions, DEFLATE_BLOCK};
use crate::disk::{DiskGroup, VDEV_LABEL_BYTES, VDEV_LABEL_RESERVE};
use crate::layout::{Layout, Shape, VdevKind};
use crate::rules::{MetaslabRule, RuleSet, SlopRule};
use crate::units::{group_digits as g, human_binary, tib, zpool_nicenum};

/// One titled step of the walkthrough.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub title: String,
    pub lines: Vec<String>,
}

fn step(title: impl Into<String>, lines: Vec<String>) -> Step {
    Step {
        title: title.into(),
        lines,
    }
}

fn bytes(value: u64) -> String {
    format!("{} B ({})", g(value as u128), human_binary(value))
}

/// The walkthrough for `layout` with the capacity already computed.
pub fn explain_capacity(groups: &[DiskGroup], layout: &Layout, capacity: &Capacity) -> Vec<Step> {
    let shape = layout.shape;
    vec![
        disk_size(groups, capacity),
        partition_and_labels(capacity),
        vdev_asize(shape, capacity),
        metaslabs_and_size(capacity),
        deflate_ratio(shape, capacity),
        deflated_space(capacity),
        slop_and_avail(capacity),
        usable_by_block_size(capacity),
    ]
}

/// Step 1: the bytes each disk really has.
fn disk_size(groups: &[DiskGroup], capacity: &Capacity) -> Step {
    let mut lines = Vec::new();
    for (leaf, group) in capacity.leaves.iter().zip(groups) {
        match group.marketed_gb {
            Some(gb) => {
                let lbas = leaf.disk_bytes / 512;
                lines.push(format!(
                    "{} disk(s) marketed as {}: IDEMA rule 97,696,368 + 1,953,504 x ({} - 50) = {} LBAs x 512 = {}",
                    group.count,
                    group.label,
                    gb,
                    g(lbas as u128),
                    bytes(leaf.disk_bytes)
                ));
            }
            None => lines.push(format!(
                "{} disk(s) of {} given exactly: {}",
                group.count,
                group.label,
                bytes(leaf.disk_bytes)
            )),
        }
    }
    step("Disk size", lines)
}

/// Step 2: partition, label rounding and reservations.
fn partition_and_labels(capacity: &Capacity) -> Step {
    let mut lines = vec![format!(
        "partitioning: {}",
        capacity.partitioning.describe()
    )];
    for leaf in &capacity.leaves {
        lines.push(format!(
            "partition ZFS receives: {}",
            bytes(leaf.partition_bytes)
        ));
        lines.push(format!(
            "osize = partition rounded down to whole {} KiB labels = {}",
            VDEV_LABEL_BYTES / 1024,
            bytes(leaf.osize)
        ));
        lines.push(format!(
            "leaf asize = osize - {} (4 labels of 256 KiB + 3.5 MiB boot area) = {}",
            g(VDEV_LABEL_RESERVE as u128),
            bytes(leaf.asize)
        ));
    }
    step("Partition and labels (per disk)", lines)
}

/// Step 3: the allocatable size of each top-level vdev.
fn vdev_asize(shape: Shape, capacity: &Capacity) -> Step {
    let mut lines = Vec::new();
    for vdev in &capacity.vdevs {
        let leaf = capacity.leaves[vdev.group].asize;
        lines.push(match shape.kind {
            VdevKind::Raidz { .. } => format!(
                "{}: {} children x {} = {} (parity included: raidz SIZE counts raw space)",
                shape.vdev_name(),
                shape.width,
                g(leaf as u128),
                bytes(vdev.asize)
            ),
            VdevKind::Mirror => format!(
                "{}: the smallest child = {} (copies are not counted)",
                shape.vdev_name(),
                bytes(vdev.asize)
            ),
            VdevKind::Stripe => format!("single disk: {}", bytes(vdev.asize)),
        });
    }
    step("Top-level vdev size (asize)", lines)
}

/// Step 4: metaslabs and `zpool list` SIZE.
fn metaslabs_and_size(capacity: &Capacity) -> Step {
    let rules = capacity.rules;
    let mut lines = vec![match rules.metaslab_rule() {
        MetaslabRule::About200PerVdev => format!(
            "rule ({}): shift = highbit(asize / 200), at least {}",
            rules.name(),
            rules.min_metaslab_shift()
        ),
        MetaslabRule::Capped16GiB => format!(
            "rule ({}): 512 MiB metaslabs if that gives 16-200 of them, else highbit(asize/16) or highbit(asize/200), capped at 2^34 (16 GiB) unless that makes more than 131,072",
            rules.name()
        ),
    }];
    for vdev in &capacity.vdevs {
        let tail = vdev.asize - vdev.metaslab_bytes;
        lines.push(format!(
            "shift {} -> metaslab of {}; count = asize >> {} = {}; tail lost = {}",
            vdev.metaslab_shift,
            human_binary(1u64 << vdev.metaslab_shift),
            vdev.metaslab_shift,
            g(vdev.metaslab_count as u128),
            bytes(tail)
        ));
        lines.push(format!(
            "{} vdev(s) x {} x 2^{} = {}",
            vdev.vdevs,
            g(vdev.metaslab_count as u128),
            vdev.metaslab_shift,
            bytes(vdev.metaslab_bytes * vdev.vdevs as u64)
        ));
    }
    lines.push(format!(
        "zpool list SIZE = {} -> prints \"{}\" ({:.3} TiB); log, cache and spare devices add nothing",
        g(capacity.zpool_size as u128),
        capacity.zpool_size_printed,
        tib(capacity.zpool_size)
    ));
    step("Metaslabs and `zpool list` SIZE", lines)
}

/// Step 5: the deflate ratio.
fn deflate_ratio(shape: Shape, capacity: &Capacity) -> Step {
    let c = capacity.deflate_block;
    let mut lines = Vec::new();
    match shape.kind {
        VdevKind::Raidz { parity } => {
            lines.push(format!(
                "a 128 KiB block at ashift {}: {} data sectors; parity {} x ceil({} / ({} - {})) = {}; padding to a multiple of {} adds {}; total {} sectors = {} B",
                capacity.ashift,
                c.data_sectors,
                parity,
                c.data_sectors,
                shape.width,
                parity,
                c.parity_sectors,
                parity + 1,
                c.padding_sectors,
                c.sectors(),
                g(c.asize as u128)
            ));
        }
        _ => lines.push(format!(
            "a 128 KiB block takes {} B on a {}",
            g(c.asize as u128),
            shape.vdev_name()
        )),
    }
    lines.push(format!(
        "R = 131072 / ({} / 512) = {} (integer) -> datasets see {:.4} of raw space",
        g(c.asize as u128),
        capacity.deflate_ratio,
        capacity.deflate_ratio as f64 / 512.0
    ));
    lines.push(format!(
        "R is fixed at {} KiB whatever the recordsize (it cannot change once blocks exist)",
        DEFLATE_BLOCK / 1024
    ));
    step("Deflate ratio (raw -> usable)", lines)
}

/// Step 6: deflated space and the embedded log.
fn deflated_space(capacity: &Capacity) -> Step {
    let rules = capacity.rules;
    let mut lines = Vec::new();
    for vdev in &capacity.vdevs {
        lines.push(format!(
            "{} vdev(s) x {} metaslabs x (2^{} / 512) x {} = {}",
            vdev.vdevs,
            g(vdev.metaslab_count as u128),
            vdev.metaslab_shift,
            capacity.deflate_ratio,
            bytes(vdev.deflated * vdev.vdevs as u64)
        ));
    }
    lines.push(format!(
        "deflated space of all metaslabs = {}",
        bytes(capacity.dspace_total)
    ));
    if rules.has_embedded_log() {
        lines.push(format!(
            "embedded log (2.1+): every vdev with more than 64 metaslabs gives one to the ZIL: E = {}",
            bytes(capacity.embedded_log)
        ));
        lines.push(format!(
            "rd = {} - E = {}",
            g(capacity.dspace_total as u128),
            bytes(capacity.dspace)
        ));
    }
    step("Deflated space", lines)
}

/// Step 7: slop reserve and AVAIL.
fn slop_and_avail(capacity: &Capacity) -> Step {
    let rules = capacity.rules;
    let d = capacity.dspace;
    let slop_line = match rules.slop_rule() {
        SlopRule::OneIn64 => format!(
            "max(dspace / 64, 32 MiB) = max({}, 33,554,432)",
            g((d >> 6) as u128)
        ),
        SlopRule::OneIn32 => format!(
            "max(dspace / 32, 32 MiB) = max({}, 33,554,432)",
            g((d >> 5) as u128)
        ),
        SlopRule::OneIn32Min128MiB => format!(
            "max(dspace / 32, min(dspace / 2, 128 MiB)) = max({}, {})",
            g((d >> 5) as u128),
            g((d >> 1).min(128 << 20) as u128)
        ),
        SlopRule::OneIn32Cap128GiB => format!(
            "max(min(dspace / 32, 128 GiB), min(dspace / 2, 128 MiB)) with dspace / 32 = {}",
            g((d >> 5) as u128)
        ),
        SlopRule::EmbeddedLogAware => {
            let slop0 = (d >> 5).min(128 << 30);
            format!(
                "slop0 = min(rd / 32, 128 GiB) = {}; slop = slop0 - min(E, slop0 / 2) = {} - {}, at least min(rd / 2, 128 MiB)",
                g(slop0 as u128),
                g(slop0 as u128),
                g(capacity.embedded_log.min(slop0 / 2) as u128)
            )
        }
    };
    let lines = vec![
        format!("rule ({}): {}", rules.describe(), slop_line),
        format!("slop = {}", bytes(capacity.slop)),
        format!(
            "AVAIL = {} - {} = {} = {:.3} TiB = {:.3} TB",
            g(capacity.dspace as u128),
            g(capacity.slop as u128),
            bytes(capacity.avail),
            tib(capacity.avail),
            capacity.avail as f64 / 1e12
        ),
        format!(
            "zfs list prints \"{}\" minus a few hundred KiB of pool metadata (USED of an empty pool): `zfs get -p available,used` adds up to this",
            zpool_nicenum(capacity.avail)
        ),
    ];
    step("Slop reserve and `zfs list` AVAIL", lines)
}

/// Step 8: usable space for each block size.
fn usable_by_block_size(capacity: &Capacity) -> Step {
    let mut lines = vec!["L(B) = AVAIL x (512 / R) x B / asize(B); m(B) = asize(B) x R / (512 x B) is what one byte of B-sized blocks costs".into()];
    for usage in &capacity.blocks {
        let c = usage.cost;
        lines.push(format!(
            "{:>8}: {} data + {} parity + {} padding sectors = {}; efficiency {:.1}%, m = {:.3}, L = {} ({:.2} TiB)",
            human_binary(c.block_bytes),
            c.data_sectors,
            c.parity_sectors,
            c.padding_sectors,
            human_binary(c.asize),
            usage.efficiency * 100.0,
            usage.charge,
            g(usage.usable_bytes as u128),
            tib(usage.usable_bytes)
        ));
    }
    lines.push(format!(
        "naive expectation (data disks x disk size) = {} ({:.2} TiB)",
        g(capacity.naive as u128),
        tib(capacity.naive)
    ));
    lines.push("keep >10% free in practice (allocation slows down on a nearly full pool); that is not subtracted here".into());
    step("Usable space by block size", lines)
}

/// SIZE and AVAIL of one layout under every rule set, newest first: what the
/// same disks show on another ZFS version.
pub fn across_rule_sets(
    groups: &[DiskGroup],
    layout: &Layout,
    options: &CapacityOptions,
) -> Vec<(RuleSet, Capacity)> {
    RuleSet::ALL
        .iter()
        .map(|&rules| {
            let options = CapacityOptions { rules, ..*options };
            (rules, capacity(groups, layout, &options, &[]))
        })
        .collect()
}
