//! The system a prediction is made for, as a user writes it (TOML, every
//! field optional with a documented default) and as the simulator uses it
//! (parsed with zfs-model's one vocabulary: layouts, links, disk classes,
//! sizes).
//!
//! One way through, each file using only those before it: `behaviours`
//! (the settings a system chooses between), `presets` (the client and
//! platform presets, one table row each, that set defaults), `measured_log`
//! (a `tankbench slog` result as a log device), `values` (a size or layout
//! as a file spells it or a program hands it over), `model` (the system file,
//! [`SystemModel`]) and `resolve` (the resolved [`System`]).

mod behaviours;
mod measured_log;
mod model;
mod presets;
mod resolve;
mod values;

pub(crate) use behaviours::service_time;
pub use behaviours::{CpuService, LogWriteRule, Logbias, SyncProperty, ZilBatching};
pub use measured_log::{flash_from_slog, measured_log, MEASURED_LOG_FIELD, MEASURED_MAX_MB_S};
pub use model::{ClientModel, DeviceSpec, LinkModel, PoolModel, ServerModel, SystemModel};
pub use presets::{
    zfs_fuse_commit_costs, zfs_fuse_dirty_data_max, GuestFs, GuestSync, LogWriterCosts, Platform,
    Protocol, ZFS_FUSE_TXG_TIMEOUT_S,
};
pub use resolve::{LogWriterNs, System, TxgTuning};
pub use values::{Layout, LinkRate, Size};
