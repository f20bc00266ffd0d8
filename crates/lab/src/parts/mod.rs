//! The lab's parts: each builds, serves or removes one kind of object of a
//! lab on this machine.
//!
//! - [`diskfs`], [`undo`]: the latency-injecting FUSE disks and the undo log
//!   that lets a disk lose what its volatile cache held at a power cut;
//! - [`zfsd`]: a lab's own zfs-fuse daemon in its own mount namespace;
//! - [`net`]: network namespaces, the emulated link and its delaying relay;
//! - [`remote`]: sshd and sshfs; [`nfs`]: the nfs-ganesha export;
//! - [`writeprobe`]: the pool's write path timed (the simulator's server
//!   CPU per request and how many it serves at once);
//! - [`sys`]: running programs, the mount table, namespaces for child
//!   processes, signals, processes by pid.
//!
//! What may call what: a part may use [`crate::spec`] (the validated
//! vocabulary), [`sys`] and other parts; it never calls [`crate::lab`] (the
//! environment that assembles the parts) nor [`crate::experiments`]. A new
//! kind of object (another daemon, another access protocol) is a new part.

pub mod diskfs;
pub mod net;
pub(crate) mod nfs;
pub(crate) mod remote;
pub mod sys;
pub mod undo;
pub mod writeprobe;
pub mod zfsd;
