//! The `tankbench lab` command line: bad input gets one line naming the option
//! and the accepted values, and exit status 1; nothing is built.

mod common;

use std::process::Command;

fn lab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(common::tankbench())
        .arg("lab")
        .args(args)
        .env("TANKBENCH_LAB_ROOT", "/var/tmp/tb-lab-clitest-none")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_specs_fail_with_one_line_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "name = \"x\"\n[pool]\nlayout = \"raidz2-6\"\ndisk = \"floppy\"\n",
            "pool.disk",
            "ssd-sata",
        ),
        (
            "name = \"x\"\n[pool]\nlayout = \"raidz7-6\"\n",
            "pool.layout",
            "raidz3",
        ),
        (
            "name = \"x\"\n[pool]\nlayout = \"raidz2-6\"\n[link]\nkind = \"fast\"\n",
            "link.kind",
            "lacp",
        ),
        (
            "name = \"x\"\n[pool]\nlayout = \"raidz2-6\"\n[link]\nkind = \"400G\"\n",
            "link.kind",
            "8K to 100G",
        ),
        (
            "name = \"x\"\n[pool]\nlayout = \"raidz2-6\"\ncompression = \"brotli\"\n",
            "pool.compression",
            "lz4",
        ),
        (
            "name = \"x\"\naccess = \"smb\"\n[pool]\nlayout = \"raidz2-6\"\n",
            "access",
            "local, sshfs, nfs, nfs-stable",
        ),
        (
            "name = \"x\"\naccess = \"nfs-stable\"\n[pool]\nlayout = \"raidz2-6\"\n",
            "access",
            "needs a [link]",
        ),
        // Numbers out of their ranges (each range has a reason, docs/lab.md).
        (
            "name = \"x\"\n[pool]\nlayout = \"raidz2-300\"\n",
            "pool.layout",
            "3 to 255",
        ),
        (
            "name = \"x\"\n[pool]\nlayout = \"2000x mirror-2\"\n",
            "pool.layout",
            "at most 1024 disks",
        ),
        (
            "name = \"x\"\n[pool]\nlayout = \"mirror-2\"\ndisk_size = \"2P\"\n",
            "pool.disk_size",
            "1P",
        ),
        (
            "name = \"x\"\n[pool]\nlayout = \"mirror-2\"\ndisk = \"slow\"\n[models.slow]\nkind = \"hdd\"\nrpm = 1\n",
            "models.slow.rpm",
            "3600 to 20000",
        ),
    ];
    for (i, (text, option, accepted)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("bad{i}.toml"));
        std::fs::write(&p, text).unwrap();
        let (code, stdout, stderr) = lab(&["up", p.to_str().unwrap()]);
        assert_eq!(code, 1, "{stderr}");
        assert!(stdout.is_empty());
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(
            stderr.contains(option) && stderr.contains(accepted),
            "{stderr}"
        );
    }
    assert!(!std::path::Path::new("/var/tmp/tb-lab-clitest-none").exists());
}

