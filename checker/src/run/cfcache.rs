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
//! `build_caches`): `checker grade`, `run` and `fixtures` always
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
const FORMAT: &str = "compile-fail-cache 2";

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

/// A hasher whose inputs are length-prefixed and labelled, so that no two
/// of them can run into each other.
pub(crate) struct Feed(Sha256);

impl Feed {
    pub(crate) fn new() -> Feed {
        Feed(Sha256::new())
    }

    pub(crate) fn feed(&mut self, label: &str, bytes: &[u8]) {
        self.0.update(label.as_bytes());
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    /// The hash so far, in hexadecimal.
    pub(crate) fn hex(self) -> String {
        hex(&self.0.finalize())
    }

    /// Every file of `files`, sorted and once: its path and contents.
    pub(crate) fn files(&mut self, mut files: Vec<PathBuf>) -> Result<()> {
        files.sort();
        files.dedup();
        for file in files {
            self.feed("file", file.as_os_str().as_encoded_bytes());
            self.feed("contents", &read(&file)?);
        }
        Ok(())
    }
}

/// The part of every key of one run that no case changes: the kernel and
/// macro crates, the workspace's manifests, lock and toolchain files, the
/// kernel tree and the toolchain's version. Hashed once per run ([`Session`]),
/// not once per case (lab 05 has four).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared([u8; 32]);

impl Shared {
    /// The hash of what the builds of the workspace `root` for `tc` with
    /// the compiler `rustc` ([`rustc_version`]) read besides the lab.
    pub fn of(root: &Path, tc: &Toolchain, rustc: &str) -> Result<Shared> {
        let mut h = Feed::new();
        h.feed("format", FORMAT.as_bytes());
        h.feed("rustc", rustc.as_bytes());
        h.feed("abi", tc.abi.as_bytes());
        h.feed("debug", &[u8::from(tc.debug)]);
        h.feed("kdir", tc.kdir.as_os_str().as_encoded_bytes());
        let target = tc.rust_target_dir.as_deref().unwrap_or(Path::new(""));
        h.feed("rust-target-dir", target.as_os_str().as_encoded_bytes());
        // The headers' package replaces .config when it is upgraded.
        let config = tc.kdir.join(".config");
        h.feed("kdir-config", &fs::read(&config).unwrap_or_default());
        h.feed("kdir-config-mtime", mtime(&config).as_bytes());
        for file in [
            "Cargo.toml",
            "Cargo.lock",
            "rust-toolchain.toml",
            "rust-toolchain",
        ] {
            h.feed(file, &fs::read(root.join(file)).unwrap_or_default());
        }
        let mut files = Vec::new();
        for dir in ["kernel-crate", "module-macro", ".cargo"] {
            walk(&root.join(dir), usize::MAX, &mut |p| files.push(p))?;
        }
        // Every workspace member's manifest (cargo reads them all), as the
        // Kbuild recipe lists them: up to three folders deep.
        walk(root, 4, &mut |p| {
            if p.file_name().is_some_and(|n| n == "Cargo.toml") {
                files.push(p);
            }
        })?;
        h.files(files)?;
        Ok(Shared(h.0.finalize().into()))
    }

    /// The hash, to feed into a key.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// A shared part made of `bytes`, for tests of the keys built on it.
    #[cfg(test)]
    pub(crate) fn for_test(bytes: &[u8]) -> Shared {
        Shared(Sha256::digest(bytes).into())
    }
}

/// What one compile-fail build reads besides the [`Shared`] part.
pub struct Inputs<'a> {
    /// The lab folder (the skeleton's and the solution's crates).
    pub lab_dir: &'a Path,
    /// The case, as `lab.toml` names it.
    pub case: &'a str,
    /// The case's file (canonical).
    pub case_path: &'a Path,
    /// `SOLUTION=1`.
    pub solution: bool,
}

/// The key of a build: a hash of the run's [`Shared`] part (the kernel
/// and macro crates, the manifests, the kernel tree, the toolchain), of
/// every file of the lab folder and of the case, and of the command's
/// variables (`SOLUTION`, the case).
pub fn key(shared: &Shared, inputs: &Inputs) -> Result<String> {
    let mut h = Feed::new();
    h.feed("shared", &shared.0);
    h.feed("case", inputs.case.as_bytes());
    h.feed("case-path", inputs.case_path.as_os_str().as_encoded_bytes());
    h.feed("case-file", &read(inputs.case_path)?);
    h.feed("solution", &[u8::from(inputs.solution)]);
    let mut files = Vec::new();
    walk(inputs.lab_dir, usize::MAX, &mut |p| files.push(p))?;
    h.files(files)?;
    Ok(h.hex())
}

/// The caches as one run uses them: the [`Shared`] part of the run's
/// keys, hashed once, and the compile-fail builds to keep. They are kept
/// at the end ([`Session::close`]), and only if the shared part is still
/// the same then: a build's own inputs are hashed before and after it
/// (`compilefail::Build::run_cached`), the shared ones once for all. The
/// run's other cache ([`crate::run::refcache`]) uses the same shared part.
pub struct Session<'a> {
    dir: PathBuf,
    root: &'a Path,
    tc: &'a Toolchain,
    rustc: String,
    shared: Shared,
    kept: Vec<(String, Finished, String)>,
}

