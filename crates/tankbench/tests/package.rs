//! The release packages: `scripts/package` makes the tarball and the .deb, and
//! the .deb, unpacked into a scratch root, holds a tankbench that runs.
//!
//! The script packages the binary this `cargo test` built (`--binary`) rather
//! than building the release profile again, which would add minutes to CI; the
//! packaging steps (copy, strip, man pages and completions when the binary can
//! write them, tarball, cargo-deb with the metadata in this crate's Cargo.toml)
//! are the same for either binary. `scripts/package` without `--binary` is the
//! release build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn only_file(dir: &Path, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one *{suffix} in {}: {found:?}",
        dir.display()
    );
    found[0].clone()
}

#[test]
fn the_deb_unpacks_into_a_scratch_root_and_runs() {
    let [dpkg_deb, _, _, objdump] = testkit::require!("dpkg-deb", "cargo-deb", "strip", "objdump");
    let version = env!("CARGO_PKG_VERSION");
    let out = tempfile::tempdir().unwrap();
    let root = testkit::workspace_root();
    run(Command::new(root.join("scripts/package"))
        .arg("--binary")
        .arg(env!("CARGO_BIN_EXE_tankbench"))
        .arg("--out")
        .arg(out.path())
        .arg("--fast"));

    // The tarball: the binary, README and docs under one versioned directory.
    let name = format!("tankbench-{version}-x86_64-linux-gnu");
    let tarball = out.path().join(format!("{name}.tar.gz"));
    let listing = run(Command::new("tar").arg("-tzf").arg(&tarball));
    for want in ["tankbench", "README.md", "docs/report.md", "docs/lab.md"] {
        let entry = format!("{name}/{want}");
        assert!(
            listing.lines().any(|l| l == entry),
            "{entry} in:\n{listing}"
        );
    }

    // The .deb's control data.
    let deb = only_file(out.path(), ".deb");
    let info = run(Command::new(&dpkg_deb).arg("--info").arg(&deb));
    assert!(info.contains("Package: tankbench"), "{info}");
    assert!(info.contains(&format!("Version: {version}")), "{info}");
    assert!(info.contains("Section: utils"), "{info}");
    let depends = info
        .lines()
        .find(|l| l.trim_start().starts_with("Depends:"))
        .unwrap_or_else(|| panic!("no Depends in {info}"));
    assert_eq!(
        depends.trim(),
        "Depends: libc6 (>= 2.35), libgcc-s1 (>= 4.2)",
        "{info}"
    );

    // Unpacked into a scratch root (`dpkg -x` touches neither the real
    // system nor dpkg's database), the binary runs and says its version.
    let scratch = tempfile::tempdir().unwrap();
    run(Command::new(&dpkg_deb)
        .arg("-x")
        .arg(&deb)
        .arg(scratch.path()));
    let bin = scratch.path().join("usr/bin/tankbench");
    let said = run(Command::new(&bin).arg("--version"));
    assert_eq!(said, format!("tankbench {version}\n"));
    for doc in ["README.md", "report.md", "testing.md"] {
        let p = scratch.path().join("usr/share/doc/tankbench").join(doc);
        assert!(p.is_file(), "{} missing", p.display());
    }

    // Stripped, and needing nothing the Depends line does not name: glibc's
    // libraries (libc6) and the unwinder (libgcc-s1), at most the versions named.
    let headers = run(Command::new(&objdump).arg("-p").arg(&bin));
    let needed: Vec<&str> = headers
        .lines()
        .filter_map(|l| l.trim().strip_prefix("NEEDED"))
        .map(str::trim)
        .collect();
    let declared = [
        "libc.so.6",
        "libm.so.6",
        "libgcc_s.so.1",
        "ld-linux-x86-64.so.2",
    ];
    assert!(
        !needed.is_empty() && needed.iter().all(|n| declared.contains(n)),
        "{needed:?}"
    );
    let dynamic = run(Command::new(&objdump).arg("-T").arg(&bin));
    let newest = |prefix: &str| {
        dynamic
            .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .filter_map(|w| w.strip_prefix(prefix))
            .map(|v| {
                v.split('.')
                    .map(|n| n.parse::<u32>().unwrap_or(0))
                    .collect::<Vec<_>>()
            })
            .max()
            .unwrap_or_default()
    };
    assert!(newest("GLIBC_") <= vec![2, 35], "{:?}", newest("GLIBC_"));
    assert!(newest("GCC_") <= vec![4, 2, 0], "{:?}", newest("GCC_"));
    let sections = run(Command::new(&objdump).arg("-h").arg(&bin));
    assert!(
        !sections.contains(".debug_info"),
        "not stripped:\n{sections}"
    );
    let symbols = run(Command::new(&objdump).arg("-t").arg(&bin));
    assert!(
        symbols.contains("no symbols"),
        "symbol table left:\n{symbols}"
    );
}
