//! The engines a run can use, one per worker, built before any thread
//! starts so that a setup error is reported before anything runs.

use crate::engine::injected::InjectedEngine;
use crate::engine::mmap::MmapEngine;
use crate::engine::nfs::NfsEngine;
use crate::engine::psync::PsyncEngine;
use crate::engine::uring::UringEngine;
use crate::engine::{AlignedBuf, Engine};
use crate::failure::Failure;
use crate::run::fileset::OpenFiles;
use crate::spec::{IoMode, RunSpec};
use std::sync::Arc;

use super::interface::RunSettings;

/// The engines a run can use; each worker gets its own and runs a loop
/// monomorphised for it. (Boxing the large io_uring one keeps the enum small.)
pub(super) enum AnyEngine {
    Psync(PsyncEngine),
    Mmap(MmapEngine),
    Uring(Box<UringEngine>),
    Injected(InjectedEngine),
    Nfs(NfsEngine),
}

impl AnyEngine {
    pub(super) fn name(&self) -> &'static str {
        match self {
            AnyEngine::Psync(e) => e.name(),
            AnyEngine::Mmap(e) => e.name(),
            AnyEngine::Uring(e) => e.name(),
            AnyEngine::Injected(e) => e.name(),
            AnyEngine::Nfs(e) => e.name(),
        }
    }
}

pub(super) fn make_engine(
    w: &RunSpec,
    files: &Arc<OpenFiles>,
    tid: usize,
    settings: &RunSettings,
) -> Result<AnyEngine, Failure> {
    // sysbench's message when a thread's buffer cannot be allocated.
    let buf = AlignedBuf::try_new(w.buffer_size())
        .ok_or_else(|| Failure::fatal(format!("Failed to allocate buffer for thread #{tid}!")))?;
    if let Some(model) = w.inject_latency {
        return Ok(AnyEngine::Injected(InjectedEngine::new(
            model,
            tid as u64 + 1,
            buf,
            settings.injected_trace.clone(),
        )));
    }
    if files.nfs.is_some() {
        // Options refuse every other --file-io-mode with an nfs:// file set.
        return Ok(AnyEngine::Nfs(NfsEngine::new(Arc::clone(files), buf)?));
    }
    Ok(match w.io_mode {
        IoMode::Sync => AnyEngine::Psync(PsyncEngine::new(Arc::clone(files), buf)),
        IoMode::Mmap => AnyEngine::Mmap(MmapEngine::new(Arc::clone(files), buf)),
        IoMode::Async => AnyEngine::Uring(Box::new(
            UringEngine::new(Arc::clone(files), buf, w.async_backlog).map_err(|e| {
                Failure::fatal(format!(
                    "io_uring is not available ({e}); --file-io-mode=async needs Linux 5.6 or later with io_uring enabled (try --file-io-mode=sync)"
                ))
            })?,
        )),
    })
}
