//! A lab cell described as a simulator system, so `sim` can predict what the
//! lab measures and the two can be put side by side (docs/validation.md,
//! "The lab (`tankbench lab predict`)").
//!
//! The mapping (one place, used by `tankbench lab predict`):
//! - pool: the lab's layout, disk model and size, recordsize and `sync`;
//!   the log device's model. The lab's FUSE disks time every operation with
//!   these same `zfs_model::diskmodel` models, so nothing is fitted here.
//! - link: the lab's link with the round trip the lab measured (the median
//!   of its TCP ping-pong), or, before a measurement, the round trip the
//!   lab's relay adds.
//! - client: local access is the simulator's `local` protocol (fileio in
//!   the pool's mount point, no page cache: the lab's zfs-fuse runs with
//!   `--disable-page-cache`). sshfs is taken as `linux-nfs`, the closest
//!   preset: a write is one SFTP WRITE that sftp-server turns into pwrite(2)
//!   (write-back, as an NFS UNSTABLE WRITE), and an fsync one
//!   `fsync@openssh.com` request that sftp-server turns into fsync(2), one
//!   `zil_commit` (OpenSSH PROTOCOL, sftp-server.c). It differs in that one
//!   single-threaded sftp-server serves every client thread (modelled as one
//!   server core) and in having no client page cache.
//! - server: zfs-fuse 0.7 (OpenSolaris code of 2009-2010): the lab's ARC
//!   ceiling (`server.arc`, zfs-fuse's 128 MiB default without it), the
//!   host's cores, a txg every 30 s (`zfs_txg_timeout` in zfs-fuse's
//!   txg.c), and one ZIL writer at a time (`zl_writer` in its zil.c: a
//!   committer waits for the log write in flight, as before illumos 8585),
//!   and the write throttle before illumos 4045: a txg takes at most
//!   `zfs_write_limit_max` = physical memory / 8 (`zfs_write_limit_shift`
//!   = 3 in its dsl_pool.c; the limit adapts below that to 5 s of measured
//!   sync throughput, at least 32 MB), given to the simulator as
//!   `dirty_data_max`.
//!   Its time per request and how many requests it serves at once are
//!   not known from any source: the lab times its pool's write path when
//!   it is built (`parts::writeprobe`, buffered 4 KiB writes from one and
//!   two threads) and they are taken from that measurement
//!   (`server.cpu_us`, `server.cores`); without one, the kernel ZFS
//!   defaults and the host's cores.
//! - page cache: a local workload's reads of its files are served by the
//!   kernel's page cache (measured: 909,000 random 4 KiB reads/s at one
//!   thread on a lab mount, 1.1 us a read, and zfs-fuse's CPU idle);
//!   zfs-fuse's `--disable-page-cache` drops a file's pages only when it is
//!   opened. The client's page cache is the host's memory less the ARC.

use crate::experiments::matrix::CellResult;
use crate::experiments::server::ZFS_FUSE_DEFAULT_ARC;
use crate::parts::net::LinkMeasurement;
use crate::parts::writeprobe::WritePathMeasurement;
use crate::spec::{Access, LabSpec};
use crate::LabError;
use sim::system::{
    zfs_fuse_commit_costs, zfs_fuse_dirty_data_max, ClientModel, DeviceSpec, Layout, LinkModel,
    Platform, PoolModel, Protocol, ServerModel, SystemModel, ZilBatching, ZFS_FUSE_TXG_TIMEOUT_S,
};

/// The machine a lab ran on, as far as a prediction needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Host {
    /// CPUs zfs-fuse, the disk daemon and the workload share.
    pub cpus: u32,
    /// Physical memory, bytes: zfs-fuse's write limit per txg is an eighth
    /// of it.
    pub mem_bytes: u64,
}

impl Host {
    /// This machine.
    pub(crate) fn this_machine() -> Host {
        Host {
            cpus: std::thread::available_parallelism()
                .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
                .unwrap_or(1),
            mem_bytes: fileio::environment::memory().0,
        }
    }