impl<'a> Session<'a> {
    /// The session of a run in the workspace `root` for `tc`; `None` when
    /// the toolchain cannot say its version or the shared part cannot be
    /// read (nothing is cached then).
    pub fn open(root: &'a Path, tc: &'a Toolchain) -> Option<Session<'a>> {
        Session::with_rustc(root, tc, rustc_version(root)?)
    }

    /// [`Session::open`] with the toolchain's version given.
    fn with_rustc(root: &'a Path, tc: &'a Toolchain, rustc: String) -> Option<Session<'a>> {
        let shared = Shared::of(root, tc, &rustc).ok()?;
        Some(Session {
            dir: dir(&tc.cache),
            root,
            tc,
            rustc,
            shared,
            kept: Vec::new(),
        })
    }

    /// The shared part of this run's keys.
    pub fn shared(&self) -> &Shared {
        &self.shared
    }

    /// The workspace root and toolchain of the run.
    pub fn toolchain(&self) -> (&'a Path, &'a Toolchain) {
        (self.root, self.tc)
    }

    /// The key of the build of `inputs` in this run.
    pub fn key(&self, inputs: &Inputs) -> Option<String> {
        key(&self.shared, inputs).ok()
    }

    /// The build of `key`, if the cache has it ([`load`]).
    pub fn load(&self, key: &str) -> Option<(Finished, String)> {
        load(&self.dir, key)
    }

    /// Keeps the build of `key` at the end of the run.
    pub fn keep(&mut self, key: String, done: &Finished, log: &str) {
        self.kept.push((key, done.clone(), log.to_owned()));
    }

    /// Stores the builds kept, if the shared part did not change while
    /// they ran (a save in the kernel crate meanwhile). Returns whether it
    /// did not, asked also when nothing was kept if `more`: the caller
    /// has entries of its own to keep.
    pub fn close(self, more: bool) -> bool {
        if self.kept.is_empty() && !more {
            return true;
        }
        let now = Shared::of(self.root, self.tc, &self.rustc).ok();
        if now.as_ref() != Some(&self.shared) {
            return false;
        }
        for (key, done, log) in &self.kept {
            // A cache that cannot be written only costs the next run a build.
            let _ = store(&self.dir, key, done, log);
        }
        true
    }
}

/// Calls `found` with every file below `dir` (none if it does not exist),
/// down to `depth` levels, but not Kbuild's outputs nor [`SKIPPED_DIRS`].
pub(crate) fn walk(dir: &Path, depth: usize, found: &mut dyn FnMut(PathBuf)) -> Result<()> {
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
    prune(dir, MAX_ENTRIES, is_json);
    Ok(())
}

/// Removes the oldest entries of `dir` beyond `keep`: its files or
/// folders that `is_entry`.
pub(crate) fn prune(dir: &Path, keep: usize, is_entry: impl Fn(&Path) -> bool) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<(SystemTime, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| is_entry(p))
        .filter_map(|p| Some((fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    if found.len() <= keep {
        return;
    }
    found.sort();
    for (_, path) in &found[..found.len() - keep] {
        let _ = if path.is_dir() {
            fs::remove_dir_all(path)
        } else {
            fs::remove_file(path)
        };
    }
}

/// A cache entry of compile-fail builds: a JSON file.
fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "json")
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
        let shared = Shared::of(root, tc, rustc).expect("the shared part");
        let inputs = Inputs {
            lab_dir: &lab_dir,
            case: "compile-fail/case.rs",
            case_path: &case_path,
            solution,
        };
        key(&shared, &inputs).expect("a key")
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

    /// A session keeps its builds at its end, unless the shared part
    /// changed meanwhile; its keys are [`key`]'s.
    #[test]
    fn a_session_stores_at_its_end_if_the_crates_did_not_change() {
        let dir = tree(&FILES);
        let root = dir.path();
        let cache = root.join("cache");
        let tc = Toolchain {
            cache: cache.clone(),
            ..toolchain(&root.join("kdir"))
        };
        let lab_dir = root.join("labs/lab-05");
        let case_path = lab_dir.join("compile-fail/case.rs");
        let inputs = Inputs {
            lab_dir: &lab_dir,
            case: "compile-fail/case.rs",
            case_path: &case_path,
            solution: false,
        };
        let done = Finished {
            code: 1,
            limit: None,
            time: Duration::from_secs(1),
        };
        let mut session = Session::with_rustc(root, &tc, "rustc 1.95".into()).unwrap();
        let k = session.key(&inputs).unwrap();
        assert_eq!(k, key_of(root, false, "rustc 1.95", &tc));
        session.keep(k.clone(), &done, "error[E0277]");
        assert!(session.load(&k).is_none(), "not before the end");
        assert!(session.close(false));
        assert_eq!(load(&super::dir(&cache), &k).unwrap().1, "error[E0277]");

        let mut session = Session::with_rustc(root, &tc, "rustc 1.95".into()).unwrap();
        let k2 = session.key(&Inputs {
            solution: true,
            ..inputs
        });
        session.keep(k2.clone().unwrap(), &done, "log");
        fs::write(root.join("kernel-crate/src/lib.rs"), "// saved meanwhile").unwrap();
        assert!(!session.close(false));
        assert!(load(&super::dir(&cache), &k2.unwrap()).is_none());
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
        prune(dir.path(), 2, is_json);
        assert!(!dir.path().join("old.json").exists());
        assert!(dir.path().join("mid.json").exists());
        assert!(dir.path().join("new.json").exists());
    }
}
