//! The matrix runner: a base lab spec, axes that vary parts of it, and one
//! workload. Each combination is built, measured and torn down in turn; the
//! results form a Markdown and a JSON table like the reference user's.
//!
//! ```toml
//! base = "ref-base.toml"            # or an inline [base] table
//! workload = ["--file-total-size=1G", "--file-test-mode=rndrw", "--time=30"]
//! output = "results/ref"            # writes ref.md and ref.json
//! [[axis]]
//! key = "pool.layout"               # a dotted path into the base spec
//! values = ["1x raidz3-24", "2x raidz2-12", "3x raidz2-8"]
//! ```

use crate::lab::{Lab, UpOptions};
use crate::net::LinkMeasurement;
use crate::run::{self, Outcome};
use crate::spec::RawSpec;
use crate::{sys, LabError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    base: toml::Value,
    workload: Vec<String>,
    #[serde(default)]
    output: Option<PathBuf>,
    #[serde(default)]
    axis: Vec<Axis>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    pub key: String,
    pub values: Vec<toml::Value>,
}

pub struct Matrix {
    pub base: toml::Value,
    pub workload: Vec<String>,
    pub output: PathBuf,
    pub axes: Vec<Axis>,
}

/// One configuration of the matrix: its spec text and the values chosen.
#[derive(Debug, Clone)]
pub struct Cell {
    pub raw: RawSpec,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellResult {
    pub labels: std::collections::BTreeMap<String, String>,
    pub link: Option<LinkMeasurement>,
    pub outcome: Option<Outcome>,
    pub error: Option<String>,
    pub build_s: f64,
}

fn spec_err(path: &Path, msg: impl std::fmt::Display) -> LabError {
    LabError::Spec(format!("{}: {msg}", path.display()))
}

impl Matrix {
    pub fn load(path: &Path) -> Result<Matrix, LabError> {
        let text = std::fs::read_to_string(path).map_err(|e| LabError::Io {
            what: format!("read matrix {}", path.display()),
            source: e,
        })?;
        let raw: RawMatrix = toml::from_str(&text).map_err(|e| {
            spec_err(
                path,
                e.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let base = match raw.base {
            toml::Value::String(file) => {
                let p = dir.join(&file);
                let t = std::fs::read_to_string(&p).map_err(|e| LabError::Io {
                    what: format!("base: read {}", p.display()),
                    source: e,
                })?;
                toml::from_str::<toml::Value>(&t).map_err(|e| {
                    spec_err(
                        &p,
                        e.to_string()
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" "),
                    )
                })?
            }
            v @ toml::Value::Table(_) => v,
            other => {
                return Err(spec_err(
                    path,
                    format!("base: expected a file name or a table, got {other}"),
                ))
            }
        };
        if raw.workload.is_empty() {
            return Err(spec_err(path, "workload: list the fileio options, e.g. [\"--file-test-mode=rndrw\", \"--time=30\"]"));
        }
        let output = match raw.output {
            Some(o) if o.is_absolute() => o,
            Some(o) => dir.join(o),
            None => dir.join(path.file_stem().unwrap_or_default()),
        };
        let m = Matrix {
            base,
            workload: raw.workload,
            output,
            axes: raw.axis,
        };
        // Validate every cell up front: a typo in the last value should not
        // surface after an hour of runs.
        for c in m.cells()? {
            c.raw.validate().map_err(|e| spec_err(path, e))?;
        }
        Ok(m)
    }

    /// Every combination, first axis slowest.
    pub fn cells(&self) -> Result<Vec<Cell>, LabError> {
        let mut combos: Vec<toml::Value> = vec![self.base.clone()];
        for axis in &self.axes {
            if axis.values.is_empty() {
                return Err(LabError::Spec(format!(
                    "axis {}: values must not be empty",
                    axis.key
                )));
            }
            let mut next = Vec::new();
            for c in &combos {
                for v in &axis.values {
                    let mut c = c.clone();
                    set_path(&mut c, &axis.key, v.clone())?;
                    next.push(c);
                }
            }
            combos = next;
        }
        combos
            .into_iter()
            .map(|v| {
                let raw: RawSpec = v.try_into().map_err(|e: toml::de::Error| {
                    LabError::Spec(format!(
                        "matrix cell: {}",
                        e.to_string()
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ")
                    ))
                })?;
                Ok(Cell { raw })
            })
            .collect()
    }

    /// Build, run and tear down every cell; write the tables after each cell
    /// so an interrupted matrix keeps what it measured.
    pub fn run(&self, opts: &UpOptions, say: &dyn Fn(&str)) -> Result<Vec<CellResult>, LabError> {
        let cells = self.cells()?;
        let mut results: Vec<CellResult> = Vec::new();
        for (i, cell) in cells.iter().enumerate() {
            sys::check_interrupted()?;
            let spec = cell.raw.validate()?;
            let labels = spec.labels();
            say(&format!(
                "cell {}/{}: {}",
                i + 1,
                cells.len(),
                label_line(&labels)
            ));
            let mut res = CellResult {
                labels: labels.clone(),
                link: None,
                outcome: None,
                error: None,
                build_s: 0.0,
            };
            match Lab::up(&spec, opts) {
                Ok(lab) => {
                    res.link = lab.info().and_then(|i| i.link.clone());
                    res.build_s = lab.info().map(|i| i.built_in_s).unwrap_or(0.0);
                    match run::run_workload(&lab, &opts.tankbench, &self.workload) {
                        Ok(o) => res.outcome = Some(o),
                        Err(e) => res.error = Some(e.to_string()),
                    }
                    if let Err(e) = lab.down() {
                        res.error = Some(format!(
                            "{}teardown: {e}",
                            res.error.map(|s| s + "; ").unwrap_or_default()
                        ));
                        results.push(res);
                        self.write(&results)?;
                        return Err(e);
                    }
                }
                Err(e) => res.error = Some(e.to_string()),
            }
            if let Some(e) = &res.error {
                say(&format!("cell {} failed: {e}", i + 1));
            }
            results.push(res);
            self.write(&results)?;
            sys::check_interrupted()?;
        }
        Ok(results)
    }

    /// Write `<output>.md` and `<output>.json`.
    pub fn write(&self, results: &[CellResult]) -> Result<(), LabError> {
        if let Some(d) = self.output.parent() {
            std::fs::create_dir_all(d).map_err(|e| LabError::Io {
                what: format!("create {}", d.display()),
                source: e,
            })?;
        }
        let md = self.output.with_extension("md");
        let json = self.output.with_extension("json");
        let doc = serde_json::json!({
            "workload": self.workload,
            "cells": results,
        });
        std::fs::write(
            &json,
            serde_json::to_string_pretty(&doc).expect("serializes"),
        )
        .and_then(|_| std::fs::write(&md, markdown(&self.workload, results)))
        .map_err(|e| LabError::Io {
            what: format!("write {}", md.display()),
            source: e,
        })
    }
}

fn label_line(l: &std::collections::BTreeMap<String, String>) -> String {
    format!(
        "layout {} | slog {} | link {}",
        l.get("layout").map(String::as_str).unwrap_or("?"),
        l.get("slog").map(String::as_str).unwrap_or("?"),
        l.get("link").map(String::as_str).unwrap_or("?")
    )
}

/// The Markdown table.
pub fn markdown(workload: &[String], results: &[CellResult]) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "Workload: `tankbench fileio {}`\n\n",
        workload.join(" ")
    ));
    s.push_str("| layout | SLOG | link | RTT ms | link Mbit/s | read MiB/s | write MiB/s | reads/s | writes/s | fsyncs/s | avg lat ms | p95 ms |\n");
    s.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in results {
        let l = |k: &str| r.labels.get(k).cloned().unwrap_or_default();
        let (rtt, bw) = match &r.link {
            Some(m) => (
                format!("{:.3}", m.rtt_ms_median),
                format!("{:.0}", m.single_flow_mbit_s),
            ),
            None => ("-".into(), "-".into()),
        };
        match (&r.outcome, &r.error) {
            (Some(o), _) => {
                let m = &o.summary;
                s.push_str(&format!(
                    "| {} | {} | {} | {rtt} | {bw} | {:.2} | {:.2} | {:.1} | {:.1} | {:.1} | {:.2} | {} |\n",
                    l("layout"),
                    l("slog"),
                    l("link"),
                    m.read_mib_per_s,
                    m.written_mib_per_s,
                    m.reads_per_s,
                    m.writes_per_s,
                    m.fsyncs_per_s,
                    m.latency_avg_ms,
                    m.latency_p95_ms.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into())
                ));
            }
            (None, e) => {
                s.push_str(&format!(
                    "| {} | {} | {} | {rtt} | {bw} | failed: {} |||||||\n",
                    l("layout"),
                    l("slog"),
                    l("link"),
                    e.clone().unwrap_or_default().replace('|', "/")
                ));
            }
        }
    }
    s
}

