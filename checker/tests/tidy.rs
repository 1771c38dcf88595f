//! Repository-wide tidiness, checked like any other test: every top-level
//! folder says what it holds, every lab is complete, sources have no
//! trailing whitespace, and `unsafe` stays in the kernel crate.

use std::path::{Path, PathBuf};
use std::process::Command;

use checker::lab::{all_labs, all_samples, Lab};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("checker/ has a parent")
        .to_path_buf()
}

/// Files tracked by git, or an empty list outside a git checkout.
fn tracked_files() -> Vec<PathBuf> {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root())
        .output();
    match out {
        Ok(out) if out.status.success() => out
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| root().join(String::from_utf8_lossy(p).as_ref()))
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn every_top_level_folder_has_a_readme() {
    for dir in [
        "book",
        "labs",
        "kernel-crate",
        "module-macro",
        "drivers",
        "vm",
        "checker",
    ] {
        let readme = root().join(dir).join("README.md");
        assert!(readme.is_file(), "{} is missing", readme.display());
    }
}

#[test]
fn every_lab_is_complete() {
    let labs = all_labs(&root()).expect("labs/ is readable");
    assert!(!labs.is_empty(), "no lab found under labs/");
    for dir in labs {
        let lab = Lab::load(&dir).expect("lab.toml parses");
        // The reference solution is not listed: it may live in `solution/`,
        // share the exercise's sources (lab 02) or be a finished driver
        // (lab 08); `checker verify` proves it passes.
        for file in [
            "README.md",
            "Kbuild",
            "Makefile",
            "Cargo.toml",
            "src/lib.rs",
        ] {
            assert!(dir.join(file).is_file(), "{}: {file} is missing", lab.name);
        }
        for index in 0..lab.config.steps.len() {
            let expected = lab.expected_path(index);
            assert!(
                expected.is_file(),
                "{}: {} is missing (run the solution with UPDATE_EXPECT=1)",
                lab.name,
                expected.display()
            );
        }
        let chapter = root().join("book/src").join(&lab.config.chapter);
        assert!(
            chapter.is_file(),
            "{}: chapter {} does not exist",
            lab.name,
            chapter.display()
        );
    }
}

/// A sample with a `lab.toml` (graded by `checker verify`) is complete too.
#[test]
fn every_sample_is_complete() {
    for dir in all_samples(&root()).expect("drivers/ is readable") {
        let lab = Lab::load(&dir).expect("lab.toml parses");
        for file in ["Kbuild", "Makefile", "Cargo.toml", "src/lib.rs"] {
            assert!(dir.join(file).is_file(), "{}: {file} is missing", lab.name);
        }
        for index in 0..lab.config.steps.len() {
            let expected = lab.expected_path(index);
            assert!(
                expected.is_file(),
                "{}: {} is missing (run it with UPDATE_EXPECT=1)",
                lab.name,
                expected.display()
            );
        }
        let chapter = root().join("book/src").join(&lab.config.chapter);
        assert!(
            chapter.is_file(),
            "{}: no chapter {}",
            lab.name,
            chapter.display()
        );
    }
}

#[test]
fn no_trailing_whitespace() {
    let mut bad = Vec::new();
    for file in tracked_files() {
        let is_text = matches!(
            file.extension().and_then(|e| e.to_str()),
            Some("rs" | "md" | "toml" | "c" | "h" | "mk" | "txt")
        ) || file
            .file_name()
            .is_some_and(|n| n == "Makefile" || n == "Kbuild");
        // Snapshots and captured reports hold real output, whitespace included.
        let is_snapshot = file.components().any(|c| {
            ["expected", "snapshots", "reports"].contains(&c.as_os_str().to_str().unwrap_or(""))
        });
        if !is_text || is_snapshot {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if line.ends_with(' ') || line.ends_with('\t') {
                bad.push(format!("{}:{}", file.display(), n + 1));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "trailing whitespace at:\n{}",
        bad.join("\n")
    );
}

/// Labs and drivers use the kernel crate's safe abstractions only.
#[test]
fn no_unsafe_outside_the_kernel_crate() {
    let mut bad = Vec::new();
    for file in tracked_files() {
        let rel = file.strip_prefix(root()).unwrap_or(&file);
        let in_modules = rel.starts_with("labs") || rel.starts_with("drivers");
        // A lab's proc-macro crate (`labs/*/macro`, `labs/*/solution/macro`)
        // runs on the host; the `unsafe(...)` attributes it emits, like
        // module-macro's, are what the lab is about.
        let is_macro_crate =
            rel.starts_with("labs") && rel.components().any(|c| c.as_os_str() == "macro");
        if !in_modules || is_macro_crate || rel.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == "unsafe")
            {
                bad.push(format!("{}:{}", rel.display(), n + 1));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "`unsafe` in module code:\n{}",
        bad.join("\n")
    );
}
