//! `checker export-course DIR`: the course as a repository for students,
//! without the answers.
//!
//! The instructor keeps this repository (solutions, solution pages, the
//! finished drivers) and grades from it (`checker grade`); students get a
//! copy made by [`export`]:
//!
//! - every file git tracks, as it is in the working tree, except
//!   [`LEFT_OUT`] (CI, and the checker's fixtures and tests, which hold
//!   copies of answers);
//! - the answers that [`crate::batch::gradedir::answers`] finds for a
//!   grading workspace left out or replaced the same way: no lab's
//!   `solution/` folder, and each driver a lab builds against (labs 08, 10
//!   and 11: `drivers/semaphore`, `drivers/binder`, `drivers/nvme`) with its
//!   student files in skeleton form, the TODO markers' skeleton lines in
//!   place of the solution's;
//! - the book without its solution pages (see [`plan_book`]): each page
//!   named `*-solution.md` or showing an answer through an include is left
//!   out of `SUMMARY.md`, and links to it become plain text; a chapter that
//!   stays and includes an answer stops the export;
//! - every markdown file (book pages, READMEs) in its students' form
//!   ([`students_text`]): without its `<!-- course-only -->` regions, with
//!   the lines of its `<!-- students-only` comments; a book page left with
//!   nothing is left out like a solution page;
//! - the top-level `Cargo.toml` listing only the packages left;
//! - [`STUDENT_COURSE`] at the root, which tells the checker that the labs
//!   have no solution folder (and refuses `--solution` there);
//! - for each lab with differential steps, the reference solution's
//!   compiled modules in `references/<lab>/` with the kernel ABI they were
//!   built for (the steps load them next to the student's; a different ABI
//!   on the student's machine is a clear error). Not in the lab folder,
//!   where Kbuild's `make clean` would delete them.
//!
//! Before it returns, [`audit`] reads every exported file for a marker
//! line and for any line of an answer that the full course has nowhere
//! else (a *distinctive* line), and the text students read for what they
//! would look for in vain there ([`text_findings`]: `SOLUTION=1`, a
//! solution folder or page, a path not exported); finding one is an error.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::batch::gradedir::{self, Answers};
use crate::spec::policy::lexical;
use crate::spec::skeleton;
use crate::tools::setup::Toolchain;

/// The file at a student repository's root (see [`crate::spec::lab`]).
pub const STUDENT_COURSE: &str = crate::spec::lab::STUDENT_COURSE;

/// The folder of a student repository holding each lab's reference
/// modules, one folder per kernel ABI: `references/<lab>/<abi>/`.
pub const REFERENCE_DIR: &str = crate::spec::lab::REFERENCE_DIR;

/// Course paths never exported: CI (it runs the full repository's
/// checks; `.github/classroom/` stays, for a Classroom starter repository), the checker's broken-module fixtures and its tests (both hold
/// copies of answers, and need the solutions).
pub const LEFT_OUT: [&str; 4] = [
    ".github/workflows",
    ".ci",
    "checker/fixtures",
    "checker/tests",
];

/// The book's size tables (`make sizes`, `book/src/generated/`), which an
/// export takes from the course as they are.
pub const SIZE_TABLES: [&str; 3] = ["sizes.md", "binder-sizes.md", "nvme-sizes.md"];

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The labs whose reference modules are built and shipped: `None`,
    /// every lab with differential steps.
    pub references: Option<Vec<String>>,
}

/// What an export wrote.
#[derive(Debug, Default)]
pub struct Exported {
    /// Files written.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Book pages left out, relative to the root.
    pub pages_left_out: Vec<String>,
    /// Files written in skeleton form, relative to the root.
    pub skeletons: Vec<String>,
    /// Labs whose reference modules were shipped.
    pub references: Vec<String>,
}

/// `dir` must not exist, or be an empty folder: an export never mixes
/// with other files.
pub fn ensure_empty(dir: &Path) -> Result<()> {
    match fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "{} is not empty: export-course writes a new repository; give it a new or empty folder",
                    dir.display()
                );
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) if dir.exists() => bail!("{} exists and is not a folder", dir.display()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", dir.display())),
    }
}

/// The files of the course at `root`, relative and `/`-separated: when
/// `root` is the top of a git working tree, those git tracks that exist in
/// it (so build output and
/// generated files stay out), else, outside git, every file but build
/// output, `.git`, `target/`, `node_modules/` and `book/build/`.
pub fn course_files(root: &Path) -> Result<Vec<String>> {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    // Only a repository whose top is `root` (not one `root` lies in).
    let top = git(&["rev-parse", "--show-toplevel"]).and_then(|o| {
        let top = PathBuf::from(String::from_utf8(o.stdout).ok()?.trim_end());
        Some(top.canonicalize().ok()? == root.canonicalize().ok()?)
    });
    let out = git(&["ls-files", "-z", "--cached"]).filter(|_| top == Some(true));
    let mut files: Vec<String> = match out {
        Some(o) => String::from_utf8(o.stdout)
            .context("git ls-files: a path that is not UTF-8")?
            .split('\0')
            .filter(|p| !p.is_empty())
            .filter(|p| fs::symlink_metadata(root.join(p)).is_ok())
            .map(str::to_owned)
            .collect(),
        None => {
            let mut v = Vec::new();
            walk(root, Path::new(""), &mut v)?;
            v
        }
    };
    files.sort();
    files.dedup();
    Ok(files)
}

