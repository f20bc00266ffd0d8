//! The first stage of fio's job language: job files and command-line words
//! to sections of settings as written (names and value texts, each with
//! where it was written). What the settings mean is the second stage
//! ([`super::settings`], [`super::job`]).
//!
//! The rules are fio 3.33's (`__parse_jobs_ini` in init.c, `strip_blank_end`
//! in parse.c, `fio_options_parse` in options.c, checked with `fio
//! --showcmd`): a line whose first visible character is `;` or `#` is a
//! comment, and a `;` or `#` anywhere cuts the rest of a line (a file name
//! cannot hold one); `[name]` opens a section, and a section whose name
//! starts with `global` holds defaults for the sections after it in the same
//! file; `include FILE` pulls in the settings of FILE (relative to the
//! including file when it is not found as given), which may not open
//! sections; `${VAR}` is the environment variable VAR (empty when unset);
//! `$pagesize`, `$mb_memory` and `$ncpus` are the machine's. On the command
//! line, `--name=X` opens a job and the options before the first one are
//! global; other words are job files.

use super::error::{FioError, Origin};
use std::path::{Path, PathBuf};

/// One `name=value` (or bare `name`) as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub name: String,
    /// `None` for a bare name.
    pub value: Option<String>,
    pub origin: Origin,
}

impl Setting {
    /// The setting as fio's report lists it, `name=value` or `name`.
    pub fn text(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.name),
            None => self.name.clone(),
        }
    }
}

/// A `[name]` section (or a command-line `--name=`), with its settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub settings: Vec<Setting>,
    pub origin: Origin,
}

impl Section {
    /// fio takes any section whose name starts with `global` as global
    /// (`strncmp(name, "global", 6)`).
    pub fn is_global(&self) -> bool {
        self.name.starts_with("global")
    }
}

/// One job file, or the jobs of the command line: a reporting group starts
/// with each (fio stonewalls between job files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobText {
    pub sections: Vec<Section>,
}

/// How `${VAR}` and fio's keywords are expanded.
pub struct Expansion<'a> {
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// (`$pagesize`, `$mb_memory`, `$ncpus`).
    pub keywords: [(&'static str, u64); 3],
}

impl Expansion<'_> {
    /// The process's environment and this machine's keywords.
    pub fn of_this_machine() -> Expansion<'static> {
        Expansion {
            var: &|name| std::env::var(name).ok(),
            keywords: machine_keywords(),
        }
    }

    /// `${VAR}` replaced by its value and the keywords by theirs.
    pub fn expand(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            match after.find('}') {
                Some(end) => {
                    out.push_str(&(self.var)(&after[..end]).unwrap_or_default());
                    rest = &after[end + 1..];
                }
                None => {
                    out.push_str(&rest[start..]);
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        // Longest first: none is a prefix of another, but keep it safe.
        for (word, value) in self.keywords {
            out = out.replace(word, &value.to_string());
        }
        out
    }
}

/// `$pagesize`, `$mb_memory`, `$ncpus` as fio computes them (sysconf).
fn machine_keywords() -> [(&'static str, u64); 3] {
    // SAFETY: sysconf reads system constants.
    let (page, pages, cpus) = unsafe {
        (
            libc::sysconf(libc::_SC_PAGESIZE),
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_NPROCESSORS_ONLN),
        )
    };
    let page = u64::try_from(page).unwrap_or(4096);
    let pages = u64::try_from(pages).unwrap_or(0);
    [
        ("$pagesize", page),
        ("$mb_memory", page.saturating_mul(pages) >> 20),
        ("$ncpus", u64::try_from(cpus).unwrap_or(1)),
    ]
}

/// Includes nest at most this deep (a file including itself would not end).
const MAX_INCLUDE_DEPTH: usize = 16;

/// A line without its comment and the blanks around it (fio's
/// `strip_blank_front` and `strip_blank_end`).
fn strip(line: &str) -> &str {
    let line = line.trim_start();
    let line = match line.find([';', '#']) {
        Some(i) => &line[..i],
        None => line,
    };
    line.trim_end()
}

/// Read a job file.
pub fn read_job_file(path: &Path, expansion: &Expansion) -> Result<JobText, FioError> {
    let text = read_text(path)?;
    parse_job_text(&text, path, expansion)
}

fn read_text(path: &Path) -> Result<String, FioError> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let unreadable = |reason: String| FioError::Unreadable {
        path: path.to_path_buf(),
        reason,
    };
    // O_NONBLOCK: a FIFO named like a job file must not block the open.
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| unreadable(e.to_string()))?;
    let meta = f.metadata().map_err(|e| unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(unreadable(
            "not a regular file (accepted: a job file)".to_string(),
        ));
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)
        .map_err(|e| unreadable(e.to_string()))?;
    String::from_utf8(bytes).map_err(|_| unreadable("not UTF-8 text".to_string()))
}

