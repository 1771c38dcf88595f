//! Repository-wide tidiness, checked like any other test: every top-level
//! folder says what it holds, every lab is complete, sources have no
//! trailing whitespace, and `unsafe` stays in the kernel crate.

use std::path::{Path, PathBuf};
use std::process::Command;

use checker::spec::lab::{all_labs, all_samples, Lab};
use checker::tools::guest::Linux;
use clap::ValueEnum;

use checker::tools::workspace::source_root as root;

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
        // The reference solution is not listed: it may live in `solution/`,
        // share the exercise's sources (lab 02) or be a finished driver
        // (lab 08); `checker verify` proves it passes.
        assert_complete(
            &dir,
            &[
                "README.md",
                "Kbuild",
                "Makefile",
                "Cargo.toml",
                "src/lib.rs",
            ],
        );
    }
}

/// `dir` holds `files`, a snapshot for each step that is not differential
/// (none for one that is) and names a chapter that exists.
fn assert_complete(dir: &Path, files: &[&str]) {
    let lab = Lab::load(dir).expect("lab.toml parses");
    for file in files {
        assert!(dir.join(file).is_file(), "{}: {file} is missing", lab.name);
    }
    for (index, step) in lab.config.steps.iter().enumerate() {
        let expected = lab.expected_path(index);
        // A differential step is compared with the reference solution's
        // run in the same boot, never with a file.
        if step.differential {
            assert!(
                !expected.exists(),
                "{}: {} is never read: its step is differential",
                lab.name,
                expected.display()
            );
            continue;
        }
        assert!(
            expected.is_file(),
            "{}: {} is missing (run the solution with UPDATE_EXPECT=1)",
            lab.name,
            expected.display()
        );
        // A step per kernel has a snapshot for every series `--guest` offers.
        if step.per_kernel.is_some() {
            for series in Linux::value_variants() {
                let mut on = lab.clone();
                on.config.kernel_series = Some(series.arg().into());
                let expected = on.expected_path(index);
                assert!(
                    expected.is_file(),
                    "{}: {} is missing (run it with --guest {} and UPDATE_EXPECT=1)",
                    lab.name,
                    expected.display(),
                    series.arg()
                );
            }
        }
    }
    let chapter = root().join("book/src").join(&lab.config.chapter);
    assert!(
        chapter.is_file(),
        "{}: chapter {} does not exist",
        lab.name,
        chapter.display()
    );
}

