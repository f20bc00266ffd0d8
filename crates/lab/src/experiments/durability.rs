//! `tankbench lab durability MATRIX.toml`: do acknowledged writes survive a
//! real crash of the lab's server? Each cell is a lab configuration; for each
//! crash of a cell, `tankbench durability write` runs in the client namespace
//! on the remote mount and reports every acknowledged write to a recorder in
//! a third network namespace, the lab crashes at a seeded random moment of
//! the write phase ([`crate::experiments::crash`]), and `tankbench durability verify`
//! reads every acknowledged block back from the pool that came back.
//!
//! ```toml
//! base = "durability-base.toml"     # or an inline [base] table (needs a [link])
//! output = "results/durability"     # writes durability.md and durability.json
//! write = ["--file-num=2", "--file-total-size=8M", "--threads=2"]
//! crashes = 3                       # per cell
//! seed = 1
//! crash_window_s = [2.0, 8.0]       # crash this long after the first acknowledgement
//! [[cell]]
//! name = "sync=standard, PLP log on HDDs"
//! expect = "intact"                 # or "loss" (a negative control)
//! export = "fsync"                  # or "no-fsync": the export acknowledges fsync without doing it
//! set = { "pool.log" = "ssd-sata:256M" }
//! ```
//!
//! Where the parts run: the writer in the client namespace (it sees the
//! storage as a NAS client does); the recorder in a namespace of its own,
//! joined to the client and to the server by one veth pair each (10.78.0.0/24
//! and 10.78.1.0/24, addresses that exist only inside the lab's namespaces),
//! so neither the crash nor the storage can touch it; verify in the server
//! namespace, reading the pool's own mount point. Verify reads on the server
//! because the client's kernel is not crashed: the sshfs mount's page cache
//! may still hold blocks that the server lost, whereas the restarted
//! zfs-fuse mounts the dataset afresh (new FUSE mount, new ARC), so what
//! verify reads is what the disks gave back.

use crate::experiments::crash::{self, CrashReport};
use crate::experiments::matrix::{check_replaceable, publish, OutputWriter};
use crate::lab::{Lab, UpOptions};
use crate::parts::{net, remote, sys};
use crate::spec::{Access, LabSpec, RawSpec};
use crate::state::Resource;
use crate::{LabError, NotStarted};
use fileio::result::{RunResult, Verdict};
use fileio::rng::{splitmix64, GOLDEN_GAMMA};
use fileio::text::one_line;
use report::table::{self, Table};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Marks the JSON document of a durability matrix as ours (its first key).
pub(crate) const JSON_GENERATOR: &str = "tankbench lab durability";
/// Where the recorder listens in its namespace.
pub(crate) const RECORDER_PORT: u16 = 7878;
/// The recorder's addresses: as the client reaches it, as the server does.
pub(crate) const RECORDER_FROM_CLIENT: &str = "10.78.0.2";
pub(crate) const RECORDER_FROM_SERVER: &str = "10.78.1.2";
/// Crashes per cell when neither the file nor the command line says.
pub(crate) const DEFAULT_CRASHES: u32 = 3;
/// The crash comes this long after the writer's first acknowledgement,
/// uniform in the window (seeded): past the file set's preparation, inside
/// the write phase, well before zfs-fuse's 30 s transaction-group timeout
/// (zfs_txg_timeout in its txg.c) would make every cell look durable.
pub(crate) const DEFAULT_WINDOW_S: [f64; 2] = [2.0, 8.0];
/// What the writer may take from its start to its first acknowledgement
/// (it fills the files with zeros first).
const FIRST_ACK_LIMIT: Duration = Duration::from_secs(120);
/// What the recorder may take to listen.
const RECORDER_START_LIMIT: Duration = Duration::from_secs(20);
/// What a snapshot (or its destruction) may take to sync its transaction
/// group.
const SETTLE_LIMIT: Duration = Duration::from_secs(60);
/// What the writer may take to notice the crash and end.
const WRITER_END_LIMIT: Duration = Duration::from_secs(20);

/// What a cell must show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    /// No acknowledged write may be lost, torn or corrupt in any crash.
    Intact,
    /// A negative control: some crash must lose acknowledged writes, or the
    /// check is broken.
    Loss,
}

/// How the server exports the pool to the client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Export {
    /// The lab's sshfs mount: fsync(2) on the client becomes the
    /// fsync@openssh.com request, an fsync(2) on the server.
    #[default]
    Fsync,
    /// An sshfs mount whose sftp-server denies the fsync request
    /// (`sftp-server -P fsync`): OpenSSH's sftp-server then does not
    /// advertise fsync@openssh.com (sftp-server.c, compose_extension), and sshfs (sshfs.c, sshfs_fsync) answers
    /// fsync(2) once its writes are acknowledged by the server's write(2),
    /// in the server's memory. The export acknowledges commits it never
    /// makes stable, as an NFS export with `async` (exports(5)) or
    /// `sync=disabled` does.
    NoFsync,
}

