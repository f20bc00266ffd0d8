//! Software storage lab: latency-injecting FUSE disks, zfs pools, network links, matrix runs
