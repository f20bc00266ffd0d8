//! `tankbench completions SHELL`: a completion script for the shell, made by
//! clap_complete from the same definition the command line is parsed with.

use clap::Args;
use clap_complete::Shell;

/// Print a shell completion script for tankbench.
///
/// bash: `source <(tankbench completions bash)`, or save it as
/// /usr/share/bash-completion/completions/tankbench. zsh: save it as
/// `_tankbench` in a directory of `$fpath`. fish: save it as
/// ~/.config/fish/completions/tankbench.fish.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum, value_name = "SHELL")]
    shell: Shell,
}

/// The script for `definition`, tankbench's whole command line.
pub(crate) fn run(a: &CompletionsArgs, mut definition: clap::Command) -> anyhow::Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut definition, "tankbench", &mut script);
    super::write_stdout(&script)?;
    Ok(0)
}