impl Export {
    pub fn name(self) -> &'static str {
        match self {
            Export::Fsync => "fsync",
            Export::NoFsync => "no-fsync",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDurabilityMatrix {
    base: toml::Value,
    #[serde(default)]
    output: Option<PathBuf>,
    #[serde(default)]
    write: Vec<String>,
    #[serde(default)]
    crashes: Option<u32>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    crash_window_s: Option<[f64; 2]>,
    #[serde(default)]
    cell: Vec<RawCell>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCell {
    name: String,
    expect: Expect,
    #[serde(default)]
    export: Export,
    #[serde(default)]
    crashes: Option<u32>,
    #[serde(default)]
    set: BTreeMap<String, toml::Value>,
}

/// One configuration: a lab spec, how it is exported, what it must show.
#[derive(Debug, Clone)]
pub struct DurabilityCell {
    pub name: String,
    pub expect: Expect,
    pub export: Export,
    /// Crashes of this cell: `--crashes`, else the cell's `crashes`, else
    /// the matrix's.
    pub crashes: u32,
    pub spec: LabSpec,
}

/// A loaded, checked durability matrix.
#[derive(Debug, Clone)]
pub struct DurabilityMatrix {
    pub output: PathBuf,
    /// Options of `tankbench durability write` (layout, threads, commit).
    pub write: Vec<String>,
    /// Crashes of a cell that names none.
    pub crashes: u32,
    pub seed: u64,
    pub window_s: [f64; 2],
    pub cells: Vec<DurabilityCell>,
}

/// One crash of a cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrashOutcome {
    /// The crash's place among the cell's crashes (0, 1, ...).
    pub index: u32,
    /// Seconds after the writer's first acknowledgement (as drawn).
    pub crash_after_s: f64,
    /// The writer's exit status (2: the storage failed under it) and its
    /// last line.
    pub writer_exit: Option<i32>,
    pub writer_line: String,
    pub crash: Option<CrashReport>,
    /// verify's `RunResult`, its `durability` section the counts.
    pub verify: Option<RunResult>,
    pub error: Option<String>,
}

/// Every crash of a cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellOutcome {
    pub name: String,
    pub expect: Expect,
    pub export: Export,
    pub labels: BTreeMap<String, String>,
    pub crashes: Vec<CrashOutcome>,
    /// Building or tearing down the lab failed.
    pub error: Option<String>,
}

/// Totals of a cell's verified crashes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub verified: u32,
    pub failed_crashes: u32,
    pub acknowledged_writes: u64,
    /// Blocks with an acknowledged write, each checked (lost, torn and
    /// corrupt count such blocks).
    pub blocks: u64,
    pub lost: u64,
    pub torn: u64,
    pub corrupt: u64,
}

impl CellOutcome {
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for d in self
            .crashes
            .iter()
            .filter_map(|c| c.verify.as_ref()?.durability.as_ref())
        {
            t.verified += 1;
            if d.verdict == Verdict::Failed {
                t.failed_crashes += 1;
            }
            t.acknowledged_writes += d.acknowledged_writes;
            t.blocks += d.acknowledged;
            t.lost += d.lost;
            t.torn += d.torn;
            t.corrupt += d.corrupt;
        }
        t
    }

    /// Every crash ran and verified.
    pub fn complete(&self) -> bool {
        self.error.is_none()
            && !self.crashes.is_empty()
            && self
                .crashes
                .iter()
                .all(|c| c.error.is_none() && c.verify.is_some())
    }

    /// Whether the cell shows what it must: no loss in any crash (intact),
    /// or a loss in some crash (a negative control). An incomplete cell
    /// shows nothing.
    pub fn as_expected(&self) -> bool {
        let t = self.totals();
        self.complete()
            && match self.expect {
                Expect::Intact => t.failed_crashes == 0 && t.acknowledged_writes > 0,
                Expect::Loss => t.failed_crashes > 0,
            }
    }

    /// The table's verdict: what the crashes showed, and whether that is
    /// what the cell must show.
    pub fn verdict(&self) -> String {
        if !self.complete() {
            return "error".into();
        }
        let t = self.totals();
        let shown = if t.failed_crashes > 0 {
            format!("lost in {} of {}", t.failed_crashes, t.verified)
        } else {
            "none lost".to_string()
        };
        let mark = if self.as_expected() {
            "as expected"
        } else {
            match self.expect {
                Expect::Intact => "FAILED: acknowledged writes lost",
                Expect::Loss => "FAILED: the negative control lost nothing",
            }
        };
        format!("{shown} ({mark})")
    }
}

fn spec_err(path: &Path, msg: impl std::fmt::Display) -> LabError {
    LabError::Spec(format!("{}: {msg}", path.display()))
}

/// Options of `durability write` that the lab sets itself.
const LAB_WRITE_OPTIONS: [&str; 4] = ["--recorder", "--journal", "--time", "--key"];

/// Check the writer's options with durability's own parser, as the lab will
/// give them.
fn check_write_options(write: &[String]) -> Result<(), String> {
    if let Some(o) = write.iter().find(|w| {
        LAB_WRITE_OPTIONS
            .iter()
            .any(|l| w.as_str() == *l || w.starts_with(&format!("{l}=")))
    }) {
        return Err(format!(
            "write: '{o}': the lab sets --recorder, --key and --time itself; give the file set and commit options only"
        ));
    }
    // Any directory will do: the writer's is made on the remote mount later.
    let mut args: Vec<OsString> = vec!["/".into()];
    args.extend(write.iter().map(OsString::from));
    args.push(format!("--recorder={RECORDER_FROM_CLIENT}:{RECORDER_PORT}").into());
    // Not read by the parser: the recorder makes the key when it starts.
    args.push("--key=recorder.key".into());
    durability::options::parse_write(&args)
        .map(|_| ())
        .map_err(|e| format!("write: {e}"))
}

