//! The cache of the reference solution's modules for `checker lab` and
//! `watch`.
//!
//! A skeleton's run of a lab with differential steps builds the reference
//! solution first (its modules run beside the student's), in the lab
//! folder the student's build uses next: each build undoes the other's
//! Kbuild outputs, so every run built both, about 2 s of a warm re-grade
//! on two cores, though the student's edits never change the reference.
//! Its modules are kept here under a hash of what its build read ([`key`]):
//! the run's [`Shared`] part (the kernel and macro crates, the manifests,
//! the kernel tree, the toolchain), the lab folder but the student's files,
//! and every file that cargo's dep-info of the solution's crate lists (its
//! sources, wherever they are: lab 08's are in `drivers/semaphore`). When
//! that dep-info names a student file, the reference depends on the
//! student's code, and nothing is cached.
//!
//! As with compile-fail builds ([`crate::run::cfcache`]), only `checker
//! lab` and `watch` use it, never grading; the cache's folder is read-only
//! in the build sandbox.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::run::cfcache::{self, Shared};
use crate::spec::lab::Lab;
use crate::tools::setup::Toolchain;

/// Bumped when what a key covers, or an entry holds, changes.
const FORMAT: &str = "reference-modules 1";

/// At most this many entries are kept (the oldest go first): each is a
/// lab's modules, a few hundred KiB.
const MAX_ENTRIES: usize = 32;

/// The folder of the cache in the checker's cache `cache`.
pub fn dir(cache: &Path) -> PathBuf {
    cache.join("reference-modules")
}

/// cargo's dep-info of the reference solution's crate built for `tc` in
/// the workspace `root`: `lib<package>.d` next to its static library,
/// the package being the one of the solution folder's `Cargo.toml`.
fn dep_info(lab: &Lab, root: &Path, tc: &Toolchain) -> Option<PathBuf> {
    let manifest = fs::read_to_string(lab.solution_dir().join("Cargo.toml")).ok()?;
    let manifest: toml::Table = manifest.parse().ok()?;
    let name = manifest.get("package")?.get("name")?.as_str()?;
    let profile = crate::tools::exec::kernel_profile_dir(root, tc);
    Some(profile.join(format!("lib{}.d", name.replace('-', "_"))))
}

/// The files a dep-info file lists (`target: file file ...`, a space in
/// a name escaped as `\ `).
fn listed(text: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for line in text.lines() {
        let Some((_, deps)) = line.split_once(": ") else {
            continue;
        };
        let mut name = String::new();
        let mut chars = deps.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => name.push(chars.next().unwrap_or(' ')),
                ' ' => {
                    if !name.is_empty() {
                        files.push(PathBuf::from(std::mem::take(&mut name)));
                    }
                }
                c => name.push(c),
            }
        }
        if !name.is_empty() {
            files.push(PathBuf::from(name));
        }
    }
    files
}

/// The key of the reference solution's build of `lab` in the workspace
/// `root` for `tc`, with the run's `shared` part: `None` when there is
/// no dep-info yet (no build to know the inputs of), or it names one of
/// the student's files.
pub fn key(shared: &Shared, lab: &Lab, root: &Path, tc: &Toolchain) -> Option<String> {
    let text = fs::read_to_string(dep_info(lab, root, tc)?).ok()?;
    let deps = listed(&text);
    let lab_dir = lab.dir.canonicalize().ok()?;
    let student = |path: &Path| {
        let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        path.strip_prefix(&lab_dir)
            .is_ok_and(|rel| lab.is_student_file(&rel.to_string_lossy()))
    };
    if deps.is_empty() || deps.iter().any(|d| student(d)) {
        return None;
    }
    let mut lab_files = Vec::new();
    cfcache::walk(&lab_dir, usize::MAX, &mut |p| {
        if !student(&p) {
            lab_files.push(p);
        }
    })
    .ok()?;
    let mut h = cfcache::Feed::new();
    h.feed("format", FORMAT.as_bytes());
    h.feed("shared", shared.bytes());
    h.feed("lab", lab_dir.as_os_str().as_encoded_bytes());
    h.feed("modules", lab.config.modules.join(" ").as_bytes());
    h.files(lab_files).ok()?;
    h.files(deps).ok()?;
    Some(h.hex())
}

/// Copies the modules of the entry `key` in the cache `dir` into `to`;
/// whether it had every one of `modules`.
pub fn load(dir: &Path, key: &str, modules: &[String], to: &Path) -> bool {
    let entry = dir.join(key);
    if !modules
        .iter()
        .all(|m| entry.join(format!("{m}.ko")).is_file())
    {
        return false;
    }
    // Used now: [`prune`] drops the entries unused longest.
    let _ = fs::File::open(&entry).and_then(|f| f.set_modified(std::time::SystemTime::now()));
    if fs::create_dir_all(to).is_err() {
        return false;
    }
    modules.iter().all(|m| {
        let name = format!("{m}.ko");
        fs::copy(entry.join(&name), to.join(&name)).is_ok()
    })
}

