//! `zpool iostat -v POOL INTERVAL` alongside a run: a child process and a
//! thread that reads its output into samples until it is stopped.

use super::find_tool;
use super::parse::IostatReader;
use super::{IostatSample, Platform, PoolLayout};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Instant;

/// A running `zpool iostat`. [`Sampler::stop`] ends it and hands back the
/// intervals; dropping it ends it too (a run that fails half way must not
/// leave a zpool process behind).
pub(crate) struct Sampler {
    child: Child,
    reader: Option<JoinHandle<Vec<IostatSample>>>,
}

impl Sampler {
    /// Start sampling `pool` every `interval_s` seconds.
    pub fn start(
        platform: Platform,
        pool: &str,
        layout: Option<PoolLayout>,
        interval_s: u64,
    ) -> Result<Sampler, String> {
        let interval = interval_s.to_string();
        // OpenZFS: scripted (-H), exact (-p), latency (-l), and -y to skip
        // the since-boot report. zfs-fuse knows only -v: its first report is
        // the since-boot one, which the reader drops.
        let (args, skip_first): (Vec<&str>, bool) = match platform {
            Platform::ZfsFuse => (vec!["iostat", "-v", pool, &interval], true),
            _ => (
                vec!["iostat", "-H", "-p", "-v", "-l", "-y", pool, &interval],
                false,
            ),
        };
        let zpool = find_tool("zpool").ok_or("zpool: not installed")?;
        let mut child = Command::new(zpool)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("zpool {}: {e}", args.join(" ")))?;
        let stdout = child.stdout.take().ok_or("zpool iostat: no output pipe")?;
        let pool = pool.to_string();
        let started = Instant::now();
        let reader = std::thread::Builder::new()
            .name("zpool-iostat".into())
            .spawn(move || {
                let mut reader = IostatReader::new(&pool, layout);
                let mut samples = Vec::new();
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    samples.extend(reader.line(&line, started.elapsed().as_secs_f64()));
                }
                samples.extend(reader.finish());
                if skip_first && !samples.is_empty() {
                    samples.remove(0);
                }
                samples
            })
            .map_err(|e| format!("zpool iostat: cannot start its reader: {e}"))?;
        Ok(Sampler {
            child,
            reader: Some(reader),
        })
    }

    /// End `zpool iostat` and return its intervals. A zpool that ended by
    /// itself before being stopped failed: its first error line is the reason.
    pub fn stop(mut self) -> Result<Vec<IostatSample>, String> {
        let exited_early = matches!(self.child.try_wait(), Ok(Some(s)) if !s.success());
        let _ = self.child.kill();
        let _ = self.child.wait();
        let samples = self
            .reader
            .take()
            .and_then(|r| r.join().ok())
            .unwrap_or_default();
        if exited_early && samples.is_empty() {
            let mut err = String::new();
            if let Some(mut e) = self.child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            let line = err.lines().next().unwrap_or("failed").to_string();
            return Err(format!("zpool iostat: {}", crate::text::one_line(&line)));
        }
        Ok(samples)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if self.reader.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