impl DurabilityMatrix {
    /// Load and check the matrix; `crashes` and `seed` from the command line
    /// win over the file's.
    pub fn load(
        path: &Path,
        crashes: Option<u32>,
        seed: Option<u64>,
    ) -> Result<DurabilityMatrix, LabError> {
        // A regular file of bounded size, as every configuration file: a
        // FIFO named like the matrix blocked the read for ever.
        let text = zfs_model::config_file::read_config(path)
            .map_err(|e| spec_err(path, format!("read durability matrix: {e}")))?;
        let raw: RawDurabilityMatrix =
            toml::from_str(&text).map_err(|e| spec_err(path, one_line(e)))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let base = match raw.base {
            toml::Value::String(file) => {
                let p = dir.join(&file);
                let t = zfs_model::config_file::read_config(&p)
                    .map_err(|e| spec_err(&p, format!("base: read: {e}")))?;
                toml::from_str::<toml::Value>(&t).map_err(|e| spec_err(&p, one_line(e)))?
            }
            v @ toml::Value::Table(_) => v,
            other => {
                return Err(spec_err(
                    path,
                    format!("base: expected a file name or a table, got {other}"),
                ))
            }
        };
        check_write_options(&raw.write).map_err(|e| spec_err(path, e))?;
        let check_crashes = |n: u32| {
            if (1..=1000).contains(&n) {
                Ok(n)
            } else {
                Err(spec_err(
                    path,
                    format!("crashes: {n} is out of range; accepted: 1 to 1000"),
                ))
            }
        };
        let matrix_crashes = check_crashes(raw.crashes.unwrap_or(DEFAULT_CRASHES))?;
        let window_s = raw.crash_window_s.unwrap_or(DEFAULT_WINDOW_S);
        if !(window_s[0].is_finite()
            && window_s[1].is_finite()
            && window_s[0] >= 0.5
            && window_s[0] <= window_s[1]
            && window_s[1] <= 600.0)
        {
            return Err(spec_err(
                path,
                format!(
                    "crash_window_s: [{}, {}]: accepted: [LOW, HIGH] seconds with 0.5 <= LOW <= HIGH <= 600",
                    window_s[0], window_s[1]
                ),
            ));
        }
        if raw.cell.is_empty() {
            return Err(spec_err(
                path,
                "cell: no cells; add [[cell]] tables with name, expect = \"intact\"|\"loss\", export and set",
            ));
        }
        let mut cells = Vec::new();
        for c in raw.cell {
            let mut v = base.clone();
            for (k, val) in &c.set {
                crate::experiments::matrix::set_path(&mut v, k, val.clone())?;
            }
            let rawspec: RawSpec = v.try_into().map_err(|e: toml::de::Error| {
                spec_err(path, format!("cell '{}': {}", c.name, one_line(e)))
            })?;
            let spec = rawspec
                .validate()
                .map_err(|e| spec_err(path, format!("cell '{}': {e}", c.name)))?;
            if spec.link.is_none() || spec.access != Access::Sshfs {
                return Err(spec_err(
                    path,
                    format!(
                        "cell '{}': the lab needs a [link] with sshfs access: the writer runs on the client, the recorder on a third namespace",
                        c.name
                    ),
                ));
            }
            cells.push(DurabilityCell {
                name: c.name,
                expect: c.expect,
                export: c.export,
                crashes: check_crashes(crashes.or(c.crashes).unwrap_or(matrix_crashes))?,
                spec,
            });
        }
        let output = match raw.output {
            Some(o) if o.is_absolute() => o,
            Some(o) => dir.join(o),
            None => dir.join(path.file_stem().unwrap_or_default()),
        };
        Ok(DurabilityMatrix {
            output,
            write: raw.write,
            crashes: crashes.unwrap_or(matrix_crashes),
            seed: seed.or(raw.seed).unwrap_or(1),
            window_s,
            cells,
        })
    }

    /// The moment of crash `k` of cell `cell`, seconds after the first
    /// acknowledgement: uniform in the window, from the seed alone.
    pub(crate) fn crash_after_s(&self, cell: usize, k: u32) -> f64 {
        let x = self.seed
            ^ (cell as u64).wrapping_mul(GOLDEN_GAMMA)
            ^ u64::from(k).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
        let z = splitmix64(x);
        // 53 random bits as a fraction in [0, 1).
        #[allow(clippy::cast_precision_loss)]
        let u = (z >> 11) as f64 / (1u64 << 53) as f64;
        self.window_s[0] + u * (self.window_s[1] - self.window_s[0])
    }

    /// The output files: `<output>.md` and `<output>.json`.
    pub fn output_files(&self) -> [PathBuf; 2] {
        [
            self.output.with_extension("md"),
            self.output.with_extension("json"),
        ]
    }

    /// Run every cell (build, crash N times, tear down), writing the tables
    /// after each cell.
    pub fn run(&self, opts: &UpOptions, say: &dyn Fn(&str)) -> Result<Vec<CellOutcome>, LabError> {
        for f in self.output_files() {
            check_replaceable(&f, DURABILITY_OUTPUT)?;
        }
        let mut results = Vec::new();
        for (i, cell) in self.cells.iter().enumerate() {
            sys::check_interrupted()?;
            say(&format!(
                "cell {}/{}: {} ({} crashes)",
                i + 1,
                self.cells.len(),
                cell.name,
                cell.crashes
            ));
            let outcome = self.run_cell(i, cell, opts, say);
            say(&format!("cell {}: {}", cell.name, outcome.verdict()));
            results.push(outcome);
            self.write(&results)?;
        }
        Ok(results)
    }

    fn run_cell(
        &self,
        index: usize,
        cell: &DurabilityCell,
        opts: &UpOptions,
        say: &dyn Fn(&str),
    ) -> CellOutcome {
        let mut out = CellOutcome {
            name: cell.name.clone(),
            expect: cell.expect,
            export: cell.export,
            labels: cell.spec.labels(),
            crashes: Vec::new(),
            error: None,
        };
        out.labels
            .insert("export".into(), cell.export.name().into());
        let lab = match Lab::up(&cell.spec, opts) {
            Ok(l) => l,
            Err(e) => {
                out.error = Some(e.to_string());
                return out;
            }
        };
        let mut guard = LabGuard(Some(lab));
        let lab = guard.0.as_mut().expect("just set");
        match Rig::attach(lab, cell.export, &opts.tankbench) {
            Ok(rig) => {
                for k in 0..cell.crashes {
                    if sys::interrupted() {
                        break;
                    }
                    let after = self.crash_after_s(index, k);
                    let c = self.one_crash(lab, &rig, &out.labels, (k, cell.crashes), after, say);
                    if let Some(e) = &c.error {
                        say(&format!("crash {}: {e}", k + 1));
                    }
                    let stop = c.crash.is_none() && c.error.is_some();
                    out.crashes.push(c);
                    if stop {
                        // A crash that did not bring the pool back leaves
                        // nothing to crash again.
                        break;
                    }
                }
            }
            Err(e) => out.error = Some(e.to_string()),
        }
        if let Some(lab) = guard.0.take() {
            if let Err(e) = lab.down() {
                out.error = Some(format!(
                    "{}teardown: {e}",
                    out.error.map(|s| s + "; ").unwrap_or_default()
                ));
            }
        }
        out
    }

