//! NFS for tankbench: three parts that depend one way only, and one helper.
//!
//! - `client` (private; its types re-exported here: [`Client`], [`Target`],
//!   [`Error`] …): the NFSv3 client over TCP that fileio's `nfs://` runs
//!   use, with no cache, one deadline per call and bounds on everything a
//!   server sends. It never calls the host part and needs no root.
//! - [`host`]: running an nfs-ganesha server on this machine (the lab's
//!   NFS access, the test fixture), and the mount-namespace hygiene the
//!   lab's zfs-fuse daemon shares with it.
//! - [`testing`]: tooling for tests only: a throw-away ganesha in its own
//!   network namespace, and scripted hostile RPC peers on 127.0.0.1.
//!
//! The helper, [`mount_table`], decodes the fields of the kernel's mount
//! tables for the host part and for fileio's and the lab's mount lookups.

mod client;
pub mod host;
pub mod mount_table;
pub mod testing;

pub use client::{
    process_counts, Attr, CallError, Client, Counts, Deadline, Error, Fh, Stable, Target,
    MAX_SHORT_RESENDS,
};