/// Set `key` (dotted) in a TOML table, creating intermediate tables.
fn set_path(v: &mut toml::Value, key: &str, value: toml::Value) -> Result<(), LabError> {
    let mut cur = v;
    let parts: Vec<&str> = key.split('.').collect();
    for (i, p) in parts.iter().enumerate() {
        let t = cur.as_table_mut().ok_or_else(|| {
            LabError::Spec(format!(
                "axis key {key}: '{p}' is inside a value that is not a table"
            ))
        })?;
        if i + 1 == parts.len() {
            t.insert(p.to_string(), value);
            return Ok(());
        }
        cur = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(Default::default()));
    }
    Err(LabError::Spec(format!("axis key: '{key}' is empty")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cover_every_combination() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.toml");
        std::fs::write(
            &p,
            r#"
workload = ["--file-test-mode=rndrw"]
[base]
name = "m"
[base.pool]
layout = "raidz2-6"
[[axis]]
key = "pool.layout"
values = ["1x raidz3-24", "2x raidz2-12", "3x raidz2-8"]
[[axis]]
key = "pool.log"
values = ["none", "ssd-plp:10GB"]
[[axis]]
key = "link"
values = [{kind = "1G"}, {kind = "10G"}]
"#,
        )
        .unwrap();
        let m = Matrix::load(&p).unwrap();
        let cells = m.cells().unwrap();
        assert_eq!(cells.len(), 12);
        let specs: Vec<_> = cells.iter().map(|c| c.raw.validate().unwrap()).collect();
        assert_eq!(specs[0].pool.disk_count(), 24);
        assert!(specs[0].pool.log.is_none());
        assert_eq!(specs[1].link.as_ref().unwrap().label, "10G");
        assert_eq!(specs[2].pool.log.as_ref().unwrap().size, 10_000_000_000);
        assert_eq!(specs[11].labels()["layout"], "3x raidz2-8");
        assert_eq!(m.output, dir.path().join("m"));
    }

    #[test]
    fn bad_cell_is_reported_before_running() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.toml");
        std::fs::write(
            &p,
            "workload = [\"--time=1\"]\n[base]\nname = \"m\"\n[base.pool]\nlayout = \"raidz2-6\"\n[[axis]]\nkey = \"pool.layout\"\nvalues = [\"raidz2-6\", \"raidz9-6\"]\n",
        )
        .unwrap();
        let e = Matrix::load(&p).err().unwrap().to_string();
        assert!(e.contains("pool.layout") && e.contains("raidz9-6"), "{e}");
    }
}
