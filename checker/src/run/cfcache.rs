//! The cache of compile-fail builds for `checker lab` and `watch`.
//!
//! A compile-fail step builds the lab's crate with a case compiled in
//! ([`crate::run::compilefail`]): 1-3 s each on a busy 2-core machine,
//! every run, though nothing it reads may have changed (lab 05 has four
//! of them). Its outcome (exit status and log) is kept here under a hash
//! of everything the build reads ([`key`]), and a run whose key is known
//! replays it instead of building.
//!
//! Only `checker lab` and `watch` use it ([`crate::run::LabOptions`]'s
//! `compile_fail_cache`): `checker grade`, `run` and `fixtures` always
//! build, since grading must not trust a file a student's machine could
//! hold. The cache lives in the checker's cache folder, which the build
//! sandbox mounts read-only ([`crate::tools::sandbox`]): a build cannot
//! write an entry for a later run.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::tools::discovery::is_build_output;
use crate::tools::sandbox::Finished;
use crate::tools::setup::Toolchain;

/// Bumped when what a key covers, or an entry holds, changes.
const FORMAT: &str = "compile-fail-cache 1";

/// At most this many entries are kept: the oldest go first. An entry is
/// a build log, a few KiB.
const MAX_ENTRIES: usize = 256;

/// Folders a build never reads: its outputs, version control, npm's.
const SKIPPED_DIRS: [&str; 3] = ["target", ".git", "node_modules"];

/// The folder of the cache in the checker's cache `cache`.
pub fn dir(cache: &Path) -> PathBuf {
    cache.join("compile-fail")
}

/// The toolchain's own description (`rustc -vV` in the workspace, whose
/// `rust-toolchain.toml` picks it); `None` when it cannot be run, and
/// then nothing is cached.
pub fn rustc_version(root: &Path) -> Option<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .current_dir(root)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What one compile-fail build reads.
pub struct Inputs<'a> {
    /// The workspace root (the kernel crate, the macro crate, the
    /// manifests and the lock file are in it).
    pub root: &'a Path,
    /// The lab folder (the skeleton's and the solution's crates).
    pub lab_dir: &'a Path,
    /// The case, as `lab.toml` names it, and its file.
    pub case: &'a str,
    /// The case's file (canonical).
    pub case_path: &'a Path,
    /// `SOLUTION=1`.
    pub solution: bool,
    /// The kernel tree, its ABI and cargo target folder, the debug kernel.
    pub tc: &'a Toolchain,
    /// [`rustc_version`].
    pub rustc: &'a str,
}