/// Keeps `modules` of the folder `from` in the cache `dir` as the entry
/// `key`; then drops the oldest entries beyond `MAX_ENTRIES` (32).
pub fn store(dir: &Path, key: &str, modules: &[String], from: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Made whole, then renamed: a run that reads it meanwhile sees no
    // entry or all of it.
    let tmp = dir.join(format!(".{key}.{}.tmp", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp)?;
    for m in modules {
        let name = format!("{m}.ko");
        fs::copy(from.join(&name), tmp.join(&name))
            .with_context(|| format!("cannot copy {}", from.join(&name).display()))?;
    }
    let entry = dir.join(key);
    let _ = fs::remove_dir_all(&entry);
    if let Err(e) = fs::rename(&tmp, &entry) {
        let _ = fs::remove_dir_all(&tmp);
        return Err(e).with_context(|| format!("cannot rename to {}", entry.display()));
    }
    cfcache::prune(dir, MAX_ENTRIES, |p| {
        p.is_dir() && !p.to_string_lossy().ends_with(".tmp")
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{host_toolchain, tree, write};

    #[test]
    fn dep_info_lists_files_with_escaped_spaces() {
        let files = listed("/t/liba.a: /w/a.rs /w/my\\ dir/b.rs /w/c.rs\n");
        assert_eq!(
            files,
            [
                PathBuf::from("/w/a.rs"),
                PathBuf::from("/w/my dir/b.rs"),
                PathBuf::from("/w/c.rs")
            ]
        );
    }

    const LAB: &str = "title='t'\nchapter='c.md'\nmodules=['counter']\nstudent=['src/mutex.rs']\n[[step]]\nname='a'\nrun='true'\n";

    /// The key follows the solution's sources and the lab's own files,
    /// never the student's; a solution that reads a student file has
    /// none.
    #[test]
    fn the_key_follows_the_reference_not_the_student() {
        let dir = tree(&[
            ("Cargo.toml", "[workspace]"),
            ("labs/lab-05/lab.toml", LAB),
            ("labs/lab-05/Kbuild", "obj-m := counter.o"),
            ("labs/lab-05/src/mutex.rs", "// student"),
            ("labs/lab-05/src/module.rs", "// shared"),
            (
                "labs/lab-05/solution/Cargo.toml",
                "[package]\nname = \"lab-05-solution\"\n",
            ),
            ("labs/lab-05/solution/src/mutex.rs", "// solution"),
            ("drivers/x/lib.rs", "// elsewhere"),
        ]);
        let root = dir.path().canonicalize().unwrap();
        let tc = host_toolchain(&root.join("cache"));
        let lab = Lab::load(&root.join("labs/lab-05")).unwrap();
        let shared = Shared::for_test(b"shared");
        assert_eq!(key(&shared, &lab, &root, &tc), None, "no dep-info yet");
        let d = |files: &[&str]| {
            let list: Vec<String> = files
                .iter()
                .map(|f| root.join(f).display().to_string())
                .collect();
            let text = format!("/t/liblab_05_solution.a: {}\n", list.join(" "));
            write(
                &root,
                &[(
                    "target/x86_64-unknown-none/kernel/liblab_05_solution.d",
                    &text,
                )],
            );
        };
        d(&[
            "labs/lab-05/solution/src/mutex.rs",
            "labs/lab-05/src/module.rs",
            "drivers/x/lib.rs",
        ]);
        let base = key(&shared, &lab, &root, &tc).expect("a key");
        write(&root, &[("labs/lab-05/src/mutex.rs", "// an edit")]);
        assert_eq!(
            key(&shared, &lab, &root, &tc).as_ref(),
            Some(&base),
            "student file"
        );
        for (file, what) in [
            ("labs/lab-05/solution/src/mutex.rs", "solution"),
            ("labs/lab-05/src/module.rs", "shared module"),
            ("labs/lab-05/Kbuild", "Kbuild"),
            ("drivers/x/lib.rs", "a source outside the lab"),
        ] {
            let old = fs::read(root.join(file)).unwrap();
            fs::write(root.join(file), "changed").unwrap();
            assert_ne!(
                key(&shared, &lab, &root, &tc).as_ref(),
                Some(&base),
                "{what}"
            );
            fs::write(root.join(file), old).unwrap();
        }
        assert_ne!(
            key(&Shared::for_test(b"other"), &lab, &root, &tc).as_ref(),
            Some(&base)
        );
        d(&[
            "labs/lab-05/solution/src/mutex.rs",
            "labs/lab-05/src/mutex.rs",
        ]);
        assert_eq!(key(&shared, &lab, &root, &tc), None, "reads a student file");
    }

    #[test]
    fn entries_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to, cache) = (
            dir.path().join("from"),
            dir.path().join("to"),
            dir.path().join("c"),
        );
        fs::create_dir_all(&from).unwrap();
        fs::write(from.join("counter.ko"), "elf").unwrap();
        let modules = vec!["counter".to_owned()];
        assert!(!load(&cache, "k", &modules, &to));
        store(&cache, "k", &modules, &from).unwrap();
        assert!(load(&cache, "k", &modules, &to));
        assert_eq!(fs::read_to_string(to.join("counter.ko")).unwrap(), "elf");
        assert!(!load(&cache, "k", &["other".to_owned()], &to));
    }
}
