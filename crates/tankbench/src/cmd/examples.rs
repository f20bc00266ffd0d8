//! An example for every command, as hyperfine and ripgrep show them: one
//! row per command path, each example a line to type and what it does.
//! [`with_examples`] puts them at the end of the command's `--help`
//! (`after_help`), and `tankbench man` turns the same text into the page's
//! EXAMPLES section, so the two cannot differ. A test keeps a row for
//! every command the definition has.

/// (command path below `tankbench`, "" for tankbench itself; its examples
/// as (what it does, the command line)).
type Row = (&'static str, &'static [(&'static str, &'static str)]);

const EXAMPLES: &[Row] = &[
    (
        "",
        &[
            ("a first look at the storage under the current directory", "tankbench quick"),
            (
                "sysbench's fileio test, line for line",
                "tankbench fileio --file-total-size=4G --file-test-mode=rndrw --file-fsync-all=on run",
            ),
            ("every layout of 24 disks of 8 TB, ranked", "tankbench plan --disks 24x8TB"),
        ],
    ),
    (
        "quick",
        &[
            ("five short workloads on a NAS mount", "tankbench quick /mnt/nas"),
            ("a larger file set, 60 s per workload, kept for compare", "tankbench quick --size 8G --time 60 --save"),
        ],
    ),
    (
        "fileio",
        &[
            ("make the files, run 4 KiB random reads and writes with an fsync after each write, remove them",
             "tankbench fileio --file-total-size=4G prepare"),
            ("", "tankbench fileio --file-total-size=4G --file-test-mode=rndrw --file-block-size=4K --threads=4 --file-fsync-all=on --time=240 run"),
            ("", "tankbench fileio --file-total-size=4G cleanup"),
        ],
    ),
    (
        "fio",
        &[
            ("a fio job file run with tankbench's engines, fio's report", "tankbench fio job.fio"),
            ("one job from the command line, 4 KiB random writes with an fsync after each",
             "tankbench fio --name=sync --rw=randwrite --bs=4k --size=1g --fsync=1 --time_based --runtime=30"),
            ("check the jobs, run nothing", "tankbench fio --parse-only job.fio"),
        ],
    ),
    (
        "plan",
        &[
            ("the reference question: 24 x 8 TB, a 10 GB log device, 2 x 10 GbE",
             "tankbench plan --disks 24x8TB --log 10GB --link 2x10G"),
            ("the same, drawn: usable space against sync writes/s",
             "tankbench plan --disks 24x8TB --log 10GB --link 2x10G --chart plan.svg"),
            ("how the usable space of one layout comes about", "tankbench plan --disks 24x8TB --explain 3xraidz2-8"),
            ("every layout's sync figures from one measured run of this box", "tankbench plan --disks 24x8TB --baseline result.json"),
        ],
    ),
    (
        "lab",
        &[
            ("build a lab, run a workload in it, tear it down",
             "sudo tankbench lab run examples/lab/ci-local.toml -- --file-test-mode=rndwr --time=10"),
        ],
    ),
    ("lab up", &[("build the lab and leave it running", "sudo tankbench lab up examples/lab/ci-local.toml")]),
    (
        "lab run",
        &[(
            "a fileio run in the lab (built first unless it is up)",
            "sudo tankbench lab run examples/lab/ci-local.toml -- --file-test-mode=rndwr --file-fsync-all=on --time=10",
        )],
    ),
    ("lab status", &[("the labs that are up", "tankbench lab status")]),
    (
        "lab down",
        &[
            ("tear down one lab", "sudo tankbench lab down ci-local"),
            ("tear down every lab and the leftovers of crashed runs", "sudo tankbench lab down --all"),
            ("the same under another lab root", "sudo tankbench lab down --all /var/tmp/my-labs"),
        ],
    ),
    (
        "lab matrix",
        &[("every combination of a matrix: build, run, tear down",
           "sudo tankbench lab matrix examples/lab/reference-local-matrix.toml")],
    ),
    (
        "lab predict",
        &[("the simulator's prediction of every cell beside the measurement",
           "tankbench lab predict examples/lab/reference-local-matrix.toml --systems cells")],
    ),
    (
        "lab pairs",
        &[("every pair of measured cells that differ in one thing: B predicted from A, beside B measured",
           "tankbench lab pairs examples/lab/reference-local-matrix.toml")],
    ),
    ("lab crash", &[("cut the power of a running lab and bring its pool back", "sudo tankbench lab crash ci-local")]),
    (
        "lab durability",
        &[("crash labs while durability write runs, three times a cell",
           "sudo tankbench lab durability examples/lab/durability.toml --crashes 3")],
    ),
    (
        "simulate",
        &[
            ("a fileio run predicted on a described NAS, with and without a log device",
             "tankbench simulate --system examples/systems/reference-nas.toml --log none,ssd-sata -- --file-test-mode=rndwr --file-fsync-all=on --time=10 run"),
            ("the system a measured run ran on, predicted", "tankbench simulate --system-from result.json -- --file-test-mode=rndrw run"),
            ("other layouts and log devices, each predicted from one measured run of this box",
             "tankbench simulate --baseline result.json --layout 1xraidz3-24,3xraidz2-8 --log none,ssd-sata -- --file-test-mode=rndrw --file-fsync-all=on run"),
        ],
    ),
    (
        "simulate matrix",
        &[
            ("the reference matrix: 3 layouts x log device x 2 links",
             "tankbench simulate matrix examples/systems/reference-matrix.toml"),
            ("kept for compare and report, and drawn as bars with intervals",
             "tankbench simulate matrix examples/systems/reference-matrix.toml --save --chart matrix.png"),
        ],
    ),
    (
        "simulate calibrate",
        &[("fit the server's CPU cost to measured runs and keep it as a profile",
           "tankbench simulate calibrate --system box.toml --fit server.cpu_us --save-profile box-profile.toml run1.json run2.json")],
    ),
    (
        "durability",
        &[("write on the storage under test, report to a recorder on another machine",
           "tankbench durability write /mnt/pool --recorder 10.0.0.2:7878 --key rec.key")],
    ),
    (
        "durability write",
        &[("write with an fsync before each report, to a journal on other storage",
           "tankbench durability write /mnt/pool --journal /var/tmp/j --commit fsync")],
    ),
    (
        "durability record",
        &[("keep the writer's reports on this machine", "tankbench durability record --listen 0.0.0.0:7878 --journal /var/tmp/j")],
    ),
    (
        "durability verify",
        &[("after the crash: did every acknowledged write survive?", "tankbench durability verify /mnt/pool --from /var/tmp/j")],
    ),
    (
        "slog",
        &[
            ("sync writes of 512 B to 1 MiB in a directory on the log device's pool",
             "tankbench slog /mnt/pool"),
            ("a raw device (destroys what it holds), drawn", "sudo tankbench slog /dev/nvme1n1 --destructive --chart slog.png"),
        ],
    ),
    (
        "probe",
        &[
            ("round trips of NFS calls against an export", "tankbench probe nfs://nas/export"),
            ("the same calls as system calls on a mounted directory", "tankbench probe /mnt/nas"),
        ],
    ),
    (
        "results",
        &[("the runs in the default store", "tankbench results")],
    ),
    (
        "results import",
        &[("fio and sysbench reports as runs, with labels",
           "tankbench results import --label layout=3xraidz2 fio.json sysbench.txt")],
    ),
    (
        "compare",
        &[("two configurations, metric by metric, with Welch's t-test",
           "tankbench compare layout=2xraidz2 layout=3xraidz2")],
    ),
    (
        "report",
        &[("the HTML page of the default store, in report.html", "tankbench report"),
          ("the grouped table as Markdown", "tankbench report --format markdown -o -")],
    ),
    (
        "chart",
        &[("reads, writes and fsyncs per second of every configuration", "tankbench chart operations -o ops.png"),
          ("the fsync latency percentiles", "tankbench chart latency --op fsync -o fsync.svg")],
    ),
    (
        "completions",
        &[("completion for bash", "tankbench completions bash > ~/.local/share/bash-completion/completions/tankbench")],
    ),
    (
        "man",
        &[("every page, for man", "tankbench man ~/.local/share/man/man1"),
          ("read the main page now", "tankbench man | man -l -")],
    ),
];

