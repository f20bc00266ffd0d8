//! The second stage: sections of settings to typed jobs in groups, as fio
//! 3.33 forms them. A job starts from fio's defaults, takes the `[global]`
//! sections above it in its file (several add up), then its own settings,
//! the later of two winning. Groups: each job file starts one, and so does a
//! job with `stonewall` that is not the first (fio's `add_job`: `groupid++`
//! when a stonewalled job follows others). Every option without a row in
//! [`super::settings::OPTIONS`] is refused by name.

use super::error::FioError;
use super::parse::{JobText, Setting};
use super::settings::{find, refusal_reason, JobSettings};

/// One job as written (before its `numjobs` clones are made).
#[derive(Debug, Clone, PartialEq)]
pub struct FioJob {
    pub name: String,
    /// Reporting group (fio's `groupid`), from 0.
    pub group: u32,
    pub settings: JobSettings,
    /// The global settings it took, as written (fio's JSON "global options").
    pub global_options: Vec<(String, String)>,
    /// Its own settings, as written (fio's JSON "job options").
    pub job_options: Vec<(String, String)>,
}

/// Every job of an invocation, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Jobs {
    pub jobs: Vec<FioJob>,
}

impl Jobs {
    /// The jobs of `texts` (each a job file, or the command line's jobs),
    /// read in order: each text starts a new group.
    pub fn from_texts(texts: &[JobText]) -> Result<Jobs, FioError> {
        let mut jobs: Vec<FioJob> = Vec::new();
        let mut group = 0u32;
        for text in texts {
            let mut globals = JobSettings::default();
            let mut global_options: Vec<(String, String)> = Vec::new();
            let mut first_of_text = true;
            for section in &text.sections {
                if section.is_global() {
                    for s in &section.settings {
                        apply(&mut globals, s)?;
                        global_options.push(option_pair(s));
                    }
                    continue;
                }
                let mut settings = globals.clone();
                let mut job_options = Vec::new();
                for s in &section.settings {
                    apply(&mut settings, s)?;
                    job_options.push(option_pair(s));
                }
                // fio stonewalls the first job of every job file after the
                // first, and starts a group at a stonewall after others.
                if !jobs.is_empty() && (settings.stonewall || first_of_text) {
                    group += 1;
                }
                first_of_text = false;
                jobs.push(FioJob {
                    name: section.name.clone(),
                    group,
                    settings,
                    global_options: global_options.clone(),
                    job_options,
                });
            }
        }
        if jobs.is_empty() {
            return Err(FioError::Usage(
                "no job to run (accepted: job files, or job options after --name=NAME)".into(),
            ));
        }
        Ok(Jobs { jobs })
    }
}

fn option_pair(s: &Setting) -> (String, String) {
    // fio's JSON lists a bare flag with an empty value.
    (s.name.clone(), s.value.clone().unwrap_or_default())
}

/// Apply one setting, or refuse it naming the option.
fn apply(settings: &mut JobSettings, s: &Setting) -> Result<(), FioError> {
    let Some(row) = find(&s.name) else {
        return Err(FioError::Unsupported {
            origin: s.origin.clone(),
            option: s.name.clone(),
            reason: refusal_reason(&s.name).map(str::to_string),
        });
    };
    let value_error = |e: super::value::ValueError| {
        FioError::value(
            s.origin.clone(),
            s.name.clone(),
            s.value.clone().unwrap_or_default(),
            e.problem,
            e.accepted,
        )
    };
    let value = row.read(s.value.as_deref()).map_err(value_error)?;
    (row.apply)(settings, &value).map_err(value_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::parse::{parse_job_text, Expansion};
    use crate::fio::settings::Rw;
    use std::path::Path;

    fn jobs(texts: &[&str]) -> Result<Jobs, FioError> {
        let expansion = Expansion {
            var: &|_| None,
            keywords: [("$pagesize", 4096), ("$mb_memory", 1000), ("$ncpus", 2)],
        };
        let texts: Vec<JobText> = texts
            .iter()
            .map(|t| parse_job_text(t, Path::new("t.fio"), &expansion).unwrap())
            .collect();
        Jobs::from_texts(&texts)
    }

    #[test]
    fn globals_apply_to_the_jobs_below_them_and_add_up() {
        let j = jobs(&["[global]\nbs=8k\n[a]\n[global]\nrw=write\n[b]\nbs=16k\n"]).unwrap();
        let a = &j.jobs[0].settings;
        let b = &j.jobs[1].settings;
        assert_eq!((a.bs, a.rw), (8192, Rw::Read));
        assert_eq!((b.bs, b.rw), (16384, Rw::Write));
        assert_eq!(j.jobs[1].global_options.len(), 2);
        assert_eq!(
            j.jobs[1].job_options,
            [("bs".to_string(), "16k".to_string())]
        );
    }

    #[test]
    fn groups_start_at_stonewalls_after_other_jobs_and_at_each_file() {
        let j = jobs(&[
            "[a]\nstonewall\n[b]\n[c]\nstonewall\n",
            "[d]\n[e]\nwait_for_previous\n",
        ])
        .unwrap();
        let groups: Vec<u32> = j.jobs.iter().map(|j| j.group).collect();
        assert_eq!(groups, [0, 0, 1, 2, 3]);
    }

    #[test]
    fn every_unknown_option_is_refused_by_name_on_one_line() {
        let e = jobs(&["[a]\nrw=read\nverify=crc32c\n"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.fio:3: option 'verify' is not supported: tankbench fio does not verify data \
             (tankbench fio runs a subset of fio's options, listed by `tankbench fio --help` and in docs/fio.md)"
        );
        let e = jobs(&["[a]\nfoo=1\n"]).unwrap_err().to_string();
        assert!(
            e.starts_with("t.fio:2: option 'foo' is not supported (tankbench"),
            "{e}"
        );
        let e = jobs(&["[a]\nbs=1.5k\n"]).unwrap_err().to_string();
        assert!(
            e.starts_with("t.fio:2: bs=1.5k: fractions are not supported"),
            "{e}"
        );
        assert!(jobs(&["[global]\nbs=4k\n"]).is_err(), "no job");
    }
}