    /// The machine a measured run reports (its environment), this machine
    /// when the result does not say.
    pub(crate) fn of_result(r: &fileio::result::RunResult) -> Host {
        if r.environment.cpus > 0 && r.environment.mem_total_bytes > 0 {
            Host {
                cpus: r.environment.cpus,
                mem_bytes: r.environment.mem_total_bytes,
            }
        } else {
            Host::this_machine()
        }
    }
}

/// What a lab measured of itself when it was built (`lab up`): its link
/// and its pool's write path. Either missing: the lab's defaults.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BuiltMeasurements<'a> {
    pub link: Option<&'a LinkMeasurement>,
    pub write_path: Option<&'a WritePathMeasurement>,
}

impl<'a> BuiltMeasurements<'a> {
    /// What a matrix cell's lab measured (nothing for a cell not run).
    pub(crate) fn of_cell(cell: Option<&'a CellResult>) -> Self {
        BuiltMeasurements {
            link: cell.and_then(|c| c.link.as_ref()),
            write_path: cell.and_then(|c| c.write_path.as_ref()),
        }
    }
}

/// `lab` with what it measured of itself as the system the simulator runs.
/// Refused, with one line: a layout of several groups (the simulator takes
/// one group of equal vdevs) or a mirrored log device.
pub(crate) fn system_for(
    spec: &LabSpec,
    measured: BuiltMeasurements<'_>,
    host: Host,
) -> Result<SystemModel, LabError> {
    let unsupported = |why: &str| {
        LabError::Spec(format!(
            "lab {}: not predicted: {why}",
            spec.pool.layout_text
        ))
    };
    let layout = match spec.pool.layout.as_slice() {
        [one] => Layout::from(*one),
        _ => {
            return Err(unsupported(
                "the simulator takes a layout of one group of equal vdevs",
            ))
        }
    };
    let log = spec
        .pool
        .log
        .as_ref()
        .map(|l| DeviceSpec::Model(l.model.clone()));
    // A mirrored log: two devices of the lab's one model.
    let log_mirror = spec
        .pool
        .log
        .as_ref()
        .filter(|l| l.mirror)
        .map(|l| DeviceSpec::Model(l.model.clone()));
    let sync = spec.pool.sync.unwrap_or_default();
    let arc = spec.server.arc.unwrap_or(ZFS_FUSE_DEFAULT_ARC);
    let (client, cores) = client_for(spec.access, host, arc);
    let link = match &spec.link {
        None => LinkModel::default(),
        Some(l) => LinkModel {
            link: l.label.as_str().into(),
            rtt_ms: Some(measured.link.map_or(l.added_rtt_ms, |m| m.rtt_ms_median)),
            rtt_spread: None,
        },
    };
    let defaults = ServerModel::default();
    let write_path = measured.write_path.filter(|m| m.is_usable());
    let (cpu_us, cores) = match write_path {
        Some(m) => (m.request_us(), cores.min(m.parallel_requests(host.cpus))),
        None => (defaults.cpu_us, cores),
    };
    let writer = zfs_fuse_commit_costs(write_path.map(|m| m.request_us()));
    Ok(SystemModel {
        name: format!("lab {}", spec.id()),
        client,
        link,
        server: ServerModel {
            ram: arc.into(),
            arc_fraction: 1.0,
            cpu_us,
            cores,
            log_block_us: writer.block_us,
            device_request_us: writer.request_us,
            log_commit_us: writer.commit_us,
            sync,
            // zfs-fuse's code base (OpenSolaris of 2010): one commit batch in
            // flight and the WR_INDIRECT rule from before OpenZFS 7578.
            platform: Some(Platform::ZfsFuse),
            zil: Some(ZilBatching::OneInFlight),
            // The platform's "no sync flag through FUSE" is about a kernel
            // NFS server over a FUSE mount; the lab's server is ganesha,
            // which commits a stable WRITE itself (fsync through its VFS
            // FSAL), so stable writes are honoured.
            nfs_sync_honoured: Some(true),
            txg_timeout_s: ZFS_FUSE_TXG_TIMEOUT_S,
            dirty_data_max: Some(zfs_fuse_dirty_data_max(host.mem_bytes).into()),
            ..ServerModel::default()
        },
        pool: PoolModel {
            layout,
            disk: DeviceSpec::Model(spec.pool.disk_model.clone()),
            disk_size: spec.pool.disk_size.into(),
            recordsize: spec.pool.recordsize.unwrap_or(128 << 10).into(),
            volblocksize: None,
        },
        log,
        log_mirror,
    })
}