#[test]
fn status_and_down_of_nothing_succeed() {
    let (code, stdout, _) = lab(&["status"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("no labs are up"), "{stdout}");
    let (code, _, stderr) = lab(&["down", "nosuch"]);
    assert_eq!(code, 0, "down is idempotent: {stderr}");
    let (code, _, stderr) = lab(&["frobnicate"]);
    assert_eq!(code, 1, "{stderr}");
    // --all with something that is not a lab root: refused in one line, not
    // ignored in favour of sweeping the default root.
    let (code, _, stderr) = lab(&["down", "--all", "/var/tmp/tb-lab-clitest-nosuch-root"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--all") && stderr.contains("not a directory"),
        "{stderr}"
    );
    let empty = tempfile::tempdir().unwrap();
    let (code, _, stderr) = lab(&["down", "--all", empty.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("nothing to remove"), "{stderr}");
}

#[test]
fn bad_fileio_options_fail_before_anything_is_built() {
    // Runs without root: the options are checked before the lab is built (or
    // even its prerequisites looked at), so nothing is made.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("ok.toml");
    std::fs::write(&spec, "name = \"x\"\n[pool]\nlayout = \"mirror-2\"\n").unwrap();
    let spec = spec.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["--file-test-mode=bogus"], "bogus"),
        (
            &["--file-test-mode=rndrw", "--frobnicate=1"],
            "--frobnicate",
        ),
        (&["--file-test-mode=rndrw", "--threads=0"], "--threads"),
        (&["--file-test-mode=rndrw", "run"], "'run'"),
        (
            &[
                "--file-test-mode=rndrw",
                "--file-total-size=1",
                "--file-num=4",
            ],
            "--file-num",
        ),
        (
            &[
                "--file-test-mode=rndrw",
                "--validate=on",
                "--file-io-mode=async",
            ],
            "--validate",
        ),
    ];
    for (options, needle) in cases {
        let mut args = vec!["run", spec, "--"];
        args.extend_from_slice(options);
        let (code, stdout, stderr) = lab(&args);
        assert_eq!(code, 1, "{options:?}: {stderr}");
        assert!(stdout.is_empty(), "{options:?}: {stdout}");
        assert_eq!(stderr.trim().lines().count(), 1, "{options:?}: {stderr}");
        assert!(
            stderr.contains("fileio options") && stderr.contains(needle),
            "{options:?}: {stderr}"
        );
    }
    // The spec's default workload is checked the same way.
    let with_workload = dir.path().join("workload.toml");
    std::fs::write(
        &with_workload,
        "name = \"x\"\nworkload = [\"--file-block-size=abc\"]\n[pool]\nlayout = \"mirror-2\"\n",
    )
    .unwrap();
    let (code, _, stderr) = lab(&["run", with_workload.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("file-block-size"), "{stderr}");
    // And a matrix's workload, before its first cell is built.
    let matrix = dir.path().join("m.toml");
    std::fs::write(
        &matrix,
        "workload = [\"--file-test-mode=rndrw\", \"--time=-5\"]\n[base]\nname = \"x\"\n[base.pool]\nlayout = \"mirror-2\"\n",
    )
    .unwrap();
    let (code, _, stderr) = lab(&["matrix", matrix.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--time"), "{stderr}");
    assert!(!std::path::Path::new("/var/tmp/tb-lab-clitest-none").exists());
}

/// What the lab reads is what `tankbench fileio --format=json run` prints: a
/// RunResult, parsed whole (no text report, no partial figures).
#[test]
fn the_lab_reads_the_result_fileio_prints() {
    let dir = tempfile::tempdir().unwrap();
    let fileio = |verb: &str, json: bool| {
        let mut c = Command::new(common::tankbench());
        c.arg("fileio")
            .args([
                "--file-total-size=1M",
                "--file-num=1",
                "--file-test-mode=seqwr",
                "--time=1",
            ])
            .current_dir(dir.path());
        if json {
            c.arg("--format=json");
        }
        let out = c.arg(verb).output().unwrap();
        assert!(out.status.success(), "{verb}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    fileio("prepare", false);
    let stdout = fileio("run", true);
    fileio("cleanup", false);
    let result = lab::experiments::run::parse_result(&stdout).unwrap();
    assert!(result.rates.written_mib_per_s > 0.0, "{stdout}");
    // The text report of the same run is refused, with the reason.
    let e = lab::experiments::run::parse_result("File operations:\n    reads/s: 0.00\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no JSON RunResult"), "{e}");
}

/// `lab crash` of a lab that is not up, or with a bad format: one line,
/// exit status 1, nothing killed or made.
#[test]
fn crash_of_a_lab_that_is_not_up_is_one_line() {
    let (code, stdout, stderr) = lab(&["crash", "h24-nosuchlab"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no lab named 'h24-nosuchlab' is up"),
        "{stderr}"
    );
    let (code, _, stderr) = lab(&["crash", "h24-nosuchlab", "--format", "yaml"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("--format") && stderr.contains("json"),
        "{stderr}"
    );
    assert!(!std::path::Path::new("/var/tmp/tb-lab-clitest-none").exists());
}

/// `lab durability` refuses a bad matrix before anything is built (no root
/// needed): one line naming the field, exit status 1, no output written.
#[test]
fn bad_durability_matrices_fail_before_anything_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let base = "[base]\nname = \"x\"\n[base.pool]\nlayout = \"mirror\"\ndisk = \"hdd\"\ndisk_size = \"1GB\"\n[base.link]\nkind = \"1G\"\n";
    let cell = "[[cell]]\nname = \"c\"\nexpect = \"intact\"\n";
    let cases = [
        (format!("write = [\"--commit=never\"]\n{cell}{base}"), "--commit"),
        (format!("write = [\"--recorder=1.2.3.4:5\"]\n{cell}{base}"), "--recorder"),
        (format!("crash_window_s = [0.0, 1.0]\n{cell}{base}"), "crash_window_s"),
        (
            format!("[[cell]]\nname = \"c\"\nexpect = \"loss\"\nexport = \"async\"\n{base}"),
            "export",
        ),
        (
            format!("[[cell]]\nname = \"c\"\nexpect = \"intact\"\nset = {{ \"pool.log\" = \"tape:1GB\" }}\n{base}"),
            "tape",
        ),
        (base.to_string(), "no cells"),
    ];
    for (text, needle) in cases {
        let m = dir.path().join("m.toml");
        std::fs::write(&m, &text).unwrap();
        let (code, stdout, stderr) = lab(&["durability", m.to_str().unwrap()]);
        assert_eq!(code, 1, "{needle}: {stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    let m = dir.path().join("m.toml");
    std::fs::write(&m, format!("{cell}{base}")).unwrap();
    let (code, _, stderr) = lab(&["durability", m.to_str().unwrap(), "--crashes", "0"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("--crashes"), "{stderr}");
    // Nothing was written beside the matrix, nothing built.
    assert_eq!(testkit::dir_names(dir.path()), vec!["m.toml".to_string()]);
    assert!(!std::path::Path::new("/var/tmp/tb-lab-clitest-none").exists());
}
