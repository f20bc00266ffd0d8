//! Test tooling for this crate's and other crates' tests, not used by
//! tankbench itself: [`fixture`] runs a real nfs-ganesha (through
//! [`crate::host`]) in a network namespace of its own; [`scripted`] is an
//! RPC peer on 127.0.0.1 that answers as a test's script says, to try the
//! client against broken or hostile servers without root.

pub mod fixture;
pub mod scripted;
