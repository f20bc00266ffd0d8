//! A small NFSv3 client (RFC 1813) over TCP, written for benchmarking: one
//! call in flight per connection, every READ, WRITE and COMMIT one RPC the
//! caller asked for (no client cache, no read-ahead, no write-behind), so a
//! benchmark's requests reach the server one for one, and writes can be sent
//! stable (FILE_SYNC, as VMware ESXi's NFS client sends every write of a
//! virtual disk) or unstable followed by COMMIT on fsync (as the Linux client
//! does).
//!
//! Layers, each using only those below it: [`target`] (the `nfs://`
//! address) and [`protocol`] (handles, stable_how, attributes); [`error`];
//! [`xdr`] (encoding); [`rpc`] (ONC RPC record marking, deadlines, the
//! portmapper); [`nfs3`] (MOUNT and the NFSv3 procedures: [`Client`]).
//!
//! Why not libnfs: linking it would make the tankbench binary need
//! libnfs.so at run time even for local runs, and its synchronous API hides
//! the RPCs a benchmark needs to count and to delay; the procedures used here
//! are a few hundred lines of XDR.

mod error;
mod nfs3;
mod protocol;
mod rpc;
mod target;
mod xdr;

pub use error::{CallError, Error};
pub use nfs3::{process_counts, Client, Counts, Deadline, MAX_SHORT_RESENDS};
pub use protocol::{Attr, Fh, Stable};
pub use target::Target;