    /// One crash: a fresh file set, the writer, the crash at its moment,
    /// the writer's end, verify.
    fn one_crash(
        &self,
        lab: &mut Lab,
        rig: &Rig,
        labels: &BTreeMap<String, String>,
        (k, of): (u32, u32),
        after_s: f64,
        say: &dyn Fn(&str),
    ) -> CrashOutcome {
        let mut out = CrashOutcome {
            index: k,
            crash_after_s: after_s,
            writer_exit: None,
            writer_line: String::new(),
            crash: None,
            verify: None,
            error: None,
        };
        let mut writer = None;
        let r = self.crash_steps(
            lab,
            rig,
            labels,
            (k, of),
            after_s,
            say,
            &mut out,
            &mut writer,
        );
        if let Some(mut w) = writer {
            // Whatever went wrong, the writer does not outlive its crash.
            let _ = w.kill();
            let _ = w.wait();
        }
        if let Err(e) = r {
            out.error = Some(e.to_string());
        }
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn crash_steps(
        &self,
        lab: &mut Lab,
        rig: &Rig,
        labels: &BTreeMap<String, String>,
        (k, of): (u32, u32),
        after_s: f64,
        say: &dyn Fn(&str),
        out: &mut CrashOutcome,
        writer: &mut Option<Child>,
    ) -> Result<(), LabError> {
        let info = lab.built()?.clone();
        let name = format!("durability-{k}");
        // Made on the server and flushed there: the file set's directory is
        // not what a crash should take.
        let server_dir = info.pool_mountpoint.join(&name);
        std::fs::create_dir(&server_dir).map_err(|e| io(&server_dir, "create", e))?;
        sync_path(&server_dir)?;
        sync_path(&info.pool_mountpoint)?;
        let client_dir = rig.export_dir.join(&name);

        let journal_start = std::fs::metadata(&rig.journal).map_or(0, |m| m.len());
        let wlog = rig.dir.join(format!("writer-{k}.log"));
        record(lab, Resource::File { path: wlog.clone() })?;
        let mut cmd = Command::new(&rig.tankbench);
        cmd.arg("durability")
            .arg("write")
            .arg(&client_dir)
            .args(&self.write)
            .arg(format!("--recorder={RECORDER_FROM_CLIENT}:{RECORDER_PORT}"))
            .arg(format!("--key={}", rig.key.display()))
            // A safety net only: the crash ends the writer long before.
            .arg(format!("--time={}", writer_time_limit(self.window_s[1])));
        sys::in_netns(&mut cmd, &net::client_ns(&lab.state.id))?;
        sys::log_output_to(&mut cmd, &wlog, false)?;
        let child = sys::spawn(&mut cmd)?;
        let child = writer.insert(child);

        let first_ack = wait_first_ack(child, &rig.journal, journal_start, &wlog)?;
        // The file set's layout (marker, files filled with zeros) made
        // durable on the server: the crash is to test the blocks' writes,
        // not the creation of the files, which an export that ignores
        // fsync would otherwise lose as a whole.
        settle_pool(&info, k)?;
        wait_writing_until(child, first_ack + Duration::from_secs_f64(after_s), &wlog)?;
        say(&format!(
            "crash {}/{}: {:.2} s after the first acknowledgement",
            k + 1,
            of,
            after_s
        ));
        out.crash = Some(crash::crash(lab, say)?);

        // The writer notices the storage's failure and ends; one that does
        // not (stuck on the old mount) is stopped.
        out.writer_exit = wait_end(child, WRITER_END_LIMIT)?;
        if out.writer_exit.is_none() {
            // SIGTERM first: the writer then hands what it has queued to
            // the recorder (more blocks checked); SIGKILL after 15 s.
            if let Ok(pid) = i32::try_from(child.id()) {
                sys::stop_pid(pid, "durability", Duration::from_secs(15));
            }
            let _ = child.kill();
            out.writer_exit = child.wait().ok().and_then(|s| s.code());
        }
        *writer = None;
        out.writer_line = sys::last_line(&wlog);

        out.verify = Some(verify(lab, rig, k, &server_dir, labels, say)?);
        Ok(())
    }
}

/// Verify on the server's mount point, fetching the journal from the
/// recorder over the server's own veth: verify's `RunResult`, with the lab's
/// labels and the crash's number.
fn verify(
    lab: &mut Lab,
    rig: &Rig,
    k: u32,
    server_dir: &Path,
    labels: &BTreeMap<String, String>,
    say: &dyn Fn(&str),
) -> Result<RunResult, LabError> {
    let vjson = rig.dir.join(format!("verify-{k}.json"));
    let vlog = rig.dir.join(format!("verify-{k}.log"));
    record(
        lab,
        Resource::File {
            path: vjson.clone(),
        },
    )?;
    record(lab, Resource::File { path: vlog.clone() })?;
    let mut cmd = Command::new(&rig.tankbench);
    cmd.arg("durability")
        .arg("verify")
        .arg(server_dir)
        .arg(format!("--from={RECORDER_FROM_SERVER}:{RECORDER_PORT}"))
        .arg(format!("--key={}", rig.key.display()))
        .arg(format!("--json={}", vjson.display()));
    sys::in_netns(&mut cmd, &net::server_ns(&lab.state.id))?;
    sys::log_output_to(&mut cmd, &vlog, false)?;
    let status = cmd.status().map_err(|e| LabError::Spawn {
        command: sys::describe(&cmd),
        source: e,
    })?;
    let text = std::fs::read_to_string(&vjson).map_err(|_| LabError::EndedEarly {
        what: "durability verify".into(),
        status: status.to_string(),
        before: "without a result",
        last_line: sys::last_line(&vlog),
    })?;
    let mut result: RunResult = serde_json::from_str(&text).map_err(|e| LabError::Damaged {
        what: format!("durability verify's result {}", vjson.display()),
        message: e.to_string(),
    })?;
    result.labels.extend(labels.clone());
    result.labels.insert("crash".into(), k.to_string());
    if let Some(d) = &result.durability {
        say(&format!(
                "verify: {} acknowledged writes, {} blocks: {} intact, {} lost, {} torn, {} corrupt ({})",
                d.acknowledged_writes,
                d.acknowledged,
                d.intact,
                d.lost,
                d.torn,
                d.corrupt,
                d.verdict.name()
            ));
    }
    Ok(result)
}

impl DurabilityMatrix {
    /// Write `<output>.md` (the table) and `<output>.json` (every cell,
    /// every crash, every verify `RunResult`).
    pub fn write(&self, results: &[CellOutcome]) -> Result<(), LabError> {
        if let Some(d) = self.output.parent() {
            std::fs::create_dir_all(d).map_err(|e| io(d, "create", e))?;
        }
        let [md, json] = self.output_files();
        check_replaceable(&md, DURABILITY_OUTPUT)?;
        check_replaceable(&json, DURABILITY_OUTPUT)?;
        #[derive(Serialize)]
        struct Doc<'a> {
            generator: &'static str,
            write: &'a [String],
            crashes: u32,
            seed: u64,
            crash_window_s: [f64; 2],
            cells: &'a [CellOutcome],
        }
        let doc = Doc {
            generator: JSON_GENERATOR,
            write: &self.write,
            crashes: self.crashes,
            seed: self.seed,
            crash_window_s: self.window_s,
            cells: results,
        };
        let text = serde_json::to_string_pretty(&doc).expect("serializes") + "\n";
        publish(&json, text.as_bytes(), DURABILITY_OUTPUT)?;
        publish(
            &md,
            self.table(results).to_markdown().as_bytes(),
            DURABILITY_OUTPUT,
        )
    }