fn walk(root: &Path, rel: &Path, out: &mut Vec<String>) -> Result<()> {
    for entry in fs::read_dir(root.join(rel))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".git"
            || crate::tools::discovery::is_build_output(&name)
            || (rel.as_os_str().is_empty() && name == "node_modules")
            || (rel == Path::new("book") && name == "build")
        {
            continue;
        }
        let path = rel.join(&name);
        if entry.file_type()?.is_dir() {
            walk(root, &path, out)?;
        } else {
            out.push(path.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

fn under(path: &str, folder: &str) -> bool {
    path == folder
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The book as students get it.
#[derive(Debug, Default, PartialEq)]
pub struct BookPlan {
    /// Pages left out (relative to the course root).
    pub left_out: Vec<String>,
    /// Pages written changed (SUMMARY.md, links to pages left out made
    /// plain text): path relative to the root, new text.
    pub changed: BTreeMap<String, String>,
    /// Files under [`LEFT_OUT`] that a page kept includes: exported all
    /// the same (the audit still reads them).
    pub extra: BTreeSet<String>,
}

/// One `{{#include ...}}` (or `rustdoc_include`) of a page: the file,
/// relative to the page's folder, and what part of it.
#[derive(Debug, PartialEq)]
struct Include<'a> {
    file: &'a str,
    part: Option<&'a str>,
}

/// The includes of a page.
fn includes(page: &str) -> Vec<Include<'_>> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find("{{#") {
        let after = &rest[start + 3..];
        let Some(end) = after.find("}}") else { break };
        let body = after[..end].trim();
        rest = &after[end + 2..];
        let Some((cmd, arg)) = body.split_once(char::is_whitespace) else {
            continue;
        };
        if !matches!(cmd, "include" | "rustdoc_include" | "playground") {
            continue;
        }
        let arg = arg.trim();
        let (file, part) = match arg.split_once(':') {
            Some((f, p)) => (f, Some(p)),
            None => (arg, None),
        };
        out.push(Include { file, part });
    }
    out
}

/// The 0-based lines of `text` an include's `part` takes: all, an anchor's
/// (`ANCHOR: name` to `ANCHOR_END: name`), or a 1-based range `a:b`
/// (either end may be left out), as mdBook reads them.
fn included_lines(text: &str, part: Option<&str>) -> std::ops::Range<usize> {
    let n = text.lines().count();
    let Some(part) = part else { return 0..n };
    let mut nums = part.splitn(2, ':');
    let first = nums.next().unwrap_or("");
    if first.is_empty() || first.parse::<usize>().is_ok() {
        let a = first.parse::<usize>().map_or(0, |a| a.saturating_sub(1));
        let b = match nums.next() {
            None => a + 1,
            Some("") => n,
            Some(b) => b.parse::<usize>().unwrap_or(n),
        };
        return a.min(n)..b.min(n).max(a.min(n));
    }
    let name = first.trim();
    let is = |line: &str, tag: &str| {
        line.split_once(tag)
            .is_some_and(|(_, rest)| rest.trim() == name)
    };
    let lines: Vec<&str> = text.lines().collect();
    let Some(open) = lines.iter().position(|l| is(l, "ANCHOR:")) else {
        return 0..0;
    };
    let close = lines[open..]
        .iter()
        .position(|l| is(l, "ANCHOR_END:"))
        .map_or(n, |i| open + i);
    open..close
}

/// Whether lines `range` of `text` show any of a solution region (a marker
/// or a line between `TODO-BEGIN` and `TODO-END`).
fn shows_region(text: &str, range: std::ops::Range<usize>) -> bool {
    let flags = skeleton::region_lines(text);
    flags
        .get(range.start..range.end.min(flags.len()))
        .is_some_and(|r| r.iter().any(|&f| f))
}

/// What of an answer an include of the page at `page` (relative to
/// `root`) shows, if any.
fn include_answer(
    root: &Path,
    page: &str,
    inc: &Include<'_>,
    answers: &Answers,
) -> Option<&'static str> {
    let page_dir = Path::new(page).parent().unwrap_or(Path::new(""));
    let rel = lexical(&page_dir.join(inc.file));
    if answers.folders.iter().any(|f| rel.starts_with(f)) {
        return Some("a reference solution's file");
    }
    let text = fs::read_to_string(root.join(&rel)).ok()?;
    shows_region(&text, included_lines(&text, inc.part)).then_some("a solution region")
}

/// The file an include of `page` names, relative to the root, if it is
/// under [`LEFT_OUT`] (a chapter may show a fixture or a test's snapshot).
fn left_out_include(page: &str, inc: &Include<'_>) -> Option<String> {
    let page_dir = Path::new(page).parent().unwrap_or(Path::new(""));
    let rel = lexical(&page_dir.join(inc.file))
        .to_string_lossy()
        .replace('\\', "/");
    LEFT_OUT.iter().any(|l| under(&rel, l)).then_some(rel)
}

/// The file names of markdown links in `line`: `[text](target)`.
fn link_targets(line: &str) -> Vec<&str> {
    line.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &line[i + 2..];
            rest.find(')')
                .map(|end| rest[..end].split('#').next().unwrap_or(""))
        })
        .collect()
}

