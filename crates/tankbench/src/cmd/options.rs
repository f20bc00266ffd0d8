//! Option values more than one command takes, checked the same way
//! everywhere: a refusal is one line naming the option, the value as typed
//! and what the option accepts (`--max-cells=0: accepted: a whole number
//! from 1 up`), and the model options `simulate` and `simulate matrix` share.

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use clap::Args;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

/// A clap value parser that reads a value with `parse` and refuses it in
/// the project's one-line form. clap's own refusal of a number ("invalid
/// digit found in string") says what is wrong with the text, not what the
/// option takes.
#[derive(Clone)]
pub(crate) struct Accepting<T> {
    accepted: &'static str,
    parse: fn(&str) -> Option<T>,
}

impl<T> Accepting<T> {
    pub(crate) const fn new(accepted: &'static str, parse: fn(&str) -> Option<T>) -> Self {
        Accepting { accepted, parse }
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Accepting<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        value.to_str().and_then(self.parse).ok_or_else(|| {
            let option = arg
                .and_then(clap::Arg::get_long)
                .map_or_else(|| "the value".to_string(), |long| format!("--{long}"));
            clap::Error::raw(
                ErrorKind::ValueValidation,
                format!(
                    "{option}={}: accepted: {}\n",
                    value.to_string_lossy(),
                    self.accepted
                ),
            )
            .with_cmd(cmd)
        })
    }
}

/// A count (`--max-sim-events`, `--max-cells`): a whole number from 1 up.
pub(crate) fn count() -> Accepting<u64> {
    Accepting::new("a whole number from 1 up", |text| {
        text.trim().parse::<u64>().ok().filter(|&n| n > 0)
    })
}

/// The calibration and the budgets of a prediction, the same for
/// `simulate` and `simulate matrix`.
#[derive(Debug, Args)]
pub(crate) struct ModelOptions {
    /// A calibration profile (`simulate calibrate --save-profile`) applied to the system.
    #[arg(long, value_name = "PROFILE.toml")]
    pub(crate) profile: Option<PathBuf>,
    /// Most fileio events to simulate.
    #[arg(long, value_name = "N", value_parser = count(),
          help = format!("Most fileio events to simulate [default: {} for one run, {} for a whole matrix]",
                         sim::Budget::default().events, sim::limits::DEFAULT_MATRIX_EVENTS))]
    pub(crate) max_sim_events: Option<u64>,
    /// Most cells a matrix may have.
    #[arg(long, value_name = "N", value_parser = count(),
          default_value_t = sim::limits::DEFAULT_MAX_CELLS)]
    pub(crate) max_cells: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, Command};

    fn parse(words: &[&str]) -> Result<u64, String> {
        let cmd = Command::new("t").arg(
            Arg::new("max-cells")
                .long("max-cells")
                .value_parser(count()),
        );
        cmd.try_get_matches_from(std::iter::once("t").chain(words.iter().copied()))
            .map(|m| *m.get_one::<u64>("max-cells").expect("given"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_refused_count_names_the_option_the_value_and_what_it_takes() {
        assert_eq!(parse(&["--max-cells", "12"]), Ok(12));
        for bad in ["0", "x", "-1", "1.5"] {
            let e = parse(&[&format!("--max-cells={bad}")]).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "error: --max-cells={bad}: accepted: a whole number from 1 up"
                )),
                "{e}"
            );
        }
    }
}

/// An on/off option (`--intervals=on|off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Switch {
    On,
    Off,
}

/// `--samples`: an interval needs at least two.
pub(super) fn at_least_two_samples() -> Accepting<usize> {
    Accepting::new("2 or more", |text| {
        text.trim().parse::<usize>().ok().filter(|&n| n >= 2)
    })
}

/// What every duration option accepts, for its refusal and its `--help`.
pub(crate) use ::fileio::duration::SYNTAX as DURATION_SYNTAX;

/// The one duration syntax (`fileio::duration`).
pub(crate) use ::fileio::duration::parse as duration;

/// [`duration`] with the option named in the refusal.
pub(crate) fn parse_duration(option: &str, text: &str) -> anyhow::Result<Duration> {
    duration(text).ok_or_else(|| {
        anyhow::anyhow!("{option}={text}: not a duration (accepted: {DURATION_SYNTAX})")
    })
}

/// `quick --time`: whole seconds from 1 to 3600, in the duration syntax.
pub(crate) fn quick_seconds() -> Accepting<u64> {
    Accepting::new(
        "1 to 3600 seconds per workload, as 20, 20s, 2m or 1h",
        |text| {
            let d = duration(text)?;
            (d.subsec_nanos() == 0 && (1..=3600).contains(&d.as_secs())).then_some(d.as_secs())
        },
    )
}

#[cfg(test)]
mod duration_tests {
    use super::*;

    #[test]
    fn one_syntax_reads_every_duration() {
        assert_eq!(duration("5"), Some(Duration::from_secs(5)));
        assert_eq!(duration("5s"), Some(Duration::from_secs(5)));
        assert_eq!(duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(duration("1h"), Some(Duration::from_secs(3600)));
        for bad in ["", "s", "-1s", "2d", "inf", "1e300m"] {
            assert_eq!(duration(bad), None, "{bad}");
        }
        let e = parse_duration("--t", "2d").unwrap_err().to_string();
        assert!(
            e.starts_with("--t=2d: not a duration (accepted: a number"),
            "{e}"
        );
    }
}