/// The client a lab's access is to the simulator, and how many server
/// cores serve it (one single-threaded sftp-server for sshfs).
fn client_for(access: Access, host: Host, arc: u64) -> (ClientModel, u32) {
    match access {
        Access::Local => (
            ClientModel {
                protocol: Protocol::Local,
                page_cache: Some(host.mem_bytes.saturating_sub(arc).into()),
                ..ClientModel::default()
            },
            host.cpus.max(1),
        ),
        Access::Sshfs => (
            ClientModel {
                protocol: Protocol::LinuxNfs,
                page_cache: Some("0".into()),
                ..ClientModel::default()
            },
            1,
        ),
        // tankbench's own NFSv3 client (crates/nfs): no client cache, one
        // call per request; unstable WRITEs and one COMMIT per fsync, as the
        // Linux client does.
        Access::Nfs => (
            ClientModel {
                protocol: Protocol::LinuxNfs,
                page_cache: Some("0".into()),
                ..ClientModel::default()
            },
            host.cpus.max(1),
        ),
        // Every WRITE FILE_SYNC; an fsync then finds no unstable data and
        // sends no COMMIT (crates/fileio/src/run/nfs.rs). The simulator's
        // fsync is at least one round trip, so this charges one COMMIT with
        // nothing to commit per fsync: one round trip and its CPU too many.
        Access::NfsStable => (
            ClientModel {
                protocol: Protocol::LinuxNfs,
                stable_writes: Some(true),
                page_cache: Some("0".into()),
                ..ClientModel::default()
            },
            host.cpus.max(1),
        ),
    }
}

/// One cell of a lab matrix: what the lab measured (if the cell finished)
/// and what the simulator predicts for the same configuration.
#[derive(Debug, Clone)]
pub struct CellPrediction {
    pub labels: std::collections::BTreeMap<String, String>,
    /// The system the prediction ran (the lab's link as measured, the
    /// profile applied).
    pub system: SystemModel,
    pub measured: Option<fileio::result::RunResult>,
    pub predicted: Result<fileio::result::RunResult, String>,
}

/// The seed of a prediction whose workload gives none: the lab's runs take
/// sysbench's default (the clock), a prediction must be repeatable.
pub(crate) const PREDICTION_SEED: u64 = 1;

/// The matrix's workload as the run the simulator predicts (fileio's own
/// option words; `--rand-seed` [`PREDICTION_SEED`] unless the workload gives
/// one).
pub(crate) fn run_spec(workload: &[String]) -> Result<fileio::spec::RunSpec, LabError> {
    let mut words = workload.to_vec();
    if !workload.iter().any(|w| w.starts_with("--rand-seed")) {
        words.push(format!("--rand-seed={PREDICTION_SEED}"));
    }
    fileio::spec::RunSpec::from_words(&words).map_err(|source| LabError::Workload {
        context: "workload",
        source,
    })
}

/// How `lab predict` predicts: with an interval per cell or not, on how
/// many threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PredictOptions {
    /// Samples of each cell's interval (None: the point only). Every cell
    /// is sampled at the same points of one design
    /// (`sim::uncertainty::Design`, from the sample count and the
    /// workload's seed), as `simulate matrix` does.
    pub intervals: Option<usize>,
    /// Simulations run at once.
    pub parallel: usize,
}

impl Default for PredictOptions {
    fn default() -> Self {
        PredictOptions {
            intervals: Some(sim::uncertainty::DEFAULT_SAMPLES),
            parallel: std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        }
    }
}