/// `text` with each link to a page named in `gone` made its plain text.
fn unlink(text: &str, gone: &BTreeSet<&str>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        let target_end = rest[i + 2..].find(')').map(|e| i + 2 + e);
        let open = rest[..i].rfind('[');
        match (target_end, open) {
            (Some(end), Some(open))
                if gone.contains(rest[i + 2..end].split('#').next().unwrap_or("")) =>
            {
                out.push_str(&rest[..open]);
                out.push_str(&rest[open + 1..i]);
                rest = &rest[end + 1..];
            }
            _ => {
                out.push_str(&rest[..i + 2]);
                rest = &rest[i + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The book of the course at `root` (whose files are `files`) without its
/// solution pages: a page of `SUMMARY.md` is left out when its name ends
/// in `-solution.md`, an include of it shows an answer, or one names a
/// file not exported (the instructors' page shows the checker's tests). A page that
/// stays and shows an answer is an error naming the page and the include.
pub fn plan_book(root: &Path, files: &[String], answers: &Answers) -> Result<BookPlan> {
    let src = book_src(root);
    let summary_path = format!("{src}/SUMMARY.md");
    let Ok(summary) = fs::read_to_string(root.join(&summary_path)) else {
        return Ok(BookPlan::default());
    };
    let mut left_out = BTreeSet::new();
    for line in summary.lines() {
        for target in link_targets(line) {
            let page = format!("{src}/{target}");
            let blank = || {
                fs::read_to_string(root.join(&page))
                    .ok()
                    .and_then(|t| students_text(&t).ok())
                    .is_some_and(|t| t.trim().is_empty())
            };
            if root.join(&page).is_file() && (target.ends_with("-solution.md") || blank()) {
                left_out.insert(target.to_owned());
            }
        }
    }
    let gone: BTreeSet<&str> = left_out.iter().map(String::as_str).collect();
    let mut plan = BookPlan::default();
    let kept_summary: String = summary
        .split_inclusive('\n')
        .filter(|l| !link_targets(l).iter().any(|t| gone.contains(t)))
        .collect();
    plan.changed.insert(summary_path.clone(), kept_summary);
    let mut errors = Vec::new();
    for f in files.iter().filter(|f| f.ends_with(".md")) {
        let name = f.strip_prefix(&format!("{src}/"));
        if name.is_some_and(|name| gone.contains(name)) {
            plan.left_out.push(f.clone());
            continue;
        }
        if *f == summary_path {
            continue;
        }
        let Ok(full) = fs::read_to_string(root.join(f)) else {
            continue;
        };
        // Every markdown file as students get it (see [`students_text`]);
        // only the book's pages have includes and links to pages left out.
        let text = students_text(&full).map_err(|e| anyhow::anyhow!("{f}: {e}"))?;
        if name.is_none() {
            if text != full {
                plan.changed.insert(f.clone(), text);
            }
            continue;
        }
        for inc in includes(&text) {
            if let Some(file) = left_out_include(f, &inc) {
                plan.extra.insert(file);
            }
            if let Some(why) = include_answer(root, f, &inc, answers) {
                let part = inc.part.map(|p| format!(":{p}")).unwrap_or_default();
                errors.push(format!(
                    "{f}: {{{{#include {}{part}}}}} shows {why}; a chapter students get must not \
                     (move it to the chapter's solution page)",
                    inc.file
                ));
            }
        }
        let new = unlink(&text, &gone);
        if new != full {
            plan.changed.insert(f.clone(), new);
        }
    }
    if !errors.is_empty() {
        bail!(
            "the book shows answers outside its solution pages:\n  {}",
            errors.join("\n  ")
        );
    }
    Ok(plan)
}

/// The book's source folder (`[book] src` of `book.toml`), relative to
/// the root.
fn book_src(root: &Path) -> String {
    fs::read_to_string(root.join("book.toml"))
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| {
            t.get("book")?
                .get("src")?
                .as_str()
                .map(|s| s.trim_end_matches('/').to_owned())
        })
        .unwrap_or_else(|| "book/src".to_owned())
}

/// Whether `rel` is exported at all.
fn exported(rel: &str, answers: &Answers, book: &BookPlan) -> bool {
    (book.extra.contains(rel) || !LEFT_OUT.iter().any(|l| under(rel, l)))
        && !answers
            .folders
            .iter()
            .any(|f| Path::new(rel).starts_with(f))
        && !book.left_out.iter().any(|p| p == rel)
}

/// Writes the student repository of the course at `root` into `dir` (see
/// the module docs), saying what it does through `say`. Each toolchain
/// of `kernels` builds the reference modules for its kernel; with none,
/// none are shipped.
pub fn export(
    root: &Path,
    dir: &Path,
    opts: &Options,
    kernels: &[Toolchain],
    say: &mut dyn FnMut(&str),
) -> Result<Exported> {
    ensure_empty(dir)?;
    let course = crate::spec::lab::course_labs(root)?;
    let answers = gradedir::answers(root, &course)?;
    let files = course_files(root)?;
    let book = plan_book(root, &files, &answers)?;
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut done = Exported::default();
    let skeletons: BTreeMap<String, &String> = answers
        .skeletons
        .iter()
        .map(|(p, t)| (p.to_string_lossy().replace('\\', "/"), t))
        .collect();
    say(&format!(
        "export: {} course files; leaving out {}",
        files.len(),
        LEFT_OUT
            .iter()
            .map(|s| s.to_string())
            .chain(answers.folders.iter().map(|f| f.display().to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for rel in files.iter().filter(|f| exported(f, &answers, &book)) {
        let (src, dst) = (root.join(rel), dir.join(rel));
        if let Some(parent) = dst.parent() {
            fs::create_dir_all(parent)?;
        }
        let meta = fs::symlink_metadata(&src)?;
        if meta.file_type().is_symlink() {
            let link = fs::read_link(&src)?;
            let parent = Path::new(rel).parent().unwrap_or(Path::new(""));
            let target = lexical(&parent.join(&link));
            let inside = link.is_relative() && !target.starts_with("..");
            let target_rel = target.to_string_lossy().replace('\\', "/");
            if !inside || !exported(&target_rel, &answers, &book) {
                bail!(
                    "{rel} is a symbolic link to {}, which the students' repository does not \
                     hold (an answer, or outside the course): make it a file or remove it",
                    link.display()
                );
            }
            std::os::unix::fs::symlink(&link, &dst)?;
            continue;
        }
        if let Some(text) = skeletons.get(rel) {
            fs::write(&dst, text)?;
            done.skeletons.push(rel.clone());
            say(&format!("export: {rel} in skeleton form"));
        } else if let Some(text) = book.changed.get(rel) {
            fs::write(&dst, text)?;
        } else if rel == "Cargo.toml" {
            // Written last: it lists the packages left.
            continue;
        } else {
            fs::copy(&src, &dst)
                .with_context(|| format!("cannot copy {} to {}", src.display(), dst.display()))?;
            // Cargo compares sources' times with a seeded target's.
            if let Ok(time) = meta.modified() {
                let _ = fs::File::options()
                    .write(true)
                    .open(&dst)
                    .and_then(|f| f.set_modified(time));
            }
        }
        done.files += 1;
        done.bytes += fs::metadata(&dst).map_or(0, |m| m.len());
    }
    if let Ok(text) = fs::read_to_string(root.join("Cargo.toml")) {
        let manifest = gradedir::workspace_manifest(&text, dir, true);
        fs::write(dir.join("Cargo.toml"), manifest)?;
        done.files += 1;
    }
    done.pages_left_out = book.left_out.clone();
    say(&format!(
        "export: the book without {} pages (its solution pages, and any with nothing for students)",
        book.left_out.len()
    ));
    fs::write(
        dir.join(STUDENT_COURSE),
        "# A student repository, written by `checker export-course` from the course's\n\
         # full repository: the labs have no solution folder, and the checker refuses\n\
         # --solution here. Your instructor grades from the full repository.\n",
    )?;
    let gitignore = dir.join(".gitignore");
    let mut ignore = fs::read_to_string(&gitignore).unwrap_or_default();
    ignore.push_str(
        "# The reference modules the differential steps load (checker export-course)\n\
         !/references/*/*/*.ko\n",
    );
    // The book's size tables measure the finished drivers, which the
    // export holds as skeletons: it keeps the course's (`make sizes` there
    // leaves them).
    let generated = Path::new("book/src/generated");
    for table in SIZE_TABLES {
        let from = root.join(generated).join(table);
        if from.is_file() {
            fs::create_dir_all(dir.join(generated))?;
            fs::copy(&from, dir.join(generated).join(table))?;
            ignore.push_str(&format!("!/book/src/generated/{table}\n"));
        }
    }
    fs::write(&gitignore, ignore)?;
    for tc in kernels {
        for lab in course.values().filter(|l| l.has_differential()) {
            let wanted = opts
                .references
                .as_ref()
                .is_none_or(|only| only.contains(&lab.name));
            if !wanted {
                continue;
            }
            let started = Instant::now();
            let to = reference_dir(dir, &lab.name, &tc.abi);
            let log = root
                .join("target/checker/export")
                .join(format!("{}-{}-reference.log", lab.name, tc.abi));
            fs::create_dir_all(log.parent().expect("a log has a folder"))?;
            crate::run::build_reference(lab, tc, &to, &log)?;
            strip_debug_info(&to)?;
            say(&format!(
                "export: {} reference modules built for {} ({:.1} s)",
                lab.name,
                tc.abi,
                started.elapsed().as_secs_f64()
            ));
            if !done.references.contains(&lab.name) {
                done.references.push(lab.name.clone());
            }
        }
    }
    let leaks = audit(root, &files, &answers, &book, dir)?;
    if !leaks.is_empty() {
        bail!(
            "{} holds answers (left for you to look at):\n  {}",
            dir.display(),
            leaks.join("\n  ")
        );
    }
    say(&format!(
        "export: audit: no marker, no line of an answer and no text about one in {}",
        dir.display()
    ));
    Ok(done)
}

/// Where a student repository keeps `lab`'s reference modules built for
/// the kernel ABI `abi`: `references/<lab>/<abi>/`.
pub fn reference_dir(course: &Path, lab: &str, abi: &str) -> PathBuf {
    course.join(REFERENCE_DIR).join(lab).join(abi)
}

/// Drops the debug sections of the modules in `dir`, as Debian does for
/// its own: the differential steps only load them, and their DWARF would
/// name the solution's files and lines.
fn strip_debug_info(dir: &Path) -> Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "ko") {
            let status = Command::new("strip")
                .arg("--strip-debug")
                .arg(&path)
                .status()
                .context("cannot run strip (binutils)")?;
            if !status.success() {
                bail!("strip --strip-debug {} failed ({status})", path.display());
            }
        }
    }
    Ok(())
}

/// Whether a trimmed line is long enough to tell an answer by.
fn telling(line: &str) -> bool {
    line.chars().filter(|c| c.is_alphanumeric()).count() >= 12
}

/// The lines of an answer (trimmed) that the course at `root` has nowhere
/// but in its answers: a solution folder's files, the solution regions of
/// a driver that is a lab's solution, the book's pages left out, and
/// [`LEFT_OUT`].
pub fn distinctive_lines(
    root: &Path,
    files: &[String],
    answers: &Answers,
    book: &BookPlan,
) -> Result<HashSet<String>> {
    let mut answer = HashSet::new();
    let mut elsewhere = HashSet::new();
    let skeletons: BTreeMap<&Path, &String> = answers
        .skeletons
        .iter()
        .map(|(p, t)| (p.as_path(), t))
        .collect();
    for rel in files {
        let Ok(text) = fs::read_to_string(root.join(rel)) else {
            continue;
        };
        let path = Path::new(rel);
        if answers.folders.iter().any(|f| path.starts_with(f)) {
            answer.extend(text.lines().map(|l| l.trim().to_owned()));
        } else if let Some(skel) = skeletons.get(path) {
            let flags = skeleton::region_lines(&text);
            for (line, inside) in text.lines().zip(flags) {
                if inside {
                    answer.insert(line.trim().to_owned());
                }
            }
            elsewhere.extend(skel.lines().map(|l| l.trim().to_owned()));
        } else if exported(rel, answers, book) {
            elsewhere.extend(text.lines().map(|l| l.trim().to_owned()));
        }
    }
    Ok(answer
        .into_iter()
        .filter(|l| telling(l) && !elsewhere.contains(l))
        .collect())
}

/// What of an answer the tree at `dir` holds: each marker line and each
/// line that [`distinctive_lines`] finds, and what [`text_findings`] finds
/// in its text, as `path:line: what`.
pub fn audit(
    root: &Path,
    files: &[String],
    answers: &Answers,
    book: &BookPlan,
    dir: &Path,
) -> Result<Vec<String>> {
    let distinctive = distinctive_lines(root, files, answers, book)?;
    let mut found = Vec::new();
    // Every file but `.git` and `target/`.
    let exported = crate::tools::discovery::regular_files(dir, |folder, name| {
        folder.as_os_str().is_empty() && (name == ".git" || name == "target")
    })?;
    for rel in exported {
        let Ok(text) = fs::read_to_string(dir.join(&rel)) else {
            continue; // not text: the reference modules
        };
        for (i, line) in text.lines().enumerate() {
            if skeleton::is_marker(line) {
                found.push(format!("{rel}:{}: a TODO marker", i + 1));
            } else if distinctive.contains(line.trim()) {
                found.push(format!(
                    "{rel}:{}: a line of an answer: {}",
                    i + 1,
                    line.trim()
                ));
            }
        }
        found.extend(text_findings(&rel, &text, &|p| {
            let folder = format!("{p}/");
            if dir.join(p).exists() {
                Some(true)
            } else {
                // A file the course tracks, or a folder of one (not build output).
                let under = files.get(files.partition_point(|f| *f < folder));
                (files.binary_search_by(|f| f.as_str().cmp(p)).is_ok()
                    || under.is_some_and(|f| f.starts_with(&folder)))
                .then_some(false)
            }
        }));
    }
    Ok(found)
}

/// Opens a region of a markdown file that only the full course has: the
/// lines from it to [`COURSE_ONLY_END`] (both markers included) are not
/// exported. Both are HTML comments, so the full book shows what is between.
pub const COURSE_ONLY: &str = "<!-- course-only -->";
/// Closes a [`COURSE_ONLY`] region.
pub const COURSE_ONLY_END: &str = "<!-- end course-only -->";
/// Opens an HTML comment, closed by a line `-->`, whose lines only the
/// students' repository has: the export drops the two comment lines and
/// keeps those between (invisible in the full book, shown in theirs).
pub const STUDENTS_ONLY: &str = "<!-- students-only";

/// A markdown file's text as the students' repository has it: without its
/// [`COURSE_ONLY`] regions, with its [`STUDENTS_ONLY`] comments' lines.
/// Each marker is a line of its own; one left open, or one inside another,
/// is an error naming its line.
pub fn students_text(text: &str) -> Result<String, String> {
    #[derive(PartialEq)]
    enum In {
        Both,
        Course(usize),
        Students(usize),
    }
    let mut state = In::Both;
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let t = line.trim();
        let marker = t == COURSE_ONLY || t == COURSE_ONLY_END || t.starts_with(STUDENTS_ONLY);
        match state {
            In::Both if t == COURSE_ONLY => state = In::Course(i + 1),
            In::Both if t == STUDENTS_ONLY => state = In::Students(i + 1),
            In::Both if marker => {
                return Err(format!(
                    "line {}: {t} out of place (`{COURSE_ONLY}` ... `{COURSE_ONLY_END}`, or \
                     `{STUDENTS_ONLY}` alone on its line ... `-->`)",
                    i + 1
                ))
            }
            In::Both => out.push_str(line),
            In::Course(_) if t == COURSE_ONLY_END => state = In::Both,
            In::Students(_) if t == "-->" => state = In::Both,
            In::Course(open) | In::Students(open) if marker => {
                return Err(format!(
                    "line {}: {t} inside the region opened at line {open}",
                    i + 1
                ))
            }
            // It would end the comment early in the full book.
            In::Students(open) if t.contains("-->") => {
                return Err(format!(
                    "line {}: {t} inside the region opened at line {open}",
                    i + 1
                ))
            }
            In::Course(_) => {}
            In::Students(_) => out.push_str(line),
        }
    }
    match state {
        In::Both => Ok(out),
        In::Course(open) | In::Students(open) => Err(format!("line {open}: a region never closed")),
    }
}

/// The `lab.toml` keys the checker reads that name a solution: a line
/// setting one is not text for students.
const SOLUTION_KEYS: [&str; 2] = ["host_solution", "solution_dir"];

/// What of the exported file `rel` students read as text: every line of a
/// markdown file and of a `lab.toml` (its hints) but the [`SOLUTION_KEYS`],
/// the comments of the labs' and drivers' sources, `Kbuild`s, `Makefile`s
/// and manifests, and of the top `Cargo.toml`; `None` for the rest (the
/// checker's sources and the top `Makefile` are tooling that handles
/// `--solution` in both repositories).
fn reader_text(rel: &str, line: &str) -> Option<String> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let comment = |mark: &str| line.find(mark).map(|i| line[i..].to_owned());
    if rel.ends_with(".md") {
        return Some(line.to_owned());
    }
    if name == "lab.toml" {
        let key = line.split('=').next().unwrap_or("").trim();
        return (!SOLUTION_KEYS.contains(&key)).then(|| line.to_owned());
    }
    if rel == "Cargo.toml" {
        return comment("#");
    }
    if !(under(rel, "labs") || under(rel, "drivers")) {
        return None;
    }
    if name.ends_with(".rs") {
        comment("//")
    } else if name == "Kbuild" || name == "Makefile" || name.ends_with(".toml") {
        comment("#")
    } else {
        None
    }
}

/// Whether `text` mentions what the students' repository does not have:
/// `SOLUTION=1`, a `solution/` folder, or a solution page.
fn mentions_solution(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    let folder = lower
        .match_indices("solution")
        .any(|(i, w)| lower[..i].ends_with('/') || lower[i + w.len()..].starts_with('/'));
    if lower.contains("solution=1") {
        Some("`SOLUTION=1`, refused in the students' repository")
    } else if folder {
        Some("a solution folder, not in the students' repository")
    } else if lower.contains("solution page") || lower.contains("-solution.md") {
        Some("a solution page, not in the students' book")
    } else {
        None
    }
}

/// The spans of `text` between backquotes, and its markdown links'
/// targets, that look like a path: no space, a `/`, not absolute, not a
/// URL, no pattern; a `:line` suffix dropped.
fn path_like(text: &str) -> Vec<&str> {
    let quoted = text.split('`').skip(1).step_by(2);
    let linked = link_targets(text);
    quoted
        .chain(linked)
        .map(|p| {
            let p = p.split('#').next().unwrap_or("");
            let p = p.trim_end_matches(|c: char| c.is_ascii_digit() || c == ':');
            p.trim_end_matches('/')
        })
        .filter(|p| {
            p.contains('/')
                && !p.starts_with('/')
                && !p.contains("://")
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_'))
        })
        .collect()
}

/// What a reader of the exported file `rel` would look for in vain: each
/// line of its text (see `reader_text`) that `mentions_solution`, or
/// that names a path which, from the file's folder or one above it,
/// `exists` says is in the full course (`Some(false)`) and in the export
/// nowhere (never `Some(true)`); as `path:line: what`.
pub fn text_findings(rel: &str, text: &str, exists: &dyn Fn(&str) -> Option<bool>) -> Vec<String> {
    let folders: Vec<&Path> = Path::new(rel).ancestors().skip(1).collect();
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(read) = reader_text(rel, line) else {
            continue;
        };
        if let Some(what) = mentions_solution(&read) {
            found.push(format!("{rel}:{}: names {what}: {}", i + 1, line.trim()));
            continue;
        }
        for path in path_like(&read) {
            let seen: Vec<Option<bool>> = folders
                .iter()
                .map(|f| lexical(&f.join(path)))
                .filter(|p| !p.starts_with(".."))
                .map(|p| exists(&p.to_string_lossy()))
                .collect();
            if !seen.contains(&Some(true)) && seen.contains(&Some(false)) {
                found.push(format!(
                    "{rel}:{}: names `{path}`, which the export does not hold",
                    i + 1
                ));
            }
        }
    }
    found
}

/// `checker export-course --audit DIR`: [`audit`] of a tree exported from
/// the course at `root` (for `make export-check`).
pub fn audit_cmd(root: &Path, dir: &Path) -> Result<Vec<String>> {
    let course = crate::spec::lab::course_labs(root)?;
    let answers = gradedir::answers(root, &course)?;
    let files = course_files(root)?;
    let book = plan_book(root, &files, &answers)?;
    audit(root, &files, &answers, &book, dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::lab::Lab;

    const LAB: &str = "title='t'\nchapter='c.md'\nmodules=['m']\nstudent=['src/lib.rs']\n\
                       [[step]]\nname='a'\nrun='true'\n";
    const DRIVER_LAB: &str = "title='t'\nchapter='c.md'\nmodules=['m']\nstudent=['src/alloc.rs']\n\
                              solution_dir='../../drivers/binder'\n[[step]]\nname='a'\nrun='true'\n";
    /// The driver's student file: a region, an anchor around it, and one
    /// outside it.
    const ALLOC: &str = concat!(
        "// ANCHOR: head\nfn head() {}\n// ANCHOR_END: head\n",
        "// ANCHOR: alloc\nfn alloc() {\n    // TODO-BEGIN\n",
        "    let offset = self.free_by_size.lower_bound(size)?;\n",
        "    // TODO-ELSE\n    // // TODO: find a free buffer.\n",
        "    // TODO-END\n}\n// ANCHOR_END: alloc\n",
    );

    /// A course with a lab (solution folder), a lab built against a
    /// driver, and a book with chapters and solution pages.
    fn course(extra: &[(&str, &str)]) -> tempfile::TempDir {
        let d = crate::testutil::tree(&[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\n    \"checker\",\n    \"labs/lab-01\",\n    \
                 \"labs/lab-01/solution\",\n    \"checker/fixtures/x\",\n    \"kernel-crate/soundness/*\",\n]\n",
            ),
            ("checker/Cargo.toml", "[package]\n"),
            ("checker/fixtures/x/Cargo.toml", "[package]\n"),
            ("checker/tests/snap.txt", "snapshot\n"),
            ("checker/tests/other.txt", "not shown\n"),
            ("kernel-crate/soundness/life/lab.toml", "x\n"),
            ("labs/lab-01/Cargo.toml", "[package]\n"),
            ("labs/lab-01/lab.toml", LAB),
            ("labs/lab-01/src/lib.rs", "// TODO: greet.\n"),
            ("labs/lab-01/expected/01-a.txt", "ok\n"),
            ("labs/lab-01/solution/Cargo.toml", "[package]\n"),
            (
                "labs/lab-01/solution/src/lib.rs",
                "// TODO-BEGIN\npr_info!(\"Hello from the answer, world\");\n// TODO-END\n",
            ),
            ("labs/lab-10/lab.toml", DRIVER_LAB),
            ("labs/lab-10/src/alloc.rs", "// TODO: find a free buffer.\n"),
            ("drivers/binder/src/alloc.rs", ALLOC),
            ("book.toml", "[book]\nsrc = \"book/src\"\n"),
            (
                "book/src/SUMMARY.md",
                "# Summary\n\n- [First](first.md)\n  - [Solution](first-solution.md)\n\
                 - [Binder](binder.md)\n  - [Answer](binder-solution.md)\n[Teach](teach.md)\n[More](teach-more.md)\n",
            ),
            (
                "book/src/first.md",
                "# First\n\n<!-- course-only -->\nSee the [solution page](first-solution.md#top) \
                 after it.\n<!-- end course-only -->\n<!-- students-only\nAsk your instructor.\n\
                 -->\nOr [Binder](binder.md).\n",
            ),
            (
                "README.md",
                "# Course\n<!-- course-only -->\n`make lab-01 SOLUTION=1`\n<!-- end course-only -->\n",
            ),
            // A page with nothing for students goes like a solution page.
            ("book/src/teach-more.md", "<!-- course-only -->\n# More\n<!-- end course-only -->\n"),
            (
                "book/src/first-solution.md",
                "{{#include ../../labs/lab-01/solution/src/lib.rs}}\n",
            ),
            (
                "book/src/binder.md",
                "{{#include ../../drivers/binder/src/alloc.rs:head}}\n",
            ),
            (
                "book/src/binder-solution.md",
                "{{#include ../../drivers/binder/src/alloc.rs:alloc}}\n",
            ),
            ("book/src/teach.md", "{{#include ../../checker/tests/snap.txt}}\n"),
            (".github/workflows/ci.yml", "on: push\n"),
            (".github/classroom/classroom.yml", "on: push\n"),
        ]);
        crate::testutil::write(d.path(), extra);
        d
    }

    fn export_of(root: &Path) -> (tempfile::TempDir, Exported) {
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("students");
        let done = export(root, &dir, &Options::default(), &[], &mut |_| {}).unwrap();
        (out, done)
    }

    #[test]
    fn includes_and_their_lines() {
        let page = "a {{#include ../x.rs:alloc}} b {{#rustdoc_include y.rs}} {{#title T}}";
        assert_eq!(
            includes(page),
            [
                Include {
                    file: "../x.rs",
                    part: Some("alloc")
                },
                Include {
                    file: "y.rs",
                    part: None
                }
            ]
        );
        assert_eq!(included_lines(ALLOC, Some("head")), 0..2);
        assert_eq!(included_lines(ALLOC, Some("alloc")), 3..11);
        assert_eq!(included_lines(ALLOC, Some("2:3")), 1..3);
        assert_eq!(included_lines(ALLOC, Some("6")), 5..6);
        assert_eq!(included_lines(ALLOC, Some("missing")), 0..0);
        assert!(!shows_region(ALLOC, included_lines(ALLOC, Some("head"))));
        assert!(shows_region(ALLOC, included_lines(ALLOC, Some("alloc"))));
        // A range that starts inside a region, after its TODO-BEGIN.
        assert!(shows_region(ALLOC, included_lines(ALLOC, Some("7:7"))));
        assert!(!shows_region(ALLOC, included_lines(ALLOC, Some("11:"))));
    }

    #[test]
    fn links_to_pages_left_out_become_text() {
        let gone = BTreeSet::from(["s.md"]);
        assert_eq!(
            unlink("see [the answer](s.md#x), [kept](k.md) [x](s.md)", &gone),
            "see the answer, [kept](k.md) x"
        );
    }

    #[test]
    fn the_book_loses_its_solution_pages_only() {
        let d = course(&[]);
        let root = d.path();
        let files = course_files(root).unwrap();
        let answers =
            gradedir::answers(root, &crate::spec::lab::course_labs(root).unwrap()).unwrap();
        let plan = plan_book(root, &files, &answers).unwrap();
        assert_eq!(
            plan.left_out,
            [
                "book/src/binder-solution.md",
                "book/src/first-solution.md",
                "book/src/teach-more.md"
            ]
        );
        assert_eq!(
            plan.changed["book/src/SUMMARY.md"],
            "# Summary\n\n- [First](first.md)\n- [Binder](binder.md)\n[Teach](teach.md)\n"
        );
        assert_eq!(plan.changed["README.md"], "# Course\n");
        // What a chapter shows of the checker's tests goes with it.
        assert_eq!(
            plan.extra,
            BTreeSet::from(["checker/tests/snap.txt".to_owned()])
        );
        assert_eq!(
            plan.changed["book/src/first.md"],
            "# First\n\nAsk your instructor.\nOr [Binder](binder.md).\n"
        );
    }

    #[test]
    fn text_for_one_repository_only() {
        let full = "a\n<!-- course-only -->\nb\n  <!-- end course-only -->\nc\n\
                    <!-- students-only\nd\n\ne\n-->\nf";
        assert_eq!(students_text(full).unwrap(), "a\nc\nd\n\ne\nf");
        assert_eq!(students_text("x\n").unwrap(), "x\n");
        for (bad, what) in [
            (
                "a\n<!-- course-only -->\nb\n",
                "line 2: a region never closed",
            ),
            (
                "<!-- end course-only -->\n",
                "line 1: <!-- end course-only --> out of place",
            ),
            (
                "<!-- students-only\n<!-- course-only -->\n-->\n",
                "line 2: <!-- course-only --> inside the region opened at line 1",
            ),
            (
                "<!-- students-only: x -->\n",
                "line 1: <!-- students-only: x --> out of place",
            ),
        ] {
            let err = students_text(bad).unwrap_err();
            assert!(err.starts_with(what), "{err}");
        }
    }

    #[test]
    fn the_audit_reads_the_text_students_read() {
        // In the export: lab.toml, src/lib.rs and the book; in the course
        // only: the solution and the checker's tests.
        let exists = |p: &str| match p {
            "labs/lab-01/lab.toml" | "labs/lab-01/src/lib.rs" | "book/src/x.md" => Some(true),
            "labs/lab-01/solution/src/lib.rs" | "checker/tests/tidy.rs" => Some(false),
            _ => None,
        };
        let findings = |rel: &str, text: &str| text_findings(rel, text, &exists);
        let md = "Run `make lab-01 SOLUTION=1`.\nSee labs/lab-01/solution.\n\
                  The solution page says.\n`checker/tests/tidy.rs` and `src/lib.rs`, \
                  `labs/lab-01/lab.toml:3`, `target/x/y`, `/lab/hello.ko`.\n\
                  [tidy](../../checker/tests/tidy.rs) [ok](x.md)\nThe reference solution's run.\n";
        assert_eq!(
            findings("labs/lab-01/README.md", md),
            [
                "labs/lab-01/README.md:1: names `SOLUTION=1`, refused in the students' repository: Run `make lab-01 SOLUTION=1`.",
                "labs/lab-01/README.md:2: names a solution folder, not in the students' repository: See labs/lab-01/solution.",
                "labs/lab-01/README.md:3: names a solution page, not in the students' book: The solution page says.",
                "labs/lab-01/README.md:4: names `checker/tests/tidy.rs`, which the export does not hold",
                "labs/lab-01/README.md:5: names `../../checker/tests/tidy.rs`, which the export does not hold",
            ]
        );
        assert_eq!(
            findings("book/src/x.md", "[tidy](../../checker/tests/tidy.rs) [ok](x.md)\n"),
            ["book/src/x.md:1: names `../../checker/tests/tidy.rs`, which the export does not hold"]
        );
        // A lab's sources: comments only; lab.toml: all but the keys.
        let rs = "let solution_path = \"solution/\"; // ok\n// see `../solution/src/lib.rs`\n\
                  // `src/lib.rs` and `solutions/src/lib.rs`\n";
        assert_eq!(
            findings("labs/lab-01/src/lib.rs", rs),
            [
                "labs/lab-01/src/lib.rs:2: names a solution folder, not in the students' repository: // see `../solution/src/lib.rs`"
            ]
        );
        let toml = "host_solution = \"make SOLUTION=1\"\nsolution_dir = \"../x/\"\n\
                    hint = \"make lab-01 SOLUTION=1\"\n";
        assert_eq!(findings("labs/lab-01/lab.toml", toml).len(), 1);
        // The checker's own sources are not read as text.
        assert!(findings("checker/src/run/mod.rs", "// SOLUTION=1\n").is_empty());
    }

    #[test]
    fn a_chapter_that_shows_an_answer_stops_the_export() {
        let d = course(&[(
            "book/src/binder.md",
            "{{#include ../../drivers/binder/src/alloc.rs:alloc}}\n{{#include ../../labs/lab-01/solution/src/lib.rs:2:2}}\n",
        )]);
        let files = course_files(d.path()).unwrap();
        let answers =
            gradedir::answers(d.path(), &crate::spec::lab::course_labs(d.path()).unwrap()).unwrap();
        let err = plan_book(d.path(), &files, &answers)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("book/src/binder.md: {{#include ../../drivers/binder/src/alloc.rs:alloc}} shows a solution region")
                && err.contains("book/src/binder.md: {{#include ../../labs/lab-01/solution/src/lib.rs:2:2}} shows a reference solution's file"),
            "{err}"
        );
        // A page outside SUMMARY that is still exported may not show one.
        let d = course(&[(
            "book/src/notes.md",
            "{{#include ../../drivers/binder/src/alloc.rs:5:7}}\n",
        )]);
        let files = course_files(d.path()).unwrap();
        let err = plan_book(d.path(), &files, &answers)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("book/src/notes.md: {{#include ../../drivers/binder/src/alloc.rs:5:7}} shows a solution region"),
            "{err}"
        );
    }

    #[test]
    fn the_export_holds_skeletons_and_no_answer() {
        let d = course(&[]);
        let (out, done) = export_of(d.path());
        let dir = out.path().join("students");
        assert!(!dir.join("labs/lab-01/solution").exists());
        assert!(dir.join("labs/lab-01/expected/01-a.txt").is_file());
        assert!(!dir.join("checker/tests/other.txt").exists());
        assert!(dir.join("checker/tests/snap.txt").is_file());
        assert!(!dir.join("checker/fixtures").exists());
        assert!(!dir.join(".github/workflows").exists());
        assert!(dir.join(".github/classroom/classroom.yml").is_file());
        assert!(!dir.join("book/src/first-solution.md").exists());
        assert!(dir.join(STUDENT_COURSE).is_file());
        assert_eq!(done.skeletons, ["drivers/binder/src/alloc.rs"]);
        assert_eq!(
            fs::read_to_string(dir.join("drivers/binder/src/alloc.rs")).unwrap(),
            "// ANCHOR: head\nfn head() {}\n// ANCHOR_END: head\n// ANCHOR: alloc\n\
             fn alloc() {\n    // TODO: find a free buffer.\n}\n// ANCHOR_END: alloc\n"
        );
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            manifest
                .contains("members = [\"checker\", \"labs/lab-01\", \"kernel-crate/soundness/*\"]"),
            "{manifest}"
        );
        assert!(fs::read_to_string(dir.join(".gitignore"))
            .unwrap()
            .contains("!/references/*/*/*.ko"));
    }

    /// The size tables of the finished drivers go with the export, tracked.
    #[test]
    fn the_export_keeps_the_course_size_tables() {
        let d = course(&[]);
        let generated = d.path().join("book/src/generated");
        fs::create_dir_all(&generated).unwrap();
        fs::write(generated.join("sizes.md"), "| module | bytes |\n").unwrap();
        let (out, _) = export_of(d.path());
        let dir = out.path().join("students");
        assert_eq!(
            fs::read_to_string(dir.join("book/src/generated/sizes.md")).unwrap(),
            "| module | bytes |\n"
        );
        assert!(!dir.join("book/src/generated/nvme-sizes.md").exists());
        let ignore = fs::read_to_string(dir.join(".gitignore")).unwrap();
        assert!(ignore.contains("!/book/src/generated/sizes.md"), "{ignore}");
    }

    /// The checker loads a lab there without its solution folder, and
    /// only there.
    #[test]
    fn a_lab_of_the_export_loads_without_its_solution() {
        let d = course(&[]);
        let (out, _) = export_of(d.path());
        let dir = out.path().join("students");
        let lab = Lab::load(&dir.join("labs/lab-01")).unwrap();
        assert!(lab.in_student_course() && !lab.solution_dir().exists());
        fs::remove_file(dir.join(STUDENT_COURSE)).unwrap();
        let err = Lab::load(&dir.join("labs/lab-01")).unwrap_err();
        assert!(format!("{err:#}").contains("is not a folder"), "{err:#}");
    }

    #[test]
    fn the_audit_finds_an_answer_put_back() {
        let d = course(&[]);
        let (out, _) = export_of(d.path());
        let dir = out.path().join("students");
        let audit_of = || audit_cmd(d.path(), &dir).unwrap();
        assert_eq!(audit_of(), Vec::<String>::new());
        // A line of the lab's solution, and of the driver's region.
        fs::write(
            dir.join("labs/lab-01/src/lib.rs"),
            "pr_info!(\"Hello from the answer, world\");\n",
        )
        .unwrap();
        fs::write(
            dir.join("notes.txt"),
            "x\n  let offset = self.free_by_size.lower_bound(size)?;\n    // TODO-END\n",
        )
        .unwrap();
        // Text: a path the course tracks and the export does not hold (not
        // build output, which the course does not track either).
        fs::create_dir_all(d.path().join("target/debug")).unwrap();
        fs::write(d.path().join("target/debug/x"), "").unwrap();
        fs::write(
            dir.join("labs/lab-01/README.md"),
            "See `checker/tests/other.txt`, `checker/tests`, `target/debug/x`.\n",
        )
        .unwrap();
        assert_eq!(
            audit_of(),
            [
                "labs/lab-01/README.md:1: names `checker/tests/other.txt`, which the export does not hold",
                "labs/lab-01/src/lib.rs:1: a line of an answer: pr_info!(\"Hello from the answer, world\");",
                "notes.txt:2: a line of an answer: let offset = self.free_by_size.lower_bound(size)?;",
                "notes.txt:3: a TODO marker",
            ]
        );
    }

    /// A link into a solution folder would be a way back to the answer
    /// (or, absolute, to the instructor's copy of it).
    #[test]
    fn a_link_to_an_answer_is_refused() {
        for link in ["../solution/src/lib.rs", "/etc/hostname"] {
            let d = course(&[]);
            std::os::unix::fs::symlink(link, d.path().join("labs/lab-01/src/answer.rs")).unwrap();
            let out = tempfile::tempdir().unwrap();
            let err = export(
                d.path(),
                &out.path().join("s"),
                &Options::default(),
                &[],
                &mut |_| {},
            )
            .unwrap_err()
            .to_string();
            assert!(
                err.contains("labs/lab-01/src/answer.rs is a symbolic link to"),
                "{err}"
            );
        }
        // One to a file students get is kept as a link.
        let d = course(&[]);
        std::os::unix::fs::symlink("lib.rs", d.path().join("labs/lab-01/src/again.rs")).unwrap();
        let (out, _) = export_of(d.path());
        let again = out.path().join("students/labs/lab-01/src/again.rs");
        assert_eq!(fs::read_link(again).unwrap(), Path::new("lib.rs"));
    }

    #[test]
    fn a_folder_with_files_is_refused() {
        let d = course(&[]);
        let out = tempfile::tempdir().unwrap();
        fs::write(out.path().join("x"), "").unwrap();
        let err = export(d.path(), out.path(), &Options::default(), &[], &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not empty"), "{err}");
        assert_eq!(fs::read_dir(out.path()).unwrap().count(), 1);
        // An empty one is fine.
        let empty = tempfile::tempdir().unwrap();
        ensure_empty(empty.path()).unwrap();
        ensure_empty(&empty.path().join("new")).unwrap();
    }
}