/// The key of a build: a hash of every file it can read (the lab folder,
/// the kernel and macro crates, the workspace's manifests, lock file and
/// toolchain file, the case), of the kernel tree (its ABI, path and
/// `.config`), of the toolchain's version and of the command's variables
/// (`SOLUTION`, the case, the cargo target folder).
pub fn key(inputs: &Inputs) -> Result<String> {
    let mut h = Sha256::new();
    let mut feed = |label: &str, bytes: &[u8]| {
        // Length-prefixed, so that no two inputs can run into each other.
        h.update(label.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    let tc = inputs.tc;
    feed("format", FORMAT.as_bytes());
    feed("case", inputs.case.as_bytes());
    feed("case-path", inputs.case_path.as_os_str().as_encoded_bytes());
    feed("case-file", &read(inputs.case_path)?);
    feed("solution", &[u8::from(inputs.solution)]);
    feed("rustc", inputs.rustc.as_bytes());
    feed("abi", tc.abi.as_bytes());
    feed("debug", &[u8::from(tc.debug)]);
    feed("kdir", tc.kdir.as_os_str().as_encoded_bytes());
    let target = tc.rust_target_dir.as_deref().unwrap_or(Path::new(""));
    feed("rust-target-dir", target.as_os_str().as_encoded_bytes());
    // The headers' package replaces .config when it is upgraded.
    let config = tc.kdir.join(".config");
    feed("kdir-config", &fs::read(&config).unwrap_or_default());
    feed("kdir-config-mtime", mtime(&config).as_bytes());
    let root = inputs.root;
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        "rust-toolchain.toml",
        "rust-toolchain",
    ] {
        feed(file, &fs::read(root.join(file)).unwrap_or_default());
    }
    let mut files = Vec::new();
    for dir in [
        inputs.lab_dir.to_path_buf(),
        root.join("kernel-crate"),
        root.join("module-macro"),
        root.join(".cargo"),
    ] {
        walk(&dir, usize::MAX, &mut |p| files.push(p))?;
    }
    // Every workspace member's manifest (cargo reads them all), as the
    // Kbuild recipe lists them: up to three folders deep.
    walk(root, 4, &mut |p| {
        if p.file_name().is_some_and(|n| n == "Cargo.toml") {
            files.push(p);
        }
    })?;
    files.sort();
    files.dedup();
    for file in files {
        feed("file", file.as_os_str().as_encoded_bytes());
        feed("contents", &read(&file)?);
    }
    Ok(hex(&h.finalize()))
}

/// Calls `found` with every file below `dir` (none if it does not exist),
/// down to `depth` levels, but not Kbuild's outputs nor [`SKIPPED_DIRS`].
fn walk(dir: &Path, depth: usize, found: &mut dyn FnMut(PathBuf)) -> Result<()> {
    if depth == 0 {
        return Ok(());
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if !SKIPPED_DIRS.contains(&name.as_ref()) {
                walk(&path, depth - 1, found)?;
            }
        } else if !is_build_output(&name) {
            // Symbolic links too: the build reads what they point to.
            found(path);
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    match fs::File::open(path) {
        Ok(mut f) => {
            f.read_to_end(&mut bytes)
                .with_context(|| format!("cannot read {}", path.display()))?;
        }
        // A dangling link, a file removed meanwhile: read as absent.
        Err(_) => bytes.extend_from_slice(b"\0absent"),
    }
    Ok(bytes)
}

fn mtime(path: &Path) -> String {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or_else(String::new, |d| {
            format!("{}.{}", d.as_secs(), d.subsec_nanos())
        })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A cached build: how it ended and its log.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    code: i32,
    log: String,
}

/// The build of `key` in the cache `dir`, if it is there: its ending (no
/// limit hit, no time spent) and its log.
pub fn load(dir: &Path, key: &str) -> Option<(Finished, String)> {
    let path = dir.join(format!("{key}.json"));
    let text = fs::read_to_string(&path).ok()?;
    // Used now: [`prune`] drops the entries unused longest.
    if let Ok(f) = fs::File::options().write(true).open(&path) {
        let _ = f.set_modified(SystemTime::now());
    }
    let entry: Entry = serde_json::from_str(&text).ok()?;
    let done = Finished {
        code: entry.code,
        limit: None,
        time: Duration::ZERO,
    };
    Some((done, entry.log))
}

/// Keeps the build of `key` in the cache `dir`, unless it hit a limit (a
/// time-out says nothing of the code); then drops the oldest entries
/// beyond `MAX_ENTRIES` (256).
pub fn store(dir: &Path, key: &str, done: &Finished, log: &str) -> Result<()> {
    if done.limit.is_some() {
        return Ok(());
    }
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let entry = Entry {
        code: done.code,
        log: log.to_owned(),
    };
    // Written whole, then renamed: a run that reads it meanwhile sees
    // the old entry or the new one.
    let tmp = dir.join(format!(".{key}.{}.tmp", std::process::id()));
    fs::write(&tmp, serde_json::to_string(&entry)?)?;
    fs::rename(&tmp, dir.join(format!("{key}.json")))?;
    prune(dir, MAX_ENTRIES);
    Ok(())
}

/// Removes the oldest entries of `dir` beyond `keep`.
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<(SystemTime, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| Some((fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    if found.len() <= keep {
        return;
    }
    found.sort();
    for (_, path) in &found[..found.len() - keep] {
        let _ = fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{tree, write};

    fn toolchain(kdir: &Path) -> Toolchain {
        Toolchain {
            abi: "6.1.0-57-amd64".into(),
            kdir: kdir.to_path_buf(),
            vmlinuz: "/cache/vmlinuz".into(),
            boot_kernel: "/cache/vmlinux".into(),
            modules_dir: "/cache/modules".into(),
            cache: "/cache".into(),
            debug: false,
            rust_target_dir: None,
        }
    }

    const FILES: [(&str, &str); 11] = [
        ("Cargo.toml", "[workspace]"),
        ("Cargo.lock", "# lock"),
        ("rust-toolchain.toml", "[toolchain]"),
        ("kernel-crate/src/lib.rs", "// kernel"),
        ("kernel-crate/kbuild/rust-module.mk", "# mk"),
        ("module-macro/src/lib.rs", "// macro"),
        ("labs/lab-05/src/mutex.rs", "// student"),
        ("labs/lab-05/solution/src/mutex.rs", "// solution"),
        ("labs/lab-05/compile-fail/case.rs", "// case"),
        ("labs/lab-06/Cargo.toml", "[package]"),
        ("kdir/.config", "CONFIG_X=y"),
    ];

    fn key_of(root: &Path, solution: bool, rustc: &str, tc: &Toolchain) -> String {
        let lab_dir = root.join("labs/lab-05");
        let case_path = lab_dir.join("compile-fail/case.rs");
        key(&Inputs {
            root,
            lab_dir: &lab_dir,
            case: "compile-fail/case.rs",
            case_path: &case_path,
            solution,
            tc,
            rustc,
        })
        .expect("a key")
    }

    /// Changing any one input changes the key; a build's outputs do not.
    #[test]
    fn the_key_covers_every_input() {
        let dir = tree(&FILES);
        let root = dir.path();
        let tc = toolchain(&root.join("kdir"));
        let base = key_of(root, false, "rustc 1.95", &tc);
        assert_eq!(base, key_of(root, false, "rustc 1.95", &tc), "stable");
        assert_ne!(base, key_of(root, true, "rustc 1.95", &tc), "SOLUTION");
        assert_ne!(base, key_of(root, false, "rustc 1.96", &tc), "toolchain");
        for (what, change) in [
            (
                "abi",
                Toolchain {
                    abi: "6.12.0-1-amd64".into(),
                    ..tc.clone()
                },
            ),
            (
                "debug",
                Toolchain {
                    debug: true,
                    ..tc.clone()
                },
            ),
            (
                "target",
                Toolchain {
                    rust_target_dir: Some("t".into()),
                    ..tc.clone()
                },
            ),
            (
                "kdir",
                Toolchain {
                    kdir: root.join("kdir2"),
                    ..tc.clone()
                },
            ),
        ] {
            assert_ne!(base, key_of(root, false, "rustc 1.95", &change), "{what}");
        }
        for (file, _) in FILES {
            let path = root.join(file);
            let old = fs::read(&path).unwrap();
            fs::write(&path, b"changed").unwrap();
            assert_ne!(base, key_of(root, false, "rustc 1.95", &tc), "{file}");
            fs::write(&path, old).unwrap();
        }
        // A new file anywhere in the lab or the course's crates.
        for new in [
            "labs/lab-05/src/new.rs",
            "kernel-crate/src/new.rs",
            "module-macro/x",
        ] {
            write(root, &[(new, "")]);
            assert_ne!(base, key_of(root, false, "rustc 1.95", &tc), "{new}");
            fs::remove_file(root.join(new)).unwrap();
        }
        let base = key_of(root, false, "rustc 1.95", &tc);
        write(
            root,
            &[
                ("labs/lab-05/counter.ko", "elf"),
                ("labs/lab-05/.counter.o.cmd", "cmd"),
                ("labs/lab-05/kernel_helpers.c", "c"),
                ("labs/lab-05/Module.symvers", ""),
                ("target/debug/x", ""),
                ("labs/lab-07/src/lib.rs", "another lab"),
            ],
        );
        assert_eq!(base, key_of(root, false, "rustc 1.95", &tc), "outputs");
    }

    #[test]
    fn entries_round_trip_and_limits_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let failed = Finished {
            code: 2,
            limit: None,
            time: Duration::from_secs(2),
        };
        store(dir.path(), "k1", &failed, "error[E0277]: ...").unwrap();
        let (done, log) = load(dir.path(), "k1").expect("kept");
        assert_eq!(
            (done.code, done.limit, log.as_str()),
            (2, None, "error[E0277]: ...")
        );
        let timed_out = Finished {
            limit: Some(crate::tools::sandbox::Limit::WallClock),
            ..failed
        };
        store(dir.path(), "k2", &timed_out, "").unwrap();
        assert!(load(dir.path(), "k2").is_none());
        assert!(load(dir.path(), "k3").is_none());
    }

    #[test]
    fn prune_keeps_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        for (n, age) in [("old", 300), ("mid", 200), ("new", 100)] {
            let path = dir.path().join(format!("{n}.json"));
            fs::write(&path, "{}").unwrap();
            let t = SystemTime::now() - Duration::from_secs(age);
            fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        prune(dir.path(), 2);
        assert!(!dir.path().join("old.json").exists());
        assert!(dir.path().join("mid.json").exists());
        assert!(dir.path().join("new.json").exists());
    }
}
