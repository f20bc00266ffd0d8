//! durability: prove that acknowledged writes survive a crash.
//!
//! - [`record`]: what every written block holds, and how a block read back is
//!   classified (intact, lost, torn, corrupt, or a later unacknowledged write).
//! - [`journal`]: the lines that record acknowledged writes, in a journal file
//!   or sent to a recorder.
//! - [`fileset`]: the files under test and the marker that makes them ours.
//! - [`writer`]: `durability write`, driven by fileio's request generator.
//! - [`recorder`]: `durability record`, the TCP recorder on another machine.
//! - [`verify`]: `durability verify`, the check after the crash, as a `RunResult`.
//! - [`wire`]: the recorder protocol's authenticated lines, its key file
//!   and its bounds.
//! - [`options`]: the command lines.
//! - [`error`]: [`DurabilityError`], every refusal and failure, typed.
//!
//! The formats and the protocol are documented in docs/durability.md.

mod client;
pub mod error;
pub(crate) mod fileset;
pub mod journal;
mod journal_file;
pub mod options;
pub mod record;
pub mod recorder;
pub mod verify;
pub mod wire;
pub mod writer;

pub use error::DurabilityError;
