//! Options whose values come from a library's table of names (disk
//! classes, rule sets, chart kinds, ...): clap is given the table's names as
//! possible values, so `--help`, the man pages and the shell completions
//! list exactly what the library accepts, and nobody keeps a second list.
//!
//! Two ways to read the value:
//! - [`typed`]: the library's lookup of a name gives the value clap returns;
//!   a refusal is one line naming the option and the accepted names.
//! - [`offered`]: the text goes through as typed, for options whose library
//!   parser takes more than the names (aliases, any case, a comma list of
//!   matrix values) and refuses in its own words, naming the option.

use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use std::ffi::OsStr;

/// A value parser that offers `values` and reads a value with `parse`.
#[derive(Clone)]
pub(crate) struct Choice<T> {
    values: Vec<PossibleValue>,
    parse: fn(&str) -> Option<T>,
}

/// The possible values of a library table: each entry's name, with its
/// description as the help completions and `--help` show beside it.
pub(crate) fn table<K: Copy>(
    all: &[K],
    name: fn(K) -> &'static str,
    describe: fn(K) -> &'static str,
) -> Vec<PossibleValue> {
    all.iter()
        .map(|&k| PossibleValue::new(name(k)).help(describe(k)))
        .collect()
}

/// The possible values of a table without descriptions.
pub(crate) fn names<K: Copy>(all: &[K], name: fn(K) -> &'static str) -> Vec<PossibleValue> {
    all.iter().map(|&k| PossibleValue::new(name(k))).collect()
}

/// Offer `values` and read the value with `parse` (the library's lookup).
pub(crate) fn typed<T>(values: Vec<PossibleValue>, parse: fn(&str) -> Option<T>) -> Choice<T> {
    Choice { values, parse }
}

/// Offer `values` and take the text as typed, for the library's own parser.
pub(crate) fn offered(values: Vec<PossibleValue>) -> Choice<String> {
    Choice {
        values,
        parse: |text| Some(text.to_string()),
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Choice<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        value.to_str().and_then(self.parse).ok_or_else(|| {
            let typed = value.to_string_lossy();
            let what = match arg {
                Some(a) if a.get_long().is_some() => {
                    format!("--{}={typed}", a.get_long().unwrap_or_default())
                }
                Some(a) => format!(
                    "{} '{typed}'",
                    a.get_value_names()
                        .and_then(|n| n.first())
                        .map_or_else(|| a.get_id().to_string(), ToString::to_string)
                ),
                None => format!("'{typed}'"),
            };
            let accepted: Vec<&str> = self.values.iter().map(PossibleValue::get_name).collect();
            clap::Error::raw(
                ErrorKind::InvalidValue,
                format!("{what}: accepted: {}\n", accepted.join(", ")),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.values.iter().cloned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, Command};

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Colour {
        Red,
        Blue,
    }

    fn colour_name(c: Colour) -> &'static str {
        match c {
            Colour::Red => "red",
            Colour::Blue => "blue",
        }
    }

    const ALL: [Colour; 2] = [Colour::Red, Colour::Blue];

    fn command() -> Command {
        Command::new("t")
            .arg(
                Arg::new("colour")
                    .long("colour")
                    .value_parser(typed(names(&ALL, colour_name), |s| {
                        ALL.into_iter().find(|c| colour_name(*c) == s)
                    })),
            )
            .arg(
                Arg::new("shade")
                    .long("shade")
                    .value_parser(offered(names(&ALL, colour_name))),
            )
    }

    #[test]
    fn a_typed_choice_reads_the_table_and_refuses_in_one_line() {
        let m = command()
            .try_get_matches_from(["t", "--colour", "blue"])
            .unwrap();
        assert_eq!(m.get_one::<Colour>("colour"), Some(&Colour::Blue));
        let e = command()
            .try_get_matches_from(["t", "--colour=green"])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("error: --colour=green: accepted: red, blue\n"),
            "{e}"
        );
    }

    #[test]
    fn an_offered_choice_lists_the_names_and_passes_any_text_on() {
        let cmd = command();
        let shade = cmd.get_arguments().find(|a| a.get_id() == "shade").unwrap();
        let listed: Vec<String> = shade
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(listed, ["red", "blue"]);
        // An alias or another case is the library parser's to judge.
        let m = cmd.try_get_matches_from(["t", "--shade", "RED"]).unwrap();
        assert_eq!(
            m.get_one::<String>("shade").map(String::as_str),
            Some("RED")
        );
    }
}