/// Every cell of `matrix` predicted, beside its measured result when the
/// matrix's output holds one. `profile` (a calibration, e.g. the server CPU
/// fitted on one cell) is applied to every cell's system; what does not
/// apply to a cell is left out, as `simulate --profile` does. With
/// `options.intervals` each prediction carries its interval (its
/// `prediction` block); a cell that cannot be predicted keeps its own
/// error, the others are still predicted.
pub fn predict_matrix(
    matrix: &crate::experiments::matrix::Matrix,
    profile: Option<&sim::profile::Profile>,
    options: &PredictOptions,
) -> Result<Vec<CellPrediction>, LabError> {
    let spec = run_spec(&matrix.workload)?;
    // The simulator's bounds, once for the whole matrix, before any cell;
    // each cell then simulates at most its share of a matrix's budget.
    let cells = matrix.cells()?;
    let budget = sim::Budget::per_cell(sim::limits::DEFAULT_MATRIX_EVENTS, cells.len());
    sim::limits::check_workload(&spec, budget, cells.len() as u64)
        .map_err(|e| LabError::Spec(format!("workload: {e}")))?;
    // One cell at a time through simulate matrix's runner, each within its
    // share of the budget: the design depends only on the sample count and
    // the seed, so every cell gets the same one, and a refused cell
    // refuses only itself. The point is the run it was before intervals
    // (its whole --time, no early stop).
    let runs = sim::matrix::CellRuns {
        parallel: options.parallel,
        events: budget.events,
        early_stop: false,
        warmup_events: None,
        intervals: options.intervals,
        progress: None,
    };
    let mut out = Vec::new();
    for cell in cells {
        // A caller that catches stop signals gets its stop within a cell.
        crate::parts::sys::check_interrupted()?;
        let lab = cell.raw.validate()?;
        let finished = matrix.finished_result(&cell)?;
        let measured = finished
            .as_ref()
            .and_then(|c| c.outcome.as_ref())
            .map(|o| o.result.clone());
        let host = measured
            .as_ref()
            .map_or_else(Host::this_machine, Host::of_result);
        let mut system = system_for(&lab, BuiltMeasurements::of_cell(finished.as_ref()), host)?;
        if let Some(p) = profile {
            sim::profile::apply_profile(&mut system, p)
                .map_err(|e| LabError::Spec(format!("profile: {e}")))?;
        }
        let labels = lab.labels();
        let one = sim::matrix::MatrixCell {
            choices: labels.clone().into_iter().collect(),
            system: system.clone(),
            profile: profile.cloned(),
        };
        let predicted = sim::matrix::run_cells_with(&spec, std::slice::from_ref(&one), &runs)
            .map_err(|e| e.to_string())
            .and_then(|mut r| r.pop().ok_or_else(|| "no prediction".to_string()));
        out.push(CellPrediction {
            labels,
            system,
            measured,
            predicted,
        });
    }
    Ok(out)
}

/// predicted / measured − 1, when both exist and the measurement is not 0.
fn error(measured: Option<f64>, predicted: Option<f64>) -> Option<f64> {
    match (measured, predicted) {
        (Some(m), Some(p)) if m > 0.0 => Some(p / m - 1.0),
        _ => None,
    }
}

/// The figures the comparison shows, by their names in a prediction's
/// interval block (`sim::uncertainty::FIGURES`).
pub const COMPARED: [&str; 3] = ["writes_per_s", "reads_per_s", "event_mean_ms"];

/// One figure of one cell: the lab's, the simulator's with its interval,
/// and whether the lab's is inside it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FigureComparison {
    /// One of [`COMPARED`].
    pub figure: String,
    pub measured: Option<f64>,
    pub predicted: Option<f64>,
    /// The interval's ends (none without intervals or a prediction).
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// predicted / measured − 1.
    pub error: Option<f64>,
    /// low ≤ measured ≤ high; none without a measurement or an interval.
    pub inside: Option<bool>,
}

/// One cell's comparison, as `lab predict --format json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CellComparison {
    pub labels: std::collections::BTreeMap<String, String>,
    pub figures: Vec<FigureComparison>,
    /// Why the cell was not predicted, if it was not.
    pub not_predicted: Option<String>,
}