    /// One row per cell.
    pub fn table(&self, results: &[CellOutcome]) -> Table {
        let mut t = Table::new(&[
            ("configuration", false),
            ("export", false),
            ("crashes", true),
            ("acknowledged writes", true),
            ("blocks checked", true),
            ("lost", true),
            ("torn", true),
            ("corrupt", true),
            ("must show", false),
            ("verdict", false),
        ]);
        t.notes.push(format!(
            "Writer: tankbench durability write {}; crashes (column) each uniform in [{}, {}] s after the first acknowledgement, seed {}",
            self.write.join(" "),
            self.window_s[0],
            self.window_s[1],
            self.seed
        ));
        for r in results {
            let tot = r.totals();
            t.rows.push(vec![
                table::Cell::Text(r.name.clone()),
                table::Cell::Text(r.export.name().into()),
                table::Cell::Int(u64::from(tot.verified)),
                table::Cell::Int(tot.acknowledged_writes),
                table::Cell::Int(tot.blocks),
                table::Cell::Int(tot.lost),
                table::Cell::Int(tot.torn),
                table::Cell::Int(tot.corrupt),
                table::Cell::Text(
                    match r.expect {
                        Expect::Intact => "no loss",
                        Expect::Loss => "loss",
                    }
                    .into(),
                ),
                table::Cell::Text(r.verdict()),
            ]);
            if let Some(e) = r
                .error
                .as_ref()
                .or_else(|| r.crashes.iter().find_map(|c| c.error.as_ref()))
            {
                t.notes.push(format!("{}: {e}", r.name));
            }
        }
        t
    }
}

/// The writer's `--time`: past the crash window with room for preparing
/// the files; the crash ends it long before.
fn writer_time_limit(window_high_s: f64) -> u64 {
    // The window is checked to be at most 600 s.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let high = window_high_s.ceil().clamp(0.0, 600.0) as u64;
    high + FIRST_ACK_LIMIT.as_secs() + 60
}

/// Tears the lab down however a cell ends.
struct LabGuard(Option<Lab>);

impl Drop for LabGuard {
    fn drop(&mut self) {
        if let Some(l) = self.0.take() {
            let _ = l.down();
        }
    }
}

/// What the lab adds for durability: the recorder's namespace and process,
/// its journal, and the export the writer uses.
struct Rig {
    dir: PathBuf,
    journal: PathBuf,
    /// The recorder's key file.
    key: PathBuf,
    export_dir: PathBuf,
    tankbench: PathBuf,
}

fn io(path: &Path, what: &str, e: std::io::Error) -> LabError {
    LabError::Io {
        what: format!("{what} {}", path.display()),
        source: e,
    }
}

/// Record an object in the lab's state, so `lab down` removes it (newest
/// first: these go before the lab's own parts).
fn record(lab: &mut Lab, r: Resource) -> Result<(), LabError> {
    lab.state.resources.push(r);
    lab.state.save(&lab.dir)
}