/// The sections of one job file's text; `path` names it in messages and
/// anchors relative includes.
pub fn parse_job_text(text: &str, path: &Path, expansion: &Expansion) -> Result<JobText, FioError> {
    let mut sections: Vec<Section> = Vec::new();
    let mut sink = SectionSink {
        sections: &mut sections,
    };
    parse_lines(text, path, expansion, 0, &mut sink)?;
    Ok(JobText { sections })
}

/// Where the settings of the lines go: the file's sections (top level) or
/// the section that included a file.
struct SectionSink<'a> {
    sections: &'a mut Vec<Section>,
}

fn parse_lines(
    text: &str,
    path: &Path,
    expansion: &Expansion,
    depth: usize,
    sink: &mut SectionSink,
) -> Result<(), FioError> {
    for (n, raw) in text.lines().enumerate() {
        let origin = Origin {
            file: Some(path.to_path_buf()),
            line: n + 1,
        };
        let line = strip(raw);
        if line.is_empty() {
            continue;
        }
        if let Some(inner) = line.strip_prefix('[') {
            if depth > 0 {
                return Err(FioError::Syntax {
                    origin,
                    message: "an included file cannot open a section (fio: no new sections in included files)".into(),
                });
            }
            let Some(name) = inner.strip_suffix(']') else {
                return Err(FioError::Syntax {
                    origin,
                    message: format!("'{line}' opens a section but does not end with ']'"),
                });
            };
            if name.is_empty() {
                return Err(FioError::Syntax {
                    origin,
                    message: "a section needs a name: [name]".into(),
                });
            }
            sink.sections.push(Section {
                name: name.to_string(),
                settings: Vec::new(),
                origin,
            });
            continue;
        }
        if let Some(rest) = line.strip_prefix("include") {
            if rest.starts_with(char::is_whitespace) {
                include(rest.trim(), path, &origin, expansion, depth, sink)?;
                continue;
            }
        }
        let Some(section) = sink.sections.last_mut() else {
            return Err(FioError::Syntax {
                origin,
                message: format!("'{line}' stands outside of a [section] (accepted: settings after a [name] line)"),
            });
        };
        let expanded = expansion.expand(line);
        let setting = match expanded.split_once('=') {
            Some((name, value)) => Setting {
                name: name.trim_end().to_string(),
                value: Some(value.to_string()),
                origin,
            },
            None => Setting {
                name: expanded.clone(),
                value: None,
                origin,
            },
        };
        section.settings.push(setting);
    }
    Ok(())
}

fn include(
    name: &str,
    from: &Path,
    origin: &Origin,
    expansion: &Expansion,
    depth: usize,
    sink: &mut SectionSink,
) -> Result<(), FioError> {
    if depth + 1 >= MAX_INCLUDE_DEPTH {
        return Err(FioError::Syntax {
            origin: origin.clone(),
            message: format!(
                "include {name}: includes nest deeper than {MAX_INCLUDE_DEPTH} (does a file include itself?)"
            ),
        });
    }
    if sink.sections.is_empty() {
        return Err(FioError::Syntax {
            origin: origin.clone(),
            message: format!("include {name} stands outside of a [section]"),
        });
    }
    // fio tries the name as given, then next to the including file.
    let given = PathBuf::from(name);
    let path = if given.exists() || given.is_absolute() {
        given
    } else {
        from.parent().map(|d| d.join(name)).unwrap_or(given)
    };
    let text = read_text(&path).map_err(|e| FioError::Syntax {
        origin: origin.clone(),
        message: format!("include {name}: {e}"),
    })?;
    parse_lines(&text, &path, expansion, depth + 1, sink)
}