fn figure_of(r: &fileio::result::RunResult, name: &str) -> Option<f64> {
    match name {
        "writes_per_s" => Some(r.rates.writes_per_s),
        "reads_per_s" => Some(r.rates.reads_per_s),
        "event_mean_ms" => r
            .latency
            .get(&fileio::result::LatencyKey::Event)
            .map(|l| l.mean_ms),
        _ => None,
    }
}

/// Whether `measured` is within `low`..=`high`.
pub fn inside(measured: Option<f64>, interval: Option<(f64, f64)>) -> Option<bool> {
    let (m, (low, high)) = (measured?, interval?);
    Some(low <= m && m <= high)
}

/// Each cell's [`COMPARED`] figures, measured against predicted.
pub fn comparisons(cells: &[CellPrediction]) -> Vec<CellComparison> {
    cells
        .iter()
        .map(|c| {
            let p = c.predicted.as_ref().ok();
            let figures = COMPARED
                .iter()
                .map(|&name| {
                    let measured = c.measured.as_ref().and_then(|r| figure_of(r, name));
                    let predicted = p.and_then(|r| figure_of(r, name));
                    let interval = p
                        .and_then(|r| r.prediction.as_ref())
                        .and_then(|i| i.figures.get(name))
                        .map(|f| (f.low, f.high));
                    FigureComparison {
                        figure: name.to_string(),
                        measured,
                        predicted,
                        low: interval.map(|i| i.0),
                        high: interval.map(|i| i.1),
                        error: error(measured, predicted),
                        inside: inside(measured, interval),
                    }
                })
                .collect();
            CellComparison {
                labels: c.labels.clone(),
                figures,
                not_predicted: c.predicted.as_ref().err().cloned(),
            }
        })
        .collect()
}

