//! Command-line words as the operating system gives them: bytes that need not
//! be UTF-8. No subcommand may panic on them (exit 101); where a word is a file
//! name, the exact bytes name the file.

mod common;

use common::{scratch, tankbench_bin};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::process::Command;

fn not_utf8() -> &'static OsStr {
    OsStr::from_bytes(b"caf\xe9-\xff")
}

fn run(args: &[&OsStr]) -> (i32, String) {
    let out = Command::new(tankbench_bin())
        .args(args)
        .current_dir(scratch().path())
        .output()
        .expect("run tankbench");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn no_subcommand_panics_on_bytes_that_are_not_utf8() {
    let bad = not_utf8();
    let with_option = {
        let mut w = OsString::from("--file-total-size=");
        w.push(bad);
        w
    };
    let cases: Vec<Vec<&OsStr>> = vec![
        vec![bad],
        vec!["fileio".as_ref(), bad],
        vec!["fileio".as_ref(), &with_option, "prepare".as_ref()],
        vec!["--test=fileio".as_ref(), bad, "run".as_ref()],
        vec!["quick".as_ref(), bad],
        vec!["plan".as_ref(), "--disks".as_ref(), bad],
        vec!["lab".as_ref(), "up".as_ref(), bad],
        vec!["results".as_ref(), bad],
        vec!["compare".as_ref(), bad, bad],
        vec!["report".as_ref(), bad, "--format=table".as_ref()],
        vec!["chart".as_ref(), bad, "-o".as_ref(), "x.svg".as_ref()],
    ];
    for args in cases {
        let (code, stderr) = run(&args);
        assert_eq!(code, 1, "{args:?}: exit {code}, stderr: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.trim().is_empty(), "{args:?}: no error line");
    }
}

#[test]
fn a_result_directory_whose_name_is_not_utf8_is_read() {
    let dir = scratch();
    let store = dir.path().join(not_utf8());
    std::fs::create_dir(&store).unwrap();
    // An empty store: `results` lists nothing and succeeds, which proves the
    // directory was found by its exact bytes (a lossy name would not exist).
    let out = Command::new(tankbench_bin())
        .arg("results")
        .arg(&store)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn fileio_file_names_that_are_not_utf8_are_used_byte_for_byte() {
    let dir = scratch();
    let target = dir.path().join(not_utf8());
    std::fs::create_dir(&target).unwrap();
    let json = target.join(not_utf8()).with_extension("json");
    let mut file_dir = OsString::from("--file-dir=");
    file_dir.push(&target);
    let mut json_arg = OsString::from("--json=");
    json_arg.push(&json);
    let fileio = |extra: &[&OsStr]| {
        let out = Command::new(tankbench_bin())
            .args(["fileio", "--file-total-size=64K", "--file-num=2"])
            .arg(&file_dir)
            .args(extra)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {stderr}");
    };
    fileio(&["prepare".as_ref()]);
    assert!(target.join("test_file.1").is_file());
    fileio(&[
        "--file-test-mode=rndrd".as_ref(),
        "--events=10".as_ref(),
        &json_arg,
        "run".as_ref(),
    ]);
    assert!(json.is_file(), "--json wrote its file under the exact name");
    fileio(&["cleanup".as_ref()]);
    assert!(!target.join("test_file.0").exists());
}

#[test]
fn fileio_option_values_that_are_not_file_names_must_be_text() {
    let mut mode = OsString::from("--file-test-mode=");
    mode.push(not_utf8());
    let (code, stderr) = run(&["fileio".as_ref(), &mode, "run".as_ref()]);
    assert_eq!(code, 1);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--file-test-mode=") && stderr.contains("not valid UTF-8"),
        "{stderr}"
    );
}