impl Rig {
    fn attach(lab: &mut Lab, export: Export, tankbench: &Path) -> Result<Rig, LabError> {
        let id = lab.state.id.clone();
        let info = lab.built()?.clone();
        let rec_ns = recorder_namespace(lab, &id)?;
        let dir = lab.dir.join("durability");
        std::fs::create_dir(&dir).map_err(|e| io(&dir, "create", e))?;
        record(lab, Resource::Dir { path: dir.clone() })?;
        let journal = dir.join("recorder.journal");
        let rlog = dir.join("recorder.log");
        record(
            lab,
            Resource::File {
                path: journal.clone(),
            },
        )?;
        record(lab, Resource::File { path: rlog.clone() })?;
        // The run's secret: made by the recorder (mode 0600), given to the
        // writer and verify.
        let key = dir.join("recorder.key");
        record(lab, Resource::File { path: key.clone() })?;
        let mut cmd = Command::new(tankbench);
        cmd.args(["durability", "record"])
            .arg(format!("--listen=0.0.0.0:{RECORDER_PORT}"))
            .arg(format!("--journal={}", journal.display()))
            .arg(format!("--key={}", key.display()));
        sys::in_netns(&mut cmd, &rec_ns)?;
        sys::log_output_to(&mut cmd, &rlog, false)?;
        let child = sys::spawn(&mut cmd)?;
        let pid = sys::child_pid(&child)?;
        record(
            lab,
            Resource::Process {
                pid,
                tag: journal.display().to_string(),
                what: "durability recorder".into(),
                start_time: crate::parts::zfsd::start_time(pid),
            },
        )?;
        // Reaped by `lab down` through its record; the handle is not needed.
        drop(child);
        let deadline = Instant::now() + RECORDER_START_LIMIT;
        loop {
            let ns = rec_ns.clone();
            let up = sys::with_netns(&ns, || {
                Ok(std::net::TcpStream::connect(("127.0.0.1", RECORDER_PORT)).is_ok())
            })?;
            // The key is made before the recorder serves; wait for both.
            if up && key.exists() {
                break;
            }
            let exited = !sys::pid_alive(pid);
            if exited || Instant::now() > deadline {
                return Err(LabError::NotStarted {
                    what: "the durability recorder".into(),
                    how: if exited {
                        NotStarted::Exited
                    } else {
                        NotStarted::Within(RECORDER_START_LIMIT.as_secs())
                    },
                    last_line: sys::last_line(&rlog),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let export_dir = match export {
            Export::Fsync => info.workdir.clone(),
            Export::NoFsync => mount_no_fsync(lab, &info.pool_mountpoint)?,
        };
        Ok(Rig {
            dir,
            journal,
            key,
            export_dir,
            tankbench: tankbench.to_path_buf(),
        })
    }
}

/// The recorder's network namespace, joined to the client's and the
/// server's by one veth pair each; recorded in the lab's state.
fn recorder_namespace(lab: &mut Lab, id: &str) -> Result<String, LabError> {
    let rec_ns = format!("{id}-rec");
    sys::run("ip", ["netns", "add", rec_ns.as_str()])?;
    record(
        lab,
        Resource::Netns {
            name: rec_ns.clone(),
        },
    )?;
    sys::run("ip", ["-n", rec_ns.as_str(), "link", "set", "lo", "up"])?;
    // Interface names: the spec keeps a lab's name to 8 characters, so
    // tb-NAME-r0 fits the kernel's 15.
    for (i, peer_ns, peer_addr, rec_addr) in [
        (0, net::client_ns(id), "10.78.0.1", RECORDER_FROM_CLIENT),
        (1, net::server_ns(id), "10.78.1.1", RECORDER_FROM_SERVER),
    ] {
        let peer_dev = format!("{id}-r{i}");
        let rec_dev = format!("{id}-q{i}");
        sys::run(
            "ip",
            [
                "link", "add", &peer_dev, "netns", &peer_ns, "type", "veth", "peer", "name",
                &rec_dev, "netns", &rec_ns,
            ],
        )?;
        for (ns, dev, addr) in [
            (&peer_ns, &peer_dev, peer_addr),
            (&rec_ns, &rec_dev, rec_addr),
        ] {
            sys::run(
                "ip",
                ["-n", ns, "addr", "add", &format!("{addr}/24"), "dev", dev],
            )?;
            sys::run("ip", ["-n", ns, "link", "set", dev, "up"])?;
        }
    }
    Ok(rec_ns)
}

/// A second sshfs mount of the pool in the client namespace, through the
/// lab's sshd and keys, whose sftp-server denies the fsync request.
fn mount_no_fsync(lab: &mut Lab, pool_mp: &Path) -> Result<PathBuf, LabError> {
    let id = lab.state.id.clone();
    let sftp = remote::sftp_server().ok_or_else(|| {
        LabError::Missing(
            "program `sftp-server` (apt-get install openssh-sftp-server): the no-fsync export runs it with -P fsync"
                .into(),
        )
    })?;
    let files = remote::SshFiles::new(&lab.dir.join("ssh"));
    let mp = lab.dir.join("client-nofsync");
    std::fs::create_dir(&mp).map_err(|e| io(&mp, "create", e))?;
    record(lab, Resource::Dir { path: mp.clone() })?;
    record(lab, Resource::Mount { path: mp.clone() })?;
    let log = lab.dir.join("durability").join("sshfs-nofsync.log");
    record(lab, Resource::File { path: log.clone() })?;
    remote::mount_sshfs_as(
        &id,
        &files,
        (pool_mp, &mp),
        &format!("{id}-nofsync"),
        // A path (with '/') is run as a command rather than a subsystem.
        &[format!("sftp_server={} -P fsync", sftp.display())],
        &log,
    )?;
    Ok(mp)
}

/// Wait for the run's first acknowledgement in the recorder's journal (past
/// `from`, where the journal ended when the writer started): its moment.
fn wait_first_ack(
    child: &mut Child,
    journal: &Path,
    from: u64,
    wlog: &Path,
) -> Result<Instant, LabError> {
    let started = Instant::now();
    loop {
        if journal_has_ack(journal, from) {
            return Ok(Instant::now());
        }
        if let Ok(Some(st)) = child.try_wait() {
            return Err(LabError::EndedEarly {
                what: "the writer".into(),
                status: st.to_string(),
                before: "before its first acknowledgement",
                last_line: sys::last_line(wlog),
            });
        }
        if started.elapsed() > FIRST_ACK_LIMIT {
            return Err(LabError::Timeout {
                what: "no acknowledgement reached the recorder".into(),
                seconds: FIRST_ACK_LIMIT.as_secs(),
                detail: sys::last_line(wlog),
            });
        }
        sys::check_interrupted()?;
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait until `at`, the writer still writing.
fn wait_writing_until(child: &mut Child, at: Instant, wlog: &Path) -> Result<(), LabError> {
    loop {
        let now = Instant::now();
        if now >= at {
            return Ok(());
        }
        if let Ok(Some(st)) = child.try_wait() {
            return Err(LabError::EndedEarly {
                what: "the writer".into(),
                status: st.to_string(),
                before: "before the crash",
                last_line: sys::last_line(wlog),
            });
        }
        sys::check_interrupted()?;
        std::thread::sleep(Duration::from_millis(10).min(at - now));
    }
}

/// fsync(2) of a file or directory.
fn sync_path(p: &Path) -> Result<(), LabError> {
    std::fs::File::open(p)
        .and_then(|f| f.sync_all())
        .map_err(|e| io(p, "fsync", e))
}

/// Everything written to the pool so far made durable by a transaction-group
/// sync, independent of the intent log under test: a snapshot is created
/// and destroyed, each of which waits for its transaction group to sync
/// (dsl_sync_task in OpenSolaris's dsl_synctask.c, which zfs-fuse carries).
fn settle_pool(info: &crate::state::LabInfo, k: u32) -> Result<(), LabError> {
    let snap = format!("{}@tb-durability-{k}", info.pool);
    for verb in ["snapshot", "destroy"] {
        let mut c = crate::lab::zfs_command(info.zfsd.as_ref(), "zfs")?;
        c.args([verb, snap.as_str()]);
        if sys::status_within(&mut c, SETTLE_LIMIT) != sys::Within::Succeeded {
            return Err(LabError::Timeout {
                what: format!("`zfs {verb} {snap}` did not succeed"),
                seconds: SETTLE_LIMIT.as_secs(),
                detail: String::new(),
            });
        }
    }
    Ok(())
}

/// Whether the journal holds an acknowledgement (`A ` line) past `from`.
fn journal_has_ack(journal: &Path, from: u64) -> bool {
    let Ok(mut f) = std::fs::File::open(journal) else {
        return false;
    };
    let mut text = Vec::new();
    if std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(from)).is_err()
        || f.read_to_end(&mut text).is_err()
    {
        return false;
    }
    text.split(|b| *b == b'\n').any(|l| l.starts_with(b"A "))
}

/// Wait up to `limit` for the child to end: its exit code (None if it is
/// still running, or was ended by a signal).
fn wait_end(child: &mut Child, limit: Duration) -> Result<Option<i32>, LabError> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Ok(st.code().or(Some(-1))),
            Ok(None) if Instant::now() > deadline => return Ok(None),
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                return Err(LabError::Io {
                    what: "wait for the writer".into(),
                    source: e,
                })
            }
        }
    }
}

/// The durability matrix's output files.
const DURABILITY_OUTPUT: OutputWriter = OutputWriter {
    generator: JSON_GENERATOR,
    name: "a lab durability matrix",
};

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix_file(dir: &Path, body: &str) -> PathBuf {
        let p = dir.join("d.toml");
        std::fs::write(
            &p,
            format!(
                "write = [\"--file-num=2\", \"--file-total-size=8M\"]\n{body}\n[base]\nname = \"dm\"\nroot = \"{}\"\n[base.pool]\nlayout = \"mirror\"\ndisk = \"hdd\"\ndisk_size = \"1GB\"\n[base.link]\nkind = \"1G\"\n",
                dir.display()
            ),
        )
        .unwrap();
        p
    }