/// The table of measured against predicted: writes/s, reads/s and mean
/// event latency, each with the prediction's interval (when it has one),
/// its error, and whether the measurement is inside the interval.
pub fn comparison_table(workload: &[String], cells: &[CellPrediction]) -> report::table::Table {
    use report::table::{Cell, Table};
    let mut t = Table::new(&[
        ("layout", false),
        ("SLOG", false),
        ("link", false),
        ("writes/s lab", true),
        ("writes/s sim", true),
        ("writes err", true),
        ("writes in", false),
        ("reads/s lab", true),
        ("reads/s sim", true),
        ("reads err", true),
        ("reads in", false),
        ("avg lat ms lab", true),
        ("avg lat ms sim", true),
        ("lat err", true),
        ("lat in", false),
    ]);
    t.notes.push(format!(
        "Workload: tankbench fileio {}; predictions: sim, seed {PREDICTION_SEED} unless given; err = sim / lab - 1",
        workload.join(" ")
    ));
    if let Some(p) = cells.iter().find_map(|c| {
        c.predicted
            .as_ref()
            .ok()
            .and_then(|r| r.prediction.as_ref())
    }) {
        t.notes.push(format!(
            "sim: typical (low–high), an {:.0} % interval from {} samples of the uncertain parameters' ranges (docs/prediction.md), the same samples and seed in every cell; in: whether the lab's figure is inside it",
            p.confidence * 100.0,
            p.samples
        ));
    }
    let compared = comparisons(cells);
    let (mut judged, mut hits) = (0, 0);
    for (c, cmp) in cells.iter().zip(&compared) {
        let label = |k: &str| Cell::Text(c.labels.get(k).cloned().unwrap_or_default());
        let mut row = vec![label("layout"), label("slog"), label("link")];
        for f in &cmp.figures {
            let range = f.low.zip(f.high);
            row.push(Cell::Num(f.measured));
            row.push(if range.is_some() {
                Cell::Range(f.predicted, range)
            } else {
                Cell::Num(f.predicted)
            });
            row.push(Cell::Percent(f.error));
            row.push(Cell::Text(
                match f.inside {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "–",
                }
                .to_string(),
            ));
            if let Some(i) = f.inside {
                judged += 1;
                hits += usize::from(i);
            }
        }
        t.rows.push(row);
        if let Err(e) = &c.predicted {
            t.notes.push(format!(
                "{} {}: not predicted: {e}",
                c.labels.get("layout").map_or("", String::as_str),
                c.labels.get("slog").map_or("", String::as_str)
            ));
        }
    }
    if judged > 0 {
        t.notes.push(format!(
            "{hits} of {judged} measured figures inside their interval"
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::system::LogWriterNs;

    const HOST: Host = Host {
        cpus: 2,
        mem_bytes: 16 << 30,
    };

    fn lab(extra: &str) -> LabSpec {
        LabSpec::from_toml(&format!(
            "name = \"t\"\n[pool]\nlayout = \"2x raidz2-12\"\ndisk = \"hdd\"\n{extra}"
        ))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_local_lab_is_a_local_zfs_fuse_system_with_the_labs_models() {
        let spec = lab("log = \"ssd-plp:10GB\"\n[server]\narc = \"2G\"\n");
        let m = system_for(&spec, BuiltMeasurements::default(), HOST).unwrap();
        let s = m.resolve().unwrap();
        assert_eq!(s.protocol, Protocol::Local);
        assert_eq!(
            s.page_cache_bytes,
            (16 << 30) - (2 << 30),
            "the kernel keeps a FUSE file's pages while it is open: the host's memory less the ARC"
        );
        assert!(s.link.is_none());
        assert_eq!(s.arc_bytes, 2 << 30, "the lab's ARC ceiling");
        assert_eq!(s.cores, 2);
        assert_eq!(s.zil, ZilBatching::OneInFlight);
        assert_eq!(s.txg_timeout_ns, 30_000_000_000);
        assert_eq!(s.txg.dirty_max, 2 << 30, "physical memory / 8");
        assert_eq!(s.shape.name(), "2xraidz2-12");
        assert_eq!(s.disk, spec.pool.disk_model, "the FUSE disks' model");
        assert_eq!(s.disk_bytes, spec.pool.disk_size);
        assert_eq!(s.log.as_ref(), spec.pool.log.as_ref().map(|l| &l.model));
        assert_eq!(s.recordsize, 128 << 10);
    }

    #[test]
    fn a_timed_write_path_gives_the_servers_time_a_request_and_its_cores() {
        let spec = lab("");
        let unmeasured = system_for(&spec, BuiltMeasurements::default(), HOST)
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(unmeasured.cores, HOST.cpus);
        // One thread's 25,000 writes/s is 40 us a write; two threads doing
        // fewer together is one request at a time.
        let serial = WritePathMeasurement {
            one_thread_writes_per_s: 25_000.0,
            two_threads_writes_per_s: 15_000.0,
        };
        let with_write_path = |m: &WritePathMeasurement| {
            let measured = BuiltMeasurements {
                link: None,
                write_path: Some(m),
            };
            system_for(&spec, measured, HOST)
                .unwrap()
                .resolve()
                .unwrap()
        };
        let s = with_write_path(&serial);
        assert_eq!(s.server_cpu_ns, 40_000);
        assert_eq!(s.cores, 1);
        // zfs-fuse's log block writer: 108 us a block, 23 us a request and
        // 57 us a commit beyond the first at the 31.5 us a write they were
        // measured with, scaled to this host's 40; it runs the commit
        // software.
        assert_eq!(
            unmeasured.log_writer,
            LogWriterNs {
                block: 108_000,
                request: 23_000,
                commit: 57_000,
                runs_commit_software: true,
            }
        );
        assert_eq!(
            s.log_writer,
            LogWriterNs {
                block: 137_143,
                request: 29_206,
                commit: 72_381,
                runs_commit_software: true,
            }
        );
        // The kernel keeps the local workload's file pages: the host's
        // memory less the ARC.
        assert_eq!(
            s.page_cache_bytes,
            HOST.mem_bytes - spec.server.arc.unwrap_or(ZFS_FUSE_DEFAULT_ARC)
        );
        // A measurement that is not one (no writes) leaves the defaults.
        let none = WritePathMeasurement::default();
        let d = with_write_path(&none);
        assert_eq!(d.server_cpu_ns, unmeasured.server_cpu_ns);
        assert_eq!(d.cores, HOST.cpus);
    }

    #[test]
    fn without_an_arc_the_lab_has_zfs_fuses_default() {
        let s = system_for(&lab(""), BuiltMeasurements::default(), HOST)
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(s.arc_bytes, ZFS_FUSE_DEFAULT_ARC);
        assert!(s.log.is_none());
    }

    #[test]
    fn an_sshfs_lab_takes_the_measured_round_trip() {
        let spec = lab("[link]\nkind = \"10G\"\n");
        let measured = LinkMeasurement {
            rtt_ms_median: 0.123,
            rtt_ms_min: 0.1,
            single_flow_mbit_s: 5000.0,
            aggregate_mbit_s: 5000.0,
        };
        let s = system_for(
            &spec,
            BuiltMeasurements {
                link: Some(&measured),
                write_path: None,
            },
            HOST,
        )
        .unwrap()
        .resolve()
        .unwrap();
        assert_eq!(s.protocol, Protocol::LinuxNfs);
        assert_eq!(s.rtt_ns, 123_000);
        assert_eq!(s.cores, 1, "one sftp-server serves every thread");
        // Before a measurement: the round trip the relay adds on 10 GbE,
        // 0.02 ms.
        let s = system_for(&spec, BuiltMeasurements::default(), HOST)
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(s.rtt_ns, 20_000);
    }

    #[test]
    fn nfs_labs_are_the_nfs_client_without_a_cache_stable_or_not() {
        let nfs = |access: &str| {
            let spec = LabSpec::from_toml(&format!(
                "name = \"t\"\naccess = \"{access}\"\n[pool]\nlayout = \"2x raidz2-12\"\ndisk = \"hdd\"\n[link]\nkind = \"10G\"\n"
            ))
            .unwrap_or_else(|e| panic!("{e}"));
            system_for(&spec, BuiltMeasurements::default(), HOST)
                .unwrap()
                .resolve()
                .unwrap()
        };
        let unstable = nfs("nfs");
        assert_eq!(unstable.protocol, Protocol::LinuxNfs);
        assert!(!unstable.stable_writes, "unstable WRITEs, COMMIT on fsync");
        assert_eq!(
            unstable.page_cache_bytes, 0,
            "tankbench's client caches nothing"
        );
        assert_eq!(unstable.cores, 2, "ganesha serves threads in parallel");
        let stable = nfs("nfs-stable");
        assert!(stable.stable_writes, "every WRITE FILE_SYNC, as ESXi sends");
        assert_eq!(stable.page_cache_bytes, 0);
    }

    #[test]
    fn the_system_file_reads_back_as_the_same_system() {
        let m = system_for(
            &lab("log = \"ssd-plp:10GB\"\n"),
            BuiltMeasurements::default(),
            HOST,
        )
        .unwrap();
        let text = m.to_toml().unwrap();
        let back = SystemModel::from_toml(&text).unwrap();
        assert_eq!(back.resolve().unwrap(), m.resolve().unwrap());
    }

    #[test]
    fn what_the_simulator_does_not_model_is_refused_with_one_line() {
        // A mirrored log is two devices of the lab's model.
        let mirrored = system_for(
            &lab("log = { disk = \"ssd-plp\", mirror = true }\n"),
            BuiltMeasurements::default(),
            HOST,
        )
        .unwrap();
        assert!(mirrored.log.is_some() && mirrored.log_mirror == mirrored.log);
        let mixed = LabSpec::from_toml(
            "name = \"t\"\n[pool]\nlayout = \"2xraidz2-6 + 1xmirror-2\"\ndisk = \"hdd\"\n",
        )
        .unwrap();
        let e = system_for(&mixed, BuiltMeasurements::default(), HOST)
            .unwrap_err()
            .to_string();
        assert!(e.contains("one group"), "{e}");
    }

    /// A lab cell predicted with an interval of 4 samples, and its
    /// measurement standing in for the lab's: the prediction with its
    /// writes/s set to `writes` (its other figures kept).
    fn cell_measuring(writes: impl Fn(f64, f64) -> f64) -> CellPrediction {
        let spec = run_spec(
            &[
                "--file-total-size=16M",
                "--file-num=4",
                "--file-test-mode=rndrw",
                "--file-block-size=4K",
                "--threads=2",
                "--file-fsync-all",
                "--time=1",
            ]
            .map(String::from),
        )
        .unwrap();
        let lab = lab("");
        let system = system_for(&lab, BuiltMeasurements::default(), HOST).unwrap();
        let one = sim::matrix::MatrixCell {
            choices: lab.labels().into_iter().collect(),
            system: system.clone(),
            profile: None,
        };
        let runs = sim::matrix::CellRuns {
            intervals: Some(4),
            ..sim::matrix::CellRuns::new(2)
        };
        let predicted = sim::matrix::run_cells_with(&spec, &[one], &runs)
            .unwrap()
            .pop()
            .unwrap();
        let w = &predicted.prediction.as_ref().unwrap().figures["writes_per_s"];
        let mut measured = predicted.clone();
        measured.rates.writes_per_s = writes(w.low, w.high);
        CellPrediction {
            labels: lab.labels(),
            system,
            measured: Some(measured),
            predicted: Ok(predicted),
        }
    }

    #[test]
    fn each_measured_figure_is_judged_against_the_cells_interval() {
        let cells = [
            cell_measuring(|low, high| (low + high) / 2.0),
            cell_measuring(|_, high| high * 1.5 + 1.0),
        ];
        let cmp = comparisons(&cells);
        let writes = |i: usize| &cmp[i].figures[0];
        assert_eq!(writes(0).figure, "writes_per_s");
        assert_eq!(writes(0).inside, Some(true), "{:?}", writes(0));
        assert_eq!(writes(1).inside, Some(false), "{:?}", writes(1));
        let (low, high) = (writes(1).low.unwrap(), writes(1).high.unwrap());
        assert!(low <= high && writes(1).measured.unwrap() > high);
        // The reads and the latency stand in as the prediction's own
        // point; each has its interval's ends.
        for c in &cmp {
            for f in &c.figures[1..] {
                assert_eq!(f.measured, f.predicted, "{f:?}");
                assert!(f.low.is_some() && f.high.is_some(), "{f:?}");
            }
        }
        let t = comparison_table(&[], &cells);
        let text = t.to_terminal();
        assert!(text.contains("80 % interval"), "{text}");
        let rows: Vec<&str> = text.lines().filter(|l| l.contains("2xraidz2-12")).collect();
        assert_eq!(rows.len(), 2, "{text}");
        assert!(rows[0].contains("yes") && rows[1].contains("no"), "{text}");
        assert!(
            t.notes
                .iter()
                .any(|n| n.ends_with("measured figures inside their interval")),
            "{:?}",
            t.notes
        );
        // JSON carries the interval's ends and the judgement.
        let json = serde_json::to_value(&cmp).unwrap();
        assert_eq!(json[1]["figures"][0]["inside"], false);
        assert!(json[1]["figures"][0]["low"].as_f64().is_some());
        assert!(json[1]["figures"][0]["high"].as_f64().is_some());
    }

    #[test]
    fn without_a_measurement_or_an_interval_nothing_is_judged() {
        assert_eq!(inside(None, Some((1.0, 2.0))), None);
        assert_eq!(inside(Some(1.5), None), None);
        assert_eq!(inside(Some(1.0), Some((1.0, 2.0))), Some(true));
        assert_eq!(inside(Some(2.5), Some((1.0, 2.0))), Some(false));
    }

    #[test]
    fn the_workload_gets_a_fixed_seed_unless_it_names_one() {
        let w =
            |words: &[&str]| run_spec(&words.iter().map(|s| (*s).to_string()).collect::<Vec<_>>());
        let spec = w(&["--file-test-mode=rndrw", "--time=60"]).unwrap();
        assert_eq!(spec.rand_seed, PREDICTION_SEED);
        let spec = w(&["--file-test-mode=rndrw", "--rand-seed=9"]).unwrap();
        assert_eq!(spec.rand_seed, 9);
        let e = w(&["--file-test-mode=sideways"]).unwrap_err().to_string();
        assert!(e.starts_with("workload: ") && e.contains("sideways"), "{e}");
    }
}