/// The heading the examples start with, in `--help` and (as a section
/// name) in the man pages.
pub(crate) const HEADING: &str = "Examples:";

/// The examples of `path` (`"simulate matrix"`) as help text: the heading,
/// then per example a `# what` line (when it says something) and the
/// command, indented.
pub(crate) fn text(path: &str) -> Option<String> {
    let (_, rows) = EXAMPLES.iter().find(|(p, _)| *p == path)?;
    let mut out = String::from(HEADING);
    for (what, line) in *rows {
        if !what.is_empty() {
            out.push_str(&format!("\n  # {what}"));
        }
        out.push_str(&format!("\n  {line}"));
    }
    Some(out)
}

/// `cmd` and every subcommand below it, each with its examples after its
/// help (after any text it already has there). `path` is `cmd`'s own.
pub(crate) fn with_examples(cmd: clap::Command, path: &str) -> clap::Command {
    let mut cmd = cmd;
    if let Some(examples) = text(path) {
        let after = match cmd.get_after_help() {
            Some(before) => format!("{before}\n\n{examples}"),
            None => examples,
        };
        cmd = cmd.after_help(after);
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let sub_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        cmd = cmd.mut_subcommand(&name, |sub| with_examples(sub, &sub_path));
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every visible command path of the definition, `""` for the top.
    fn paths(cmd: &clap::Command, path: &str, into: &mut Vec<String>) {
        into.push(path.to_string());
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let p = if path.is_empty() {
                sub.get_name().to_string()
            } else {
                format!("{path} {}", sub.get_name())
            };
            paths(sub, &p, into);
        }
    }

    #[test]
    fn every_command_has_examples_and_every_row_a_command() {
        let mut all = Vec::new();
        paths(&super::super::cli::command(), "", &mut all);
        // clap's own `help` subcommand is no command of ours.
        all.retain(|p| p != "help" && !p.ends_with(" help"));
        for p in &all {
            assert!(text(p).is_some(), "no examples for '{p}'");
        }
        for (p, rows) in EXAMPLES {
            assert!(all.iter().any(|a| a == p), "examples for no command: '{p}'");
            assert!(!rows.is_empty(), "'{p}'");
            for (_, line) in *rows {
                let words: Vec<&str> = line.split_whitespace().collect();
                let at = usize::from(words.first() == Some(&"sudo"));
                assert_eq!(words.get(at), Some(&"tankbench"), "{line}");
            }
        }
    }

    /// An example that the command line refuses teaches the wrong thing:
    /// each parses (up to a shell's `>` or `|`). fio's words are fio's job
    /// language, read by `fileio::fio` and not by clap: each is checked by
    /// that reader (nothing runs), `job.fio` standing for a job file of one
    /// job.
    #[test]
    fn every_example_is_taken_by_the_command_line() {
        let dir = std::env::temp_dir().join(format!("tb-examples-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let job = dir.join("job.fio");
        std::fs::write(&job, "[j]\nrw=write\nbs=4k\nsize=64k\n").unwrap();
        for (path, rows) in EXAMPLES {
            if *path == "fio" {
                for (_, line) in *rows {
                    let words: Vec<String> = line
                        .split_whitespace()
                        .skip(2)
                        .map(|w| match w {
                            "job.fio" => job.display().to_string(),
                            w => w.to_string(),
                        })
                        .collect();
                    let expansion = fileio::fio::parse::Expansion::of_this_machine();
                    let checked = fileio::fio::command::check(&words, &expansion);
                    assert!(checked.is_ok(), "{line}: {:?}", checked.err());
                }
                continue;
            }
            for (_, line) in *rows {
                let words: Vec<&str> = line
                    .split_whitespace()
                    .skip_while(|w| *w == "sudo")
                    .take_while(|w| !matches!(*w, ">" | "|"))
                    .collect();
                let parsed = super::super::cli::command().try_get_matches_from(&words);
                assert!(parsed.is_ok(), "{line}: {}", parsed.unwrap_err());
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_examples_end_the_help_after_what_was_there() {
        let cmd = super::super::cli::command();
        let top = cmd.get_after_help().unwrap().to_string();
        assert!(top.starts_with("`tankbench --test=fileio"), "{top}");
        assert!(top.contains("\n\nExamples:\n  # a first look"), "{top}");
        let matrix = cmd
            .find_subcommand("simulate")
            .and_then(|s| s.find_subcommand("matrix"))
            .unwrap();
        let text = matrix.get_after_help().unwrap().to_string();
        assert!(
            text.contains("  tankbench simulate matrix examples/systems/reference-matrix.toml\n"),
            "{text}"
        );
    }
}