    const CELLS: &str = "[[cell]]\nname = \"plp\"\nexpect = \"intact\"\nset = { \"pool.log\" = \"ssd-sata:256M\" }\n[[cell]]\nname = \"nofsync\"\nexpect = \"loss\"\nexport = \"no-fsync\"\ncrashes = 1\n";

    #[test]
    fn a_matrix_loads_its_cells_with_the_changes_applied() {
        let dir = tempfile::tempdir().unwrap();
        let m = DurabilityMatrix::load(&matrix_file(dir.path(), CELLS), None, Some(7)).unwrap();
        assert_eq!(m.cells.len(), 2);
        assert_eq!(m.crashes, DEFAULT_CRASHES);
        assert_eq!(m.seed, 7);
        assert_eq!(m.cells[0].spec.labels()["slog"], "ssd-sata");
        assert_eq!(m.cells[1].spec.labels()["slog"], "none");
        assert_eq!(m.cells[1].export, Export::NoFsync);
        assert_eq!(m.cells[0].expect, Expect::Intact);
        assert_eq!(m.output, dir.path().join("d"));
        // A cell's own count wins over the matrix's, the command line's
        // over both.
        assert_eq!((m.cells[0].crashes, m.cells[1].crashes), (3, 1));
        let m = DurabilityMatrix::load(&matrix_file(dir.path(), CELLS), Some(5), None).unwrap();
        assert_eq!((m.cells[0].crashes, m.cells[1].crashes), (5, 5));
    }