/// No fixed transcript passes a lab whose behaviour depends on its input:
/// each such lab has a differential step (lab 01's behaviour is its
/// transcript; lab 02 is graded by the course's tests of the macro).
#[test]
fn labs_from_03_have_a_differential_step() {
    let labs = all_labs(&root()).expect("labs/ is readable");
    let differential: Vec<String> = labs
        .iter()
        .map(|dir| Lab::load(dir).expect("lab.toml parses"))
        .map(|lab| {
            let steps: Vec<&str> = lab
                .config
                .steps
                .iter()
                .filter(|s| s.differential)
                .map(|s| s.name.as_str())
                .collect();
            match steps.is_empty() {
                true => format!("{}: none", lab.name),
                false => format!("{}: {}", lab.name, steps.join(", ")),
            }
        })
        .collect();
    expect_test::expect![[r#"
        lab-01: random-names, one-name
        lab-02: none
        lab-03: random-params, random-bad-name
        lab-04: random-pushes
        lab-05: random-threads
        lab-06: random-threads
        lab-07: random-offsets, random-append
        lab-08: random-counts
        lab-09: random-counts
        lab-10: random-buffers
        lab-11: random-writes
    "#]]
    .assert_eq(&(differential.join("\n") + "\n"));
}

/// Every step of every lab tells a student who failed it where to look;
/// and a step that runs the course's code, not the student's (lab 08's C
/// twin), scores no points.
#[test]
fn every_step_has_a_hint_and_only_the_students_code_scores() {
    let mut missing = Vec::new();
    for dir in all_labs(&root()).expect("labs/ is readable") {
        let lab = Lab::load(&dir).expect("lab.toml parses");
        for step in &lab.config.steps {
            if step.hint.as_deref().is_none_or(|h| h.trim().is_empty()) {
                missing.push(format!("{}: {} has no hint", lab.name, step.name));
            }
            if step.name.starts_with("c-") && step.points != 0 {
                missing.push(format!(
                    "{}: {} runs the C twin but scores",
                    lab.name, step.name
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// A sample with a `lab.toml` (graded by `checker verify`) is complete too.
#[test]
fn every_sample_is_complete() {
    for dir in all_samples(&root()).expect("drivers/ is readable") {
        assert_complete(&dir, &["Kbuild", "Makefile", "Cargo.toml", "src/lib.rs"]);
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

/// Labs and drivers use the kernel crate's safe abstractions only, but for
/// the student files of a lab that allows `unsafe` (lab 09, whose lesson
/// is writing an abstraction): its skeleton and solution copies.
#[test]
fn no_unsafe_outside_the_kernel_crate() {
    let mut allowed = Vec::new();
    for dir in all_labs(&root()).expect("labs/ is readable") {
        let lab = Lab::load(&dir).expect("lab.toml parses");
        if lab
            .config
            .allow
            .contains(&checker::spec::policy::Rule::Unsafe)
        {
            for f in lab.student_files().expect("the student files are listed") {
                allowed.push(normalise(&lab.dir.join(&f)));
            }
            for f in lab
                .solution_files()
                .expect("the solution's files are listed")
            {
                allowed.push(normalise(&lab.solution_dir().join(&f)));
            }
        }
    }
    let mut bad = Vec::new();
    for file in tracked_files() {
        if allowed.contains(&normalise(&file)) {
            continue;
        }
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

/// A lab's answer, as the book must not show it before its solution page:
/// the reference solution's folder when it lies inside the lab folder
/// (`labs/lab-NN/solution/**`), or else only the solution's copies of the
/// student files (lab 08's `drivers/semaphore/src/lib.rs`, whose C twin
/// and other files the chapter may show). Paths are relative to the
/// repository, normalised.
struct Answer {
    /// The chapter of the lab (`lab.toml`'s `chapter`).
    chapter: String,
    /// Folders and files under which every file is the answer.
    paths: Vec<PathBuf>,
}

/// `path` with `.` and `..` resolved without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn answers() -> Vec<Answer> {
    let root = root();
    let mut answers = Vec::new();
    for dir in all_labs(&root).expect("labs/ is readable") {
        let lab = Lab::load(&dir).expect("lab.toml parses");
        let relative = |p: &Path| normalise(p.strip_prefix(&root).unwrap_or(p));
        let solution = relative(&lab.solution_dir());
        let lab_dir = relative(&lab.dir);
        let paths = if solution.starts_with(&lab_dir) && solution != lab_dir {
            vec![solution]
        } else {
            lab.solution_files()
                .expect("the solution's files are listed")
                .iter()
                .map(|f| normalise(&solution.join(f)))
                .collect()
        };
        answers.push(Answer {
            chapter: lab.config.chapter.clone(),
            paths,
        });
    }
    answers
}

/// The files a book page includes (`{{#include PATH[:anchor]}}`,
/// `{{#rustdoc_include ...}}`), relative to the repository.
fn included_files(text: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for directive in ["{{#include", "{{#rustdoc_include"] {
        for (at, _) in text.match_indices(directive) {
            let rest = &text[at + directive.len()..];
            let Some(end) = rest.find("}}") else {
                continue;
            };
            let Some(arg) = rest[..end].split_whitespace().next() else {
                continue;
            };
            let path = arg.split(':').next().unwrap_or(arg);
            files.push(normalise(&Path::new("book/src").join(path)));
        }
    }
    files
}

/// What `page` (a file name in `book/src`) includes of a lab's answer
/// although it is not that lab's solution page, `CHAPTER-solution.md`.
fn answers_shown(page: &str, text: &str, answers: &[Answer]) -> Vec<String> {
    let mut shown = Vec::new();
    for file in included_files(text) {
        for answer in answers {
            let solution_page = answer.chapter.replace(".md", "-solution.md");
            if page != solution_page && answer.paths.iter().any(|p| file.starts_with(p)) {
                shown.push(format!(
                    "book/src/{page} includes {}: only {solution_page} may",
                    file.display()
                ));
            }
        }
    }
    shown
}

/// The answer is not on the chapter's page: a chapter shows the idea and
/// the API, and the reference solution's code appears only on the lab's
/// solution page after it (`CHAPTER-solution.md`), which must exist.
#[test]
fn chapters_do_not_show_the_answer() {
    let answers = answers();
    let book = root().join("book/src");
    let mut bad = Vec::new();
    for entry in std::fs::read_dir(&book).expect("book/src is readable") {
        let path = entry.expect("book/src is readable").path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let page = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("a page is readable");
        bad.extend(answers_shown(&page, &text, &answers));
    }
    for answer in &answers {
        let page = answer.chapter.replace(".md", "-solution.md");
        if !book.join(&page).is_file() {
            bad.push(format!(
                "{}'s lab has no solution page book/src/{page}",
                answer.chapter
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The check catches the book as it was before the answers moved: each of
/// these chapters showed its lab's solution (commit 4b012a0). Outside a
/// git checkout with that commit, the literal case below still runs.
#[test]
fn the_answer_check_fails_on_the_old_book() {
    let answers = answers();
    let page = "first-module.md";
    let text = "```rust,ignore\n{{#include ../../labs/lab-01/solution/src/lib.rs:init}}\n```\n";
    assert!(!answers_shown(page, text, &answers).is_empty());
    let text = "{{#rustdoc_include ../../drivers/semaphore/src/lib.rs:consume}}";
    assert!(!answers_shown("semaphore.md", text, &answers).is_empty());
    assert!(answers_shown("semaphore-solution.md", text, &answers).is_empty());
    let c_twin = "{{#include ../../drivers/semaphore/rust_semaphore_c.c:consume}}";
    assert!(answers_shown("semaphore.md", c_twin, &answers).is_empty());
    let exercise = "{{#include ../../labs/lab-04/src/vec.rs:todo}}";
    assert!(answers_shown("errors-and-allocation.md", exercise, &answers).is_empty());

    for page in [
        "first-module.md",
        "module-parameters.md",
        "errors-and-allocation.md",
        "sync-mutex.md",
        "sync-condvar.md",
        "semaphore.md",
    ] {
        let old = Command::new("git")
            .args(["show", &format!("4b012a0:book/src/{page}")])
            .current_dir(root())
            .output();
        let Ok(old) = old else { continue };
        if !old.status.success() {
            continue;
        }
        let text = String::from_utf8_lossy(&old.stdout);
        assert!(
            !answers_shown(page, &text, &answers).is_empty(),
            "the old {page} showed its lab's answer, and the check missed it"
        );
    }
}
