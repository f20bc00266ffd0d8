//! The command line's help, versions, completions and man pages, all made
//! from one clap definition: every command found by walking `--help` answers
//! `--help` (exit 0, a usage line) and `-V`; the completion scripts load in
//! their shells; the man pages render with man-db. Bad input is one line and
//! exit status 1.

mod common;

use common::{refused_naming, scratch, tankbench_bin, tb, Run};
use std::path::Path;
use std::process::Command;

/// The subcommand names a help text lists under `Commands:` (`help` aside).
fn listed_commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every command path below `tankbench` (`["simulate", "matrix"]`), found
/// by reading the help texts, so a command added later is tested too.
fn every_command() -> Vec<Vec<String>> {
    let d = scratch();
    let mut found = Vec::new();
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let r = tb(d.path(), &args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        // quick and fileio have no subcommands: no Commands list.
        for name in listed_commands(&r.stdout) {
            let mut sub = path.clone();
            sub.push(name);
            todo.push(sub.clone());
            found.push(sub);
        }
    }
    found.sort();
    found
}

#[test]
fn every_command_answers_help_with_a_usage_line_and_exit_0() {
    let d = scratch();
    let commands = every_command();
    // The walk itself must have found the nested commands.
    for expected in [
        &["simulate", "matrix"][..],
        &["simulate", "calibrate"],
        &["durability", "verify"],
        &["results", "import"],
        &["lab", "predict"],
        &["quick"],
        &["fileio"],
        &["completions"],
        &["man"],
    ] {
        assert!(
            commands.iter().any(|c| c == expected),
            "{expected:?} not listed: {commands:?}"
        );
    }
    assert!(!commands.iter().any(|c| c.contains(&"__daemon".to_string())));
    for path in &commands {
        // fileio keeps sysbench 1.0.20's parser, which knows --help but not -h.
        let flags: &[&str] = if path == &["fileio"] {
            &["--help"]
        } else {
            &["--help", "-h"]
        };
        for &help in flags {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push(help);
            let r = tb(d.path(), &args);
            assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
            assert!(
                r.stdout
                    .lines()
                    .any(|l| l.trim_start().starts_with("Usage:")),
                "{args:?}: no usage line:\n{}",
                r.stdout
            );
            assert!(r.stderr.is_empty(), "{args:?}: {}", r.stderr);
        }
    }
    // Every command ends its help with examples (issue 38, item 13);
    // fileio's --help is sysbench's own text, line for line: its examples
    // are in its man page.
    for path in commands.iter().filter(|p| *p != &["fileio"]) {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = tb(d.path(), &args).stdout;
        let examples = help
            .split_once("\nExamples:\n")
            .map(|(_, e)| e)
            .unwrap_or_else(|| panic!("{args:?}: no examples:\n{help}"));
        let name = format!("tankbench {}", path.join(" "));
        assert!(
            examples.lines().any(|l| l.trim_start().starts_with(&name)
                || l.trim_start().starts_with(&format!("sudo {name}"))),
            "{args:?}: no example of {name}:\n{examples}"
        );
    }
    // `help COMMAND` is the command's own help.
    let r = tb(d.path(), &["help", "simulate", "matrix"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("Usage: tankbench simulate matrix"),
        "{}",
        r.stdout
    );
}

#[test]
fn every_command_prints_the_version() {
    let d = scratch();
    let version = env!("CARGO_PKG_VERSION");
    let top = tb(d.path(), &["-V"]);
    assert_eq!(
        (top.code, top.stdout.as_str()),
        (0, format!("tankbench {version}\n").as_str())
    );
    for path in every_command() {
        // fileio keeps sysbench's parser, which has --version but no -V.
        if path == ["fileio"] {
            continue;
        }
        for flag in ["-V", "--version"] {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push(flag);
            let r = tb(d.path(), &args);
            assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
            let line = r.stdout.trim_end();
            assert_eq!(
                line,
                format!("tankbench-{} {version}", path.join("-")),
                "{args:?}"
            );
        }
    }
    let r = tb(d.path(), &["fileio", "--version"]);
    assert!(
        r.stdout.contains(&format!("tankbench {version}")),
        "{}",
        r.stdout
    );
}

/// Refused: exit 1, one line on stderr containing every part, nothing on stdout.
#[track_caller]
fn refused(r: &Run, parts: &[&str]) {
    refused_naming(r, parts);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

#[test]
fn usage_errors_are_one_line_naming_the_option_with_exit_1() {
    let d = scratch();
    let cases: [(&[&str], &[&str]); 9] = [
        (
            &["frobnicate"],
            &["'frobnicate'", "accepted: quick, fileio, fio, plan"],
        ),
        (
            &["lab", "frobnicate"],
            &["lab: ", "'frobnicate'", "up, run, status"],
        ),
        (
            &["simulate", "--system", "s.toml", "--bogus", "--", "run"],
            &["simulate: ", "'--bogus'", "--system", "--layout"],
        ),
        (
            &[
                "simulate",
                "--system",
                "s.toml",
                "--max-cells=0",
                "--",
                "run",
            ],
            &["--max-cells=0: accepted: a whole number from 1 up"],
        ),
        (
            &[
                "simulate",
                "--system",
                "s.toml",
                "--intervals=maybe",
                "--",
                "run",
            ],
            &["--intervals", "'maybe'", "on, off"],
        ),
        (
            &["simulate", "matrix"],
            &["simulate matrix: ", "<MATRIX.toml>"],
        ),
        (
            &["durability", "write", "d", "--colour"],
            &["durability write: ", "'--colour'", "--journal"],
        ),
        (
            &["completions", "tcsh"],
            &[
                "completions: ",
                "'tcsh'",
                "bash, elvish, fish, powershell, zsh",
            ],
        ),
        (
            &["report", "--format=pdf"],
            &["report: ", "'pdf'", "html, table, markdown, csv"],
        ),
    ];
    for (args, parts) in cases {
        let r = tb(d.path(), args);
        refused(&r, parts);
    }
    // Nothing was made by any of them.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn without_a_command_the_help_is_shown_and_the_exit_status_is_1() {
    let d = scratch();
    for args in [&[][..], &["simulate"], &["durability"], &["lab"]] {
        let r = tb(d.path(), args);
        assert_eq!(r.code, 1, "{args:?}");
        assert!(
            r.stderr.contains("Usage: tankbench"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn the_bash_completion_loads_and_completes_commands_and_options() {
    let bin = tankbench_bin();
    let script = format!(
        "source <({bin} completions bash) && complete -p tankbench && \
         COMP_WORDS=(tankbench simulate --sy) COMP_CWORD=2 && _tankbench tankbench --sy simulate && \
         echo \"options: ${{COMPREPLY[*]}}\" && \
         COMP_WORDS=(tankbench sim) COMP_CWORD=1 && _tankbench tankbench sim tankbench && \
         echo \"commands: ${{COMPREPLY[*]}}\" && \
         COMP_WORDS=(tankbench quick --ti) COMP_CWORD=2 && _tankbench tankbench --ti quick && \
         echo \"quick: ${{COMPREPLY[*]}}\"",
        bin = bin.display()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("-F _tankbench tankbench"), "{stdout}");
    assert!(stdout.contains("options: --system"), "{stdout}");
    assert!(stdout.contains("commands: simulate"), "{stdout}");
    assert!(stdout.contains("quick: --time"), "{stdout}");
}

/// What bash completes after `WORDS` (the last word being completed).
fn bash_completes(words: &[&str]) -> Vec<String> {
    let bin = tankbench_bin();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let script = format!(
        "source <({bin} completions bash) && COMP_WORDS=({}) && COMP_CWORD={cword} && \
         _tankbench tankbench '{}' '{prev}' && echo \"${{COMPREPLY[*]}}\"",
        quoted.join(" "),
        words[cword],
        bin = bin.display()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Options that take one of a list complete to the list, as the libraries'
/// tables have it (issue 38, item 13).
#[test]
fn the_bash_completion_offers_the_values_an_option_takes() {
    let cases: [(&[&str], &[&str]); 9] = [
        (
            &["tankbench", "plan", "--class", ""],
            &[
                "hdd-7200",
                "hdd-5400",
                "ssd-sata",
                "ssd-sata-noplp",
                "nvme",
                "nvme-noplp",
            ],
        ),
        (
            &["tankbench", "plan", "--log-class", "nv"],
            &["nvme", "nvme-noplp"],
        ),
        (
            &["tankbench", "plan", "--protocol", ""],
            &["nfs", "iscsi", "smb", "local"],
        ),
        (
            &["tankbench", "plan", "--workload", ""],
            &["sync-4k", "sequential", "vm"],
        ),
        (
            &["tankbench", "plan", "--rules", "zol"],
            &["zol-0.7", "zol-0.6.4"],
        ),
        (
            &["tankbench", "simulate", "--client", ""],
            &[
                "local",
                "linux-nfs",
                "esxi-nfs",
                "esxi-6.5-nfs",
                "iscsi",
                "smb",
            ],
        ),
        (
            &["tankbench", "fileio", "--file-test-mode", ""],
            &["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"],
        ),
        (
            &["tankbench", "durability", "write", "--commit", ""],
            &["fsync", "fdatasync", "osync", "odsync"],
        ),
        (&["tankbench", "chart", "op"], &["operations"]),
    ];
    for (words, values) in cases {
        assert_eq!(bash_completes(words), values, "{words:?}");
    }
}

#[test]
fn every_shell_gets_a_script_naming_the_commands() {
    let d = scratch();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = tb(d.path(), &["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        for word in ["tankbench", "simulate", "calibrate", "file-test-mode"] {
            assert!(r.stdout.contains(word), "{shell}: no {word}");
        }
    }
}

#[test]
fn the_zsh_completion_defines_its_function() {
    let zsh = testkit::require!("zsh");
    let d = scratch();
    let script = d.path().join("_tankbench");
    std::fs::write(&script, tb(d.path(), &["completions", "zsh"]).stdout).unwrap();
    let out = Command::new(zsh)
        .arg("-fc")
        .arg(format!(
            "autoload -U compinit && compinit -u -d {} && source {} && print -r -- $_comps[tankbench]",
            d.path().join("zcompdump").display(),
            script.display()
        ))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), "_tankbench");
}

#[test]
fn the_fish_completion_completes_commands_and_options() {
    let fish = testkit::require!("fish");
    let d = scratch();
    let script = d.path().join("tankbench.fish");
    std::fs::write(&script, tb(d.path(), &["completions", "fish"]).stdout).unwrap();
    let out = Command::new(fish)
        .arg("--no-config")
        .arg("-c")
        .arg(format!(
            "source {}; complete -C'tankbench sim'; complete -C'tankbench simulate --sy'",
            script.display()
        ))
        .env("HOME", d.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("simulate\t")),
        "{stdout}"
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("--system\t")),
        "{stdout}"
    );
}

/// `man -l PAGE` as plain text.
fn rendered(man: &Path, page: &Path) -> String {
    let out = Command::new(man)
        .arg("-l")
        .arg(page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .env("MAN_KEEP_FORMATTING", "")
        .output()
        .expect("man");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_man_pages_render_with_man_db() {
    let man = testkit::require!("man");
    let d = scratch();
    let dir = d.path().join("man1");
    let r = tb(d.path(), &["man", dir.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (page, says) in [
        ("tankbench.1", "tankbench-simulate(1)"),
        ("tankbench-plan.1", "--disks"),
        // quick is part of the one command line: its page lists its options.
        ("tankbench-quick.1", "--size"),
        ("tankbench-simulate-matrix.1", "--max-cells"),
        ("tankbench-durability-verify.1", "--from"),
        // fileio's page lists its options from the front end's own table.
        ("tankbench-fileio.1", "--file-test-mode"),
    ] {
        let text = rendered(&man, &dir.join(page));
        let name = page.trim_end_matches(".1");
        assert!(text.contains(name), "{page}:\n{text}");
        assert!(text.contains(says), "{page}: no {says}:\n{text}");
    }
    // Every page ends with examples and the exit status.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let page = entry.unwrap().path();
        let text = rendered(&man, &page);
        for section in ["\nEXAMPLES\n", "\nEXIT STATUS\n"] {
            assert!(
                text.contains(section),
                "{}: no {section}:\n{text}",
                page.display()
            );
        }
        let name = page
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .replace('-', " ");
        assert!(
            text.contains(&format!("    {name}")) || text.contains(&format!("sudo {name}")),
            "{}: no example of {name}",
            page.display()
        );
    }
    // man justifies lines: compare the words.
    let slog = rendered(&man, &dir.join("tankbench-slog.1"))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        slog.contains("EXIT STATUS 0 Success. 1 An error: bad input")
            && slog.contains("128 + N: stopped by signal N"),
        "{slog}"
    );
    // One page per command and subcommand, none for the hidden daemon.
    let pages = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(pages, every_command().len() + 1);
    assert!(!dir.join("tankbench-lab-__daemon.1").exists());
    // Without DIR, the main page on stdout.
    let r = tb(d.path(), &["man"]);
    assert!(r.stdout.starts_with(".ie"), "{}", r.stdout);
}

#[test]
fn man_replaces_its_own_pages_and_nothing_else() {
    let d = scratch();
    let dir = d.path().join("man1");
    let dir_text = dir.to_str().unwrap();
    assert_eq!(tb(d.path(), &["man", dir_text]).code, 0);
    // Written again over its own pages: fine.
    assert_eq!(tb(d.path(), &["man", dir_text]).code, 0);
    // A file of the same name that is not that page is kept, and no page
    // is written.
    let foreign = dir.join("tankbench-plan.1");
    std::fs::write(&foreign, "someone's notes\n").unwrap();
    let chart = dir.join("tankbench-chart.1");
    std::fs::remove_file(&chart).unwrap();
    let r = tb(d.path(), &["man", dir_text]);
    refused(&r, &["tankbench-plan.1", "refusing to replace"]);
    assert_eq!(
        std::fs::read_to_string(&foreign).unwrap(),
        "someone's notes\n"
    );
    assert!(!chart.exists(), "a page was written after a refusal");
    // DIR that is a file.
    let r = tb(d.path(), &["man", foreign.to_str().unwrap()]);
    refused(&r, &["not a directory"]);
}

#[test]
fn every_size_option_says_what_its_units_mean() {
    // G is GiB for sysbench and 10^9 bytes on a disk label: each size
    // option's help says which it takes.
    let d = scratch();
    let cases: [(&[&str], &[&str]); 3] = [
        (
            &["plan", "--help"],
            &["--log", "--ram", "--recordsize", "--disks"],
        ),
        (&["quick", "--help"], &["--size"]),
        (&["slog", "--help"], &["--min-size", "--max-size"]),
    ];
    for (args, options) in cases {
        let r = tb(d.path(), args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        for option in options {
            // The option's paragraph: from its line to the next option's.
            let start = r
                .stdout
                .find(&format!("      {option} "))
                .unwrap_or_else(|| panic!("{args:?}: no {option}:\n{}", r.stdout));
            let rest = &r.stdout[start + 6..];
            let end = rest[2..].find("\n  -").map_or(rest.len(), |i| i + 2);
            let paragraph = &rest[..end];
            assert!(
                paragraph.contains("GiB")
                    || paragraph.contains("KiB")
                    || paragraph.contains("MiB")
                    || paragraph.contains("10^9")
                    || paragraph.contains("IDEMA"),
                "{args:?} {option} does not say its units:\n{paragraph}"
            );
        }
    }
}