    #[test]
    fn crash_moments_are_seeded_and_inside_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let p = matrix_file(dir.path(), CELLS);
        let a = DurabilityMatrix::load(&p, Some(5), Some(3)).unwrap();
        let b = DurabilityMatrix::load(&p, Some(5), Some(3)).unwrap();
        let c = DurabilityMatrix::load(&p, Some(5), Some(4)).unwrap();
        let mut seen = Vec::new();
        for cell in 0..2 {
            for k in 0..5 {
                let t = a.crash_after_s(cell, k);
                assert!((2.0..=8.0).contains(&t), "{t}");
                assert_eq!(t.to_bits(), b.crash_after_s(cell, k).to_bits());
                seen.push(t.to_bits());
            }
        }
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 10, "every crash gets its own moment");
        assert_ne!(
            a.crash_after_s(0, 0).to_bits(),
            c.crash_after_s(0, 0).to_bits()
        );
    }

    #[test]
    fn crash_moments_stay_those_of_earlier_releases() {
        // Recorded from the release before the draw used fileio's SplitMix64:
        // a matrix re-run with the same seed crashes at the same moments.
        let dir = tempfile::tempdir().unwrap();
        let m = DurabilityMatrix::load(&matrix_file(dir.path(), CELLS), Some(3), Some(3)).unwrap();
        let moments: Vec<u64> = [(0, 0), (0, 2), (1, 1)]
            .iter()
            .map(|&(cell, k)| m.crash_after_s(cell, k).to_bits())
            .collect();
        assert_eq!(
            moments,
            [
                4_613_218_823_182_028_874,
                4_612_662_339_579_335_899,
                4_620_233_284_847_105_440
            ]
        );
    }

    #[test]
    fn bad_matrices_are_refused_with_one_line_naming_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("write = [\"--time=5\"]\n", "--time"),
            ("crashes = 0\n", "crashes"),
            ("crash_window_s = [9.0, 2.0]\n", "crash_window_s"),
            ("[[cell]]\nname = \"x\"\nexpect = \"maybe\"\n", "expect"),
            (
                "[[cell]]\nname = \"x\"\nexpect = \"loss\"\nexport = \"nfs\"\n",
                "export",
            ),
            (
                "[[cell]]\nname = \"x\"\nexpect = \"loss\"\nset = { \"pool.disk\" = \"floppy\" }\n",
                "floppy",
            ),
            (
                "[[cell]]\nname = \"x\"\nexpect = \"loss\"\nset = { \"access\" = \"local\" }\n",
                "sshfs",
            ),
        ];
        for (body, needle) in cases {
            let p = dir.path().join("bad.toml");
            // The write list goes first; a case may replace it.
            let text = if body.starts_with("write") {
                format!(
                    "{body}[[cell]]\nname = \"c\"\nexpect = \"intact\"\n[base]\nname = \"dm\"\n[base.pool]\nlayout = \"mirror\"\ndisk = \"hdd\"\ndisk_size = \"1GB\"\n[base.link]\nkind = \"1G\"\n"
                )
            } else {
                let cells = if body.contains("[[cell]]") {
                    ""
                } else {
                    "[[cell]]\nname = \"c\"\nexpect = \"intact\"\n"
                };
                format!(
                    "{body}{cells}[base]\nname = \"dm\"\n[base.pool]\nlayout = \"mirror\"\ndisk = \"hdd\"\ndisk_size = \"1GB\"\n[base.link]\nkind = \"1G\"\n"
                )
            };
            std::fs::write(&p, text).unwrap();
            let e = DurabilityMatrix::load(&p, None, None)
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{body}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
        let p = matrix_file(dir.path(), "");
        let e = DurabilityMatrix::load(&p, None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no cells"), "{e}");
    }

    #[test]
    fn the_first_acknowledgement_is_looked_for_past_the_writers_start() {
        let dir = tempfile::tempdir().unwrap();
        let j = dir.path().join("journal");
        std::fs::write(
            &j,
            "tankbench-durability-journal 1\nS run=aa\nA aa 0 1 1 00000000\n",
        )
        .unwrap();
        assert!(journal_has_ack(&j, 0));
        let start = std::fs::metadata(&j).unwrap().len();
        assert!(
            !journal_has_ack(&j, start),
            "an earlier run's acknowledgement"
        );
        std::fs::write(
            &j,
            "tankbench-durability-journal 1\nS run=aa\nA aa 0 1 1 00000000\nS run=bb\n",
        )
        .unwrap();
        assert!(
            !journal_has_ack(&j, start),
            "a session start is no acknowledgement"
        );
        let mut text = std::fs::read_to_string(&j).unwrap();
        text.push_str("A bb 1 7 1 00000000\n");
        std::fs::write(&j, text).unwrap();
        assert!(journal_has_ack(&j, start));
        assert!(!journal_has_ack(&dir.path().join("none"), 0));
    }

    /// A Markdown or JSON file the matrix did not write is never replaced:
    /// refused before any lab is built.
    #[test]
    fn outputs_it_did_not_write_are_refused_before_anything_is_built() {
        let dir = tempfile::tempdir().unwrap();
        let m = DurabilityMatrix::load(&matrix_file(dir.path(), CELLS), None, None).unwrap();
        let [md, json] = m.output_files();
        std::fs::write(&md, "my notes\n").unwrap();
        let opts = UpOptions {
            tankbench: dir.path().join("no-such-tankbench"),
            measure: false,
            disk_trace: None,
            progress: Box::new(|_| {}),
        };
        let said = std::cell::RefCell::new(Vec::new());
        let e = m
            .run(&opts, &|s| said.borrow_mut().push(s.to_string()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("refusing to overwrite") && e.contains("d.md"),
            "{e}"
        );
        assert!(said.borrow().is_empty(), "nothing was started: {said:?}");
        assert_eq!(std::fs::read_to_string(&md).unwrap(), "my notes\n");
        assert!(!json.exists());
        // Its own files are replaced.
        std::fs::remove_file(&md).unwrap();
        m.write(&[]).unwrap();
        m.write(&[]).unwrap();
        assert!(std::fs::read_to_string(&json)
            .unwrap()
            .starts_with("{\n  \"generator\": \"tankbench lab durability\""));
    }

    /// The example matrix loads: the issue's four cells, two of them
    /// negative controls.
    #[test]
    fn the_example_matrix_loads() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/lab/durability.toml");
        let m = DurabilityMatrix::load(&p, None, None).unwrap();
        assert_eq!(m.cells.len(), 4);
        let controls: Vec<_> = m
            .cells
            .iter()
            .filter(|c| c.expect == Expect::Loss)
            .collect();
        assert_eq!(controls.len(), 2);
        assert_eq!(controls[0].export, Export::NoFsync);
        assert_eq!(controls[1].spec.labels()["slog"], "ssd-sata-lying");
        assert!(m.cells.iter().all(|c| c.crashes == 3));
    }

    fn outcome(expect: Expect, verdicts: &[(Verdict, u64)]) -> CellOutcome {
        CellOutcome {
            name: "c".into(),
            expect,
            export: Export::Fsync,
            labels: BTreeMap::new(),
            error: None,
            crashes: verdicts
                .iter()
                .enumerate()
                .map(|(i, (v, lost))| CrashOutcome {
                    index: u32::try_from(i).unwrap(),
                    crash_after_s: 3.0,
                    writer_exit: Some(2),
                    writer_line: String::new(),
                    crash: None,
                    verify: Some(RunResult {
                        durability: Some(fileio::result::Durability {
                            verdict: *v,
                            acknowledged_writes: 100,
                            lost: *lost,
                            ..Default::default()
                        }),
                        ..serde_json::from_str(include_str!(
                            "../../../fileio/tests/data/schema1-stored-seqwr.json"
                        ))
                        .unwrap()
                    }),
                    error: None,
                })
                .collect(),
        }
    }

    #[test]
    fn verdicts_say_whether_a_cell_showed_what_it_must() {
        let ok = outcome(Expect::Intact, &[(Verdict::Passed, 0); 3]);
        assert!(ok.as_expected());
        assert_eq!(ok.totals().acknowledged_writes, 300);
        assert_eq!(ok.verdict(), "none lost (as expected)");
        let bad = outcome(
            Expect::Intact,
            &[(Verdict::Passed, 0), (Verdict::Failed, 4)],
        );
        assert!(!bad.as_expected());
        assert_eq!(bad.totals().lost, 4);
        assert!(bad.verdict().contains("FAILED"), "{}", bad.verdict());
        let control = outcome(Expect::Loss, &[(Verdict::Passed, 0), (Verdict::Failed, 9)]);
        assert!(control.as_expected());
        assert_eq!(control.verdict(), "lost in 1 of 2 (as expected)");
        let broken = outcome(Expect::Loss, &[(Verdict::Passed, 0); 3]);
        assert!(!broken.as_expected(), "a control that lost nothing");
        let mut unfinished = outcome(Expect::Loss, &[(Verdict::Failed, 1)]);
        unfinished.crashes[0].verify = None;
        unfinished.crashes[0].error = Some("pool did not come back".into());
        assert!(!unfinished.as_expected());
        assert_eq!(unfinished.verdict(), "error");
    }
}