/// How the report is printed (`--output-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// fio's text report (`normal`).
    Normal,
    Json,
    /// JSON with the latency bins (`json+`).
    JsonPlus,
}

/// The command line of `tankbench fio`: options of the command itself, job
/// files, and jobs written as options.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    pub format: OutputFormat,
    /// `--output=FILE`: the report goes to a new file.
    pub output: Option<PathBuf>,
    /// `--parse-only`: check the jobs, run nothing.
    pub parse_only: bool,
    pub help: bool,
    /// `--version` / `-V`.
    pub version: bool,
    pub job_files: Vec<PathBuf>,
    /// The jobs given as options (`--name=x --rw=read ...`); a first
    /// section named `global` holds the options before the first `--name`.
    pub command_line_jobs: Option<JobText>,
}

/// What `--output-format` accepts.
const FORMATS_ACCEPTED: &str = "normal, json, json+";

/// Read the words after `fio`. Options of the command itself are checked
/// here; job options are kept as written for the second stage.
pub fn parse_command_line(words: &[String], expansion: &Expansion) -> Result<Invocation, FioError> {
    let mut inv = Invocation {
        format: OutputFormat::Normal,
        output: None,
        parse_only: false,
        help: false,
        version: false,
        job_files: Vec::new(),
        command_line_jobs: None,
    };
    let mut sections: Vec<Section> = Vec::new();
    for word in words {
        let Some(option) = word.strip_prefix("--") else {
            if word == "-h" {
                inv.help = true;
            } else if word == "-V" {
                inv.version = true;
            } else {
                inv.job_files.push(PathBuf::from(word));
            }
            continue;
        };
        let (name, value) = match option.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (option, None),
        };
        let value_error = |problem: &str, accepted: &str| {
            FioError::value(
                Origin::command_line(),
                format!("--{name}"),
                value.unwrap_or_default(),
                problem,
                accepted,
            )
        };
        match name {
            "help" => inv.help = true,
            "version" => inv.version = true,
            "parse-only" => inv.parse_only = true,
            "output-format" => {
                inv.format = match value {
                    Some("normal") => OutputFormat::Normal,
                    Some("json") => OutputFormat::Json,
                    Some("json+") => OutputFormat::JsonPlus,
                    Some("terse") => {
                        return Err(value_error(
                            "the terse format is not supported",
                            FORMATS_ACCEPTED,
                        ))
                    }
                    _ => return Err(value_error("unknown format", FORMATS_ACCEPTED)),
                }
            }
            "output" => match value {
                Some(v) if !v.is_empty() => inv.output = Some(PathBuf::from(v)),
                _ => {
                    return Err(value_error(
                        "a file name is needed",
                        "--output=FILE, a new file",
                    ))
                }
            },
            "name" => sections.push(Section {
                name: value.unwrap_or_default().to_string(),
                settings: Vec::new(),
                origin: Origin::command_line(),
            }),
            _ => {
                if sections.is_empty() {
                    sections.push(Section {
                        name: "global".to_string(),
                        settings: Vec::new(),
                        origin: Origin::command_line(),
                    });
                }
                let section = sections.last_mut().expect("one section at least");
                section.settings.push(Setting {
                    name: name.to_string(),
                    value: value.map(|v| expansion.expand(v)),
                    origin: Origin::command_line(),
                });
            }
        }
    }
    if !sections.is_empty() {
        inv.command_line_jobs = Some(JobText { sections });
    }
    Ok(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env() -> Expansion<'static> {
        Expansion {
            var: &|name| (name == "SZ").then(|| "64m".to_string()),
            keywords: [("$pagesize", 4096), ("$mb_memory", 1000), ("$ncpus", 2)],
        }
    }

    fn parse(text: &str) -> Result<JobText, FioError> {
        parse_job_text(text, Path::new("t.fio"), &no_env())
    }

    fn settings(s: &Section) -> Vec<String> {
        s.settings.iter().map(Setting::text).collect()
    }

    #[test]
    fn sections_comments_and_settings_read_like_fio() {
        let t = parse(
            "; a comment\n# another\n[global]\nbs=4k   # trailing\nsize=${SZ}\n\n[job1]\n  rw=randwrite;x\ntime_based\nbs = 8k\nnumjobs=$ncpus\nfilename=a#b\n",
        )
        .unwrap();
        assert_eq!(t.sections.len(), 2);
        assert!(t.sections[0].is_global());
        assert_eq!(settings(&t.sections[0]), ["bs=4k", "size=64m"]);
        assert_eq!(t.sections[1].name, "job1");
        assert_eq!(
            settings(&t.sections[1]),
            [
                "rw=randwrite",
                "time_based",
                "bs= 8k",
                "numjobs=2",
                "filename=a"
            ]
        );
        assert_eq!(t.sections[1].settings[1].origin.line, 9);
        assert_eq!(t.sections[1].settings[1].origin.to_string(), "t.fio:9");
    }

    #[test]
    fn unset_variables_are_empty_and_globalx_is_global() {
        let t = parse("[globalx]\nbs=${NOPE}4k\n[j]\n").unwrap();
        assert!(t.sections[0].is_global());
        assert_eq!(settings(&t.sections[0]), ["bs=4k"]);
    }

    #[test]
    fn layout_mistakes_are_one_line_each() {
        let e = parse("bs=4k\n[j]\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.fio:1: 'bs=4k' stands outside of a [section] (accepted: settings after a [name] line)"
        );
        assert!(parse("[j\n")
            .unwrap_err()
            .to_string()
            .contains("does not end with ']'"));
        assert!(parse("[]\n").is_err());
    }

    #[test]
    fn includes_are_read_next_to_the_including_file_and_cannot_open_sections() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("inc.fio"), "thread=1\ngroup_reporting\n").unwrap();
        std::fs::write(dir.path().join("bad.fio"), "[x]\n").unwrap();
        std::fs::write(dir.path().join("loop.fio"), "include loop.fio\n").unwrap();
        std::fs::write(dir.path().join("self.fio"), "[j]\ninclude loop.fio\n").unwrap();
        let main = dir.path().join("main.fio");
        std::fs::write(&main, "[global]\ninclude inc.fio\n[j]\nrw=read\n").unwrap();
        let t = read_job_file(&main, &no_env()).unwrap();
        assert_eq!(settings(&t.sections[0]), ["thread=1", "group_reporting"]);
        assert_eq!(
            t.sections[0].settings[1].origin.file.as_deref(),
            Some(dir.path().join("inc.fio").as_path())
        );
        std::fs::write(&main, "[j]\ninclude bad.fio\n").unwrap();
        let e = read_job_file(&main, &no_env()).unwrap_err().to_string();
        assert!(e.contains("cannot open a section"), "{e}");
        let e = read_job_file(&dir.path().join("self.fio"), &no_env())
            .unwrap_err()
            .to_string();
        assert!(e.contains("nest deeper"), "{e}");
        std::fs::write(&main, "[j]\ninclude missing.fio\n").unwrap();
        let e = read_job_file(&main, &no_env()).unwrap_err().to_string();
        assert!(e.contains("include missing.fio: "), "{e}");
    }

    #[test]
    fn the_command_line_has_global_options_then_jobs_then_files() {
        let words: Vec<String> = [
            "--output-format=json",
            "--bs=8k",
            "--name=a",
            "--rw=read",
            "--time_based",
            "--name=b",
            "job.fio",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let inv = parse_command_line(&words, &no_env()).unwrap();
        assert_eq!(inv.format, OutputFormat::Json);
        assert_eq!(inv.job_files, [PathBuf::from("job.fio")]);
        let jobs = inv.command_line_jobs.unwrap();
        let names: Vec<&str> = jobs.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["global", "a", "b"]);
        assert_eq!(settings(&jobs.sections[1]), ["rw=read", "time_based"]);
        let bad = parse_command_line(&["--output-format=terse".to_string()], &no_env());
        assert!(bad
            .unwrap_err()
            .to_string()
            .contains("accepted: normal, json, json+"));
    }
}
