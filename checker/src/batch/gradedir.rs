//! `checker grade DIR`: grading a folder of submissions.
//!
//! `DIR` holds one entry per student:
//!
//! - `DIR/<student>/labs/lab-NN/...`: the student's `labs/` tree (a copy
//!   of their checkout, or just the labs they hand in), or
//! - `DIR/<student>.patch`: a patch against the course's tree, as
//!   `git diff` or `git format-patch` write it (paths `a/labs/...`).
//!
//! **What a submission may change**: only each lab's student files, the
//! ones its `lab.toml` declares in `student` (lab 04: `src/vec.rs`, lab
//! 02: `macro/src/strings.rs`). Everything else (the harness a lab
//! `include!`s, its `Cargo.toml`, `Kbuild`, `lab.toml`, `expected/`, the
//! kernel crate, the checker) comes from the course's tree, so a student
//! cannot change a step, a snapshot or the build. A tree's files are
//! compared with the course's; a patch is applied, its paths under `labs/`
//! only, to a pristine copy of the course's `labs/`. Either way the student
//! files are taken (regular files only: a symbolic link is never followed)
//! and every other file that differs from the course's, or that the course
//! lacks, is *ignored*: named on the terminal, in `summary.txt` and as
//! `ignored_files` in `results.json`. The student files of each graded lab
//! are checked against [`crate::spec::policy`] here too; the broken rules are
//! named the same way (`policy_violations`), and the lab's run refuses to
//! build them.
//!
//! Each student gets a folder of their own under
//! `target/checker/grade/work/<student>/`:
//!
//! - `workspace/`, the root of the student's runs: the course's top-level
//!   Cargo files, symbolic links to `kernel-crate/`, `module-macro/`,
//!   `checker/` (and the other top-level members), and real copies of the
//!   course's `labs/` with the student files in place but without any
//!   `expected/`; its Cargo target folder is its own (seeded from the
//!   course's compiled kernel crate when there is one);
//! - `expected/<lab>/`, the course's snapshots, where the runs are pointed
//!   (`checker lab --expected-dir`): outside the tree Cargo and Kbuild
//!   build;
//! - `submitted/`, for a patch: the copy of `labs/` it was applied to.
//!
//! Builds of different students therefore never share a file, and grading
//! the same submissions twice gives the same grades.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::batch::jobs::{self, Job};
use crate::outcome::Outcome;
use crate::run::{GuestArgs, LabRequest};
use crate::spec::lab::Lab;
use crate::spec::policy::{self, Violation};
use crate::tools::discovery::is_build_output;
use crate::tools::discovery::regular_files;
use crate::{spec::lab, tools::setup, tools::workspace};

/// A submission found in the grading folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    /// Student name: the folder's name, or the patch's name without `.patch`.
    pub student: String,
    /// Where it is.
    pub source: Form,
}

/// What a submission is.
#[derive(Debug, Clone, PartialEq)]
pub enum Form {
    /// A folder holding `labs/`.
    Tree(PathBuf),
    /// A patch against the course's tree.
    Patch(PathBuf),
}

fn is_student_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'))
}

/// The submissions in `dir`, sorted by student name. Other files are
/// ignored; a folder without `labs/` is an error (it is most likely a
/// mistake in how the submissions were collected).
pub fn find_submissions(dir: &Path) -> Result<Vec<Submission>> {
    let mut subs = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            if name.starts_with('.') {
                continue;
            }
            if !is_student_name(&name) {
                bail!(
                    "{}: a student folder's name must be [A-Za-z0-9._@-]+",
                    path.display()
                );
            }
            if !path.join("labs").is_dir() {
                bail!(
                    "{}: a submission folder must hold labs/ (labs/lab-NN/src/...)",
                    path.display()
                );
            }
            subs.push(Submission {
                student: name,
                source: Form::Tree(path),
            });
        } else if let Some(student) = name.strip_suffix(".patch").or(name.strip_suffix(".diff")) {
            if !is_student_name(student) {
                bail!(
                    "{}: a patch's name must be [A-Za-z0-9._@-]+.patch",
                    path.display()
                );
            }
            subs.push(Submission {
                student: student.to_owned(),
                source: Form::Patch(path),
            });
        }
    }
    subs.sort_by(|a, b| a.student.cmp(&b.student));
    for w in subs.windows(2) {
        if w[0].student == w[1].student {
            bail!(
                "two submissions of {:?} (a folder and a patch?)",
                w[0].student
            );
        }
    }
    Ok(subs)
}

/// Copies `from` to `to` recursively, leaving out build output, keeping
/// symbolic links as links.
pub fn copy_sources(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        if is_build_output(&name.to_string_lossy()) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src)?, &dst)?;
        } else if kind.is_dir() {
            copy_sources(&src, &dst)?;
        } else {
            fs::copy(&src, &dst)
                .with_context(|| format!("cannot copy {} to {}", src.display(), dst.display()))?;
            // Cargo compares sources' times with the seeded target's.
            if let Ok(time) = entry.metadata().and_then(|m| m.modified()) {
                let _ = fs::File::options()
                    .write(true)
                    .open(&dst)
                    .and_then(|f| f.set_modified(time));
            }
        }
    }
    Ok(())
}

/// The largest patch read, in bytes: a patch is text a student wrote,
/// and git would write whatever a larger one (or a binary one, refused
/// outright) unpacks to.
pub const MAX_PATCH_BYTES: u64 = 1 << 20;
/// The most files a submission may hold (a tree, build output and hidden
/// files left out) or a patch may touch.
pub const MAX_FILES: usize = 10_000;
/// The most bytes a tree's files may hold (build output and hidden files
/// left out): the course's own tree is about 6 MB.
pub const MAX_TREE_BYTES: u64 = 64 << 20;
/// The largest student file taken.
pub const MAX_STUDENT_FILE_BYTES: u64 = 1 << 20;

/// Whether `rel` (relative, `/`-separated) names a regular file under
/// `root` reached without any symbolic link: neither the file nor any
/// folder between `root` and it is one. A patch can replace a student
/// file's folder by a link to the solution's, which a plain `is_file`
/// would follow.
pub fn regular_under(root: &Path, rel: &str) -> bool {
    let mut here = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() || *part == "." || *part == ".." {
            return false;
        }
        here.push(part);
        let Ok(meta) = fs::symlink_metadata(&here) else {
            return false;
        };
        let last = i + 1 == parts.len();
        if meta.file_type().is_symlink() || (!last && !meta.is_dir()) || (last && !meta.is_file()) {
            return false;
        }
    }
    !parts.is_empty()
}

/// A file a submission changes: its path relative to the submission's
/// root (`labs/lab-04/src/vec.rs`; a folder the course lacks is named
/// once, `dir/`), and whether it is a regular file that can be taken.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    /// The path, `/`-separated.
    pub path: String,
    /// A regular file (not a symbolic link, a folder or a deletion).
    pub regular: bool,
}

/// The files of a tree submission at `dir` that differ from the course's
/// at `root`, or that the course lacks; sorted. Hidden entries and build
/// output are left out; symbolic links are named, never followed.
pub fn changed_in_tree(root: &Path, dir: &Path) -> Result<Vec<Changed>> {
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::new()];
    let (mut files, mut bytes) = (0usize, 0u64);
    while let Some(rel) = stack.pop() {
        let here = dir.join(&rel);
        for entry in
            fs::read_dir(&here).with_context(|| format!("cannot read {}", here.display()))?
        {
            let entry = entry.with_context(|| format!("cannot read {}", here.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || is_build_output(&name) {
                continue;
            }
            let path = rel.join(&name);
            let shown = path.to_string_lossy().into_owned();
            let ours = root.join(&path);
            let kind = entry.file_type()?;
            if kind.is_dir() {
                // Outside labs/, a folder the course lacks is named, not read.
                if ours.is_dir() || path.starts_with("labs") {
                    stack.push(path);
                } else {
                    found.push(Changed {
                        path: format!("{shown}/"),
                        regular: false,
                    });
                }
            } else if kind.is_file() {
                files += 1;
                bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
                if files > MAX_FILES || bytes > MAX_TREE_BYTES {
                    bail!(
                        "{}: the submission holds more than {MAX_FILES} files or {} MB \
                         (build output and hidden files left out): refused",
                        dir.display(),
                        MAX_TREE_BYTES >> 20
                    );
                }
                let theirs = fs::read(entry.path())
                    .with_context(|| format!("cannot read {}", entry.path().display()))?;
                if fs::read(&ours).ok().as_deref() != Some(theirs.as_slice()) {
                    found.push(Changed {
                        path: shown,
                        regular: true,
                    });
                }
            } else {
                found.push(Changed {
                    path: shown,
                    regular: false,
                });
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// The paths `git apply --numstat -z` lists (both sides of a rename),
/// and the binary ones (git counts their lines as `-`).
fn numstat_paths(out: &str) -> (Vec<String>, Vec<String>) {
    let (mut paths, mut binary) = (Vec::new(), Vec::new());
    let mut fields = out.split('\0');
    while let Some(record) = fields.next() {
        let mut parts = record.splitn(3, '\t');
        let (added, removed) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let named: Vec<String> = match parts.next() {
            // A rename or copy: the two paths follow.
            Some("") => fields.by_ref().take(2).map(str::to_owned).collect(),
            Some(path) => vec![path.to_owned()],
            None => continue,
        };
        if added == "-" || removed == "-" {
            binary.extend(named.iter().cloned());
        }
        paths.extend(named);
    }
    paths.sort();
    paths.dedup();
    (paths, binary)
}

/// Applies `patch` to a pristine copy of the course's `labs/` in
/// `<dest>/labs` (its paths outside `labs/` are left out) and returns what
/// it changes, every path it touches.
fn apply_patch(root: &Path, patch: &Path, dest: &Path) -> Result<Vec<Changed>> {
    let patch = patch
        .canonicalize()
        .with_context(|| format!("cannot read {}", patch.display()))?;
    let size = fs::metadata(&patch)
        .with_context(|| format!("cannot read {}", patch.display()))?
        .len();
    if size > MAX_PATCH_BYTES {
        bail!(
            "the patch is {size} bytes, more than the {} KiB a patch may be: refused",
            MAX_PATCH_BYTES >> 10
        );
    }
    copy_sources(&root.join("labs"), &dest.join("labs"))?;
    let git = |args: &[&str]| {
        let mut cmd = Command::new("git");
        cmd.args(args)
            .arg(&patch)
            .current_dir(dest)
            // Not a repository, even when the work folder is inside one.
            .env("GIT_CEILING_DIRECTORIES", dest.parent().unwrap_or(dest))
            .stdin(Stdio::null());
        cmd.output().context("cannot run git (apt-get install git)")
    };
    let out = git(&["apply", "--numstat", "-z"])?;
    if !out.status.success() {
        bail!(
            "git cannot read the patch: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let (touched, binary) = numstat_paths(&String::from_utf8_lossy(&out.stdout));
    if !binary.is_empty() {
        bail!(
            "a binary patch ({}): refused, a submission is source text",
            binary.join(", ")
        );
    }
    if touched.len() > MAX_FILES {
        bail!(
            "the patch touches {} files, more than {MAX_FILES}: refused",
            touched.len()
        );
    }
    let out = git(&["apply", "--whitespace=nowarn", "--include=labs/*"])?;
    if !out.status.success() {
        bail!(
            "the patch does not apply to the course's labs/: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(touched
        .into_iter()
        .map(|path| Changed {
            regular: path.starts_with("labs/") && regular_under(dest, &path),
            path,
        })
        .collect())
}

/// The lab of `labs/<lab>/<file>` and the file, for a course lab.
fn lab_file<'a>(labs: &'a BTreeMap<String, Lab>, path: &'a str) -> Option<(&'a Lab, &'a str)> {
    let rest = path.strip_prefix("labs/")?;
    let (name, file) = rest.split_once('/')?;
    Some((labs.get(name)?, file))
}

/// How a submission's changes are used: the student files taken, the
/// other changes ignored (each with why, when it is not plain).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collected {
    /// Student files taken, `labs/<lab>/<file>`.
    pub taken: Vec<String>,
    /// Changes not taken: `path`, or `path (why)`.
    pub ignored: Vec<String>,
}

/// Sorts `changed` into student files, taken, and the rest, ignored.
pub fn collect(changed: &[Changed], labs: &BTreeMap<String, Lab>) -> Collected {
    let mut c = Collected::default();
    for f in changed {
        match lab_file(labs, &f.path) {
            Some((l, file)) if l.is_student_file(file) => {
                if f.regular {
                    c.taken.push(f.path.clone());
                } else {
                    c.ignored.push(format!(
                        "{} (not a regular file, or under a symbolic link: the course's copy is used)",
                        f.path
                    ));
                }
            }
            _ => c.ignored.push(f.path.clone()),
        }
    }
    c
}

/// A prepared submission: its workspace and the labs to grade.
#[derive(Debug)]
pub struct Prepared {
    /// The student.
    pub student: String,
    /// The workspace root made for the student.
    pub workspace: PathBuf,
    /// The course's snapshots, `<expected>/<lab>/`, outside the workspace.
    pub expected: PathBuf,
    /// Labs to grade.
    pub labs: Vec<String>,
    /// The submission's changes: the student files taken, the rest ignored.
    pub files: Collected,
    /// Rules the student files of the graded labs break, by lab.
    pub violations: Vec<(String, Violation)>,
}

/// Makes the student's workspace under `work` (removing an older one)
/// and returns the labs to grade: `only` if given, else every lab of the
/// course that the submission changes, or (a tree) holds student files
/// of. [`prepare`] also seeds the Cargo target folder.
pub fn prepare_sources(
    root: &Path,
    sub: &Submission,
    work: &Path,
    only: &[String],
) -> Result<Prepared> {
    let home = work.join(&sub.student);
    if fs::symlink_metadata(&home).is_ok() {
        fs::remove_dir_all(&home).with_context(|| format!("cannot remove {}", home.display()))?;
    }
    let ws = home.join("workspace");
    let expected = home.join("expected");
    fs::create_dir_all(&ws).with_context(|| format!("cannot create {}", ws.display()))?;
    fs::create_dir_all(&expected)?;
    let course = lab::course_labs(root)?;
    let (submitted, changed): (PathBuf, Vec<Changed>) = match &sub.source {
        Form::Tree(dir) => {
            for d in [dir.clone(), dir.join("labs")] {
                if fs::symlink_metadata(&d).is_ok_and(|m| m.file_type().is_symlink()) {
                    bail!("{}: a symbolic link, not a folder: refused", d.display());
                }
            }
            (dir.clone(), changed_in_tree(root, dir)?)
        }
        Form::Patch(patch) => {
            let scratch = home.join("submitted");
            let changed = apply_patch(root, patch, &scratch).inspect_err(|_| {
                let _ = fs::remove_dir_all(&scratch);
            })?;
            (scratch, changed)
        }
    };
    course_workspace(root, &ws, &expected, &course)?;
    let files = collect(&changed, &course);
    let mut files = files;
    let taken = std::mem::take(&mut files.taken);
    for path in taken {
        let (from, to) = (submitted.join(&path), ws.join(&path));
        // Checked again where it is read: no link on the way, not too big.
        let size = fs::symlink_metadata(&from).map(|m| m.len()).unwrap_or(0);
        if !regular_under(&submitted, &path) {
            files.ignored.push(format!(
                "{path} (not a regular file, or under a symbolic link: the course's copy is used)"
            ));
            continue;
        }
        if size > MAX_STUDENT_FILE_BYTES {
            files.ignored.push(format!(
                "{path} (more than {} KiB: the course's copy is used)",
                MAX_STUDENT_FILE_BYTES >> 10
            ));
            continue;
        }
        if let Some(dir) = to.parent() {
            fs::create_dir_all(dir)?;
        }
        fs::copy(&from, &to)
            .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
        files.taken.push(path);
    }
    files.ignored.sort();
    // What was not taken goes: a patch's copy of labs/ holds whatever the
    // patch wrote.
    if let Form::Patch(_) = &sub.source {
        fs::remove_dir_all(&submitted)
            .with_context(|| format!("cannot remove {}", submitted.display()))?;
    }
    let labs: Vec<String> = if only.is_empty() {
        labs_submitted(sub, &changed, &course)
    } else {
        only.to_vec()
    };
    let mut violations = Vec::new();
    for name in labs.iter().filter(|l| course.contains_key(*l)) {
        let l = Lab::load(&ws.join("labs").join(name))?;
        for v in policy::check_run(&l, false)?.violations {
            violations.push((name.clone(), v));
        }
    }
    Ok(Prepared {
        student: sub.student.clone(),
        workspace: ws,
        expected,
        labs,
        files,
        violations,
    })
}

/// The top-level folders of the course a workspace holds: the kernel
/// crate and the module macro every lab builds against, the drivers whose
/// files labs 08, 10 and 11 build (`#[path]` in their harness; Kbuild's C
/// twin and scripts), and the labs. Not `checker/` (its fixtures hold
/// answers), `book/` (the solutions' pages), `vm/` or `target/`.
const WORKSPACE_DIRS: [&str; 4] = ["kernel-crate", "module-macro", "drivers", "labs"];

/// The file at a workspace's root that marks it as a grading workspace
/// and lists the course files put in it, one `/`-separated path a line
/// (see [`crate::spec::policy::check_sources`] and `spec::lab`, which then
/// accepts a lab without its solution folder).
pub const WORKSPACE_MARK: &str = crate::spec::lab::GRADING_WORKSPACE;

/// The answers of a course, relative to its root: what a student's
/// build (`checker grade`) and a student repository (`checker
/// export-course`) leave out or replace.
#[derive(Debug, Default)]
pub struct Answers {
    /// Solution folders inside a lab folder (`labs/lab-01/solution`):
    /// left out whole.
    pub folders: Vec<PathBuf>,
    /// The student files of a driver that is a lab's solution
    /// (`drivers/binder/src/alloc.rs`), each with its skeleton form (see
    /// [`crate::spec::skeleton::skeleton_form`]): put in their place.
    pub skeletons: Vec<(PathBuf, String)>,
}

/// The answers of `course`, whose root is `root` (see [`Answers`]); a
/// solution folder outside the course is an error.
pub fn answers(root: &Path, course: &BTreeMap<String, Lab>) -> Result<Answers> {
    let mut out = Answers::default();
    for l in course.values().filter(|l| !l.config.student.is_empty()) {
        let solution = policy::lexical(&l.solution_dir());
        let Ok(rel) = solution.strip_prefix(policy::lexical(root)) else {
            bail!(
                "{}: the solution folder {} is outside the course",
                l.name,
                solution.display()
            );
        };
        if solution.starts_with(policy::lexical(&l.dir)) {
            out.folders.push(rel.to_path_buf());
        } else {
            for (file, text) in crate::spec::skeleton::skeleton_form(l)? {
                out.skeletons.push((rel.join(file), text));
            }
        }
    }
    Ok(out)
}

/// Makes `ws` the course at `root` as a student's build sees it: the
/// top-level files, [`WORKSPACE_DIRS`] copied (no links back into the
/// course, so a sandbox that shows the build only `ws` shows it all it
/// needs), the snapshots moved out to `expected/<lab>`, and no answer:
/// no lab's `solution/` folder, and a driver that is a lab's solution
/// (`solution_dir` outside the lab folder) in its skeleton form (see
/// [`crate::spec::skeleton::skeleton_form`]). The Cargo workspace lists
/// only the members left.
fn course_workspace(
    root: &Path,
    ws: &Path,
    expected: &Path,
    course: &BTreeMap<String, Lab>,
) -> Result<()> {
    for entry in fs::read_dir(root)? {
        let entry = entry?;
        let name = entry.file_name();
        let n = name.to_string_lossy();
        let (src, dst) = (entry.path(), ws.join(&name));
        // Not `.git` (a worktree's is a file naming the repository).
        if n.starts_with('.') {
            continue;
        }
        if entry.file_type()?.is_file() && n != "Cargo.toml" {
            fs::copy(&src, &dst)?;
        } else if WORKSPACE_DIRS.contains(&n.as_ref()) && entry.file_type()?.is_dir() {
            copy_sources(&src, &dst)?;
        }
    }
    // Drivers that are graded like labs keep their snapshots to themselves.
    for dir in lab::all_samples(ws)
        .unwrap_or_default()
        .iter()
        .map(|d| d.join("expected"))
        .filter(|d| d.is_dir())
    {
        fs::remove_dir_all(&dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    }
    for name in course.keys() {
        let lab_ws = ws.join("labs").join(name);
        let theirs = lab_ws.join("expected");
        if theirs.is_dir() {
            fs::rename(&theirs, expected.join(name)).with_context(|| {
                format!("cannot move {} out of the workspace", theirs.display())
            })?;
        }
    }
    let answers = answers(root, course)?;
    for rel in &answers.folders {
        let in_ws = ws.join(rel);
        if in_ws.exists() {
            fs::remove_dir_all(&in_ws)
                .with_context(|| format!("cannot remove {}", in_ws.display()))?;
        }
    }
    for (rel, text) in &answers.skeletons {
        let to = ws.join(rel);
        fs::write(&to, text).with_context(|| format!("cannot write {}", to.display()))?;
    }
    if let Ok(text) = fs::read_to_string(root.join("Cargo.toml")) {
        fs::write(ws.join("Cargo.toml"), workspace_manifest(&text, ws, false))?;
    }
    let files = regular_files(ws, |_, _| false)?;
    let mut mark = String::from(
        "# A grading workspace (checker grade): the course files put in it, before the\n\
         # student's. The compiler may read these and the student files the policy checked.\n",
    );
    for f in files {
        let hash = policy::file_hash(&ws.join(&f));
        mark.push_str(&format!("{f}\t{hash}\n"));
    }
    fs::write(ws.join(WORKSPACE_MARK), mark)?;
    Ok(())
}

/// The course's top-level `Cargo.toml` with its `members` and
/// `default-members` cut to the packages `ws` holds: the solutions'
/// packages, the checker and its fixtures are not there. With `globs`, a
/// member `dir/*` stays when `ws` has `dir`.
pub fn workspace_manifest(text: &str, ws: &Path, globs: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    for key in ["\nmembers = [", "\ndefault-members = ["] {
        let Some(start) = rest.find(key) else {
            continue;
        };
        let open = start + key.len();
        let Some(len) = rest[open..].find(']') else {
            continue;
        };
        let kept: Vec<&str> = rest[open..open + len]
            .split(',')
            .map(|m| m.trim().trim_matches('"'))
            .filter(|m| {
                let glob = m.strip_suffix("/*").filter(|_| globs);
                !m.is_empty()
                    && (ws.join(m).join("Cargo.toml").is_file()
                        || glob.is_some_and(|g| ws.join(g).is_dir()))
            })
            .collect();
        out.push_str(&rest[..open]);
        out.push_str(
            &kept
                .iter()
                .map(|m| format!("\"{m}\""))
                .collect::<Vec<_>>()
                .join(", "),
        );
        rest = &rest[open + len..];
    }
    out.push_str(rest);
    out
}

/// The labs of the course a submission is for: those it changes, and for
/// a tree, those whose folder holds the student's files.
fn labs_submitted(
    sub: &Submission,
    changed: &[Changed],
    course: &BTreeMap<String, Lab>,
) -> Vec<String> {
    course
        .values()
        .filter(|l| {
            let prefix = format!("labs/{}/", l.name);
            let changes = changed.iter().any(|c| c.path.starts_with(&prefix));
            match &sub.source {
                Form::Tree(dir) => {
                    let theirs = dir.join("labs").join(&l.name);
                    changes
                        || !crate::spec::files::matching_files(&theirs, &l.config.student)
                            .unwrap_or_default()
                            .is_empty()
                }
                Form::Patch(_) => changes,
            }
        })
        .map(|l| l.name.clone())
        .collect()
}

/// [`prepare_sources`], then the Cargo target folder seeded with the
/// course's compiled kernel crate (Cargo rebuilds what is stale; only the
/// student's crate should be).
pub fn prepare(root: &Path, sub: &Submission, work: &Path, only: &[String]) -> Result<Prepared> {
    let p = prepare_sources(root, sub, work, only)?;
    let course_target = root.join("target").join("x86_64-unknown-none");
    if course_target.is_dir() {
        let dest = p.workspace.join("target");
        fs::create_dir_all(&dest)?;
        let _ = Command::new("cp")
            .args(["-a", "--reflink=auto"])
            .arg(&course_target)
            .arg(&dest)
            .status();
        prune_target(&dest.join("x86_64-unknown-none"), &module_packages(root))?;
    }
    Ok(p)
}

/// The packages of the course's Cargo workspace that build modules (labs,
/// their solutions, drivers): every member but the kernel crate, the
/// module macro and the host tools.
fn module_packages(root: &Path) -> Vec<String> {
    let text = fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let Ok(doc) = toml::from_str::<toml::Table>(&text) else {
        return Vec::new();
    };
    let members = doc
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .cloned()
        .unwrap_or_default();
    members
        .iter()
        .filter_map(|m| m.as_str())
        .filter(|m| m.starts_with("labs/") || m.starts_with("drivers/"))
        .filter_map(|m| {
            let manifest = fs::read_to_string(root.join(m).join("Cargo.toml")).ok()?;
            let doc = toml::from_str::<toml::Table>(&manifest).ok()?;
            Some(doc.get("package")?.get("name")?.as_str()?.to_owned())
        })
        .collect()
}

/// Removes from a seeded cargo target folder what the course's own builds
/// of `packages` left there (the solutions' and the finished drivers'
/// libraries, dep-info, fingerprints): the seed is for the kernel crate,
/// and a compiled solution is an answer too.
fn prune_target(dir: &Path, packages: &[String]) -> Result<()> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let bare = name.strip_prefix("lib").unwrap_or(&name);
        let theirs = packages.iter().any(|p| {
            let krate = p.replace('-', "_");
            [p.as_str(), krate.as_str()].iter().any(|n| {
                [name.as_str(), bare]
                    .iter()
                    .any(|f| f.strip_prefix(n).is_some_and(|r| r.starts_with(['-', '.'])))
            })
        });
        let kind = entry.file_type()?;
        if theirs {
            if kind.is_dir() {
                fs::remove_dir_all(entry.path())?;
            } else {
                fs::remove_file(entry.path())?;
            }
        } else if kind.is_dir() {
            prune_target(&entry.path(), packages)?;
        }
    }
    Ok(())
}

/// The child runs for `p`: one per lab, output and results under `out`.
pub fn jobs_for(p: &Prepared, out: &Path, guest: GuestArgs) -> Vec<Job> {
    p.labs
        .iter()
        .map(|l| Job {
            student: p.student.clone(),
            lab: l.clone(),
            request: LabRequest {
                root: Some(p.workspace.clone()),
                expected_dir: Some(p.expected.join(l)),
                ..jobs::request(l, false, guest)
            },
            cwd: p.workspace.clone(),
            log: out.join("logs").join(format!("{}-{l}.txt", p.student)),
            env: Vec::new(),
        })
        .collect()
}

/// `checker grade`.
#[derive(Debug, Clone, clap::Args)]
pub struct GradeArgs {
    /// The folder of submissions: DIR/STUDENT/labs/... or DIR/STUDENT.patch.
    pub dir: PathBuf,
    /// Grade only this lab (repeatable; default: every lab a submission has).
    #[arg(long = "lab", value_name = "LAB")]
    pub labs: Vec<String>,
    #[command(flatten)]
    pub batch: jobs::BatchArgs,
    /// Where the reports and logs go (default: target/checker/grade).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Draw every run's differential inputs from this seed (each student's
    /// and lab's is derived from it; default: a new one). results.json
    /// records each run's seed (`checker lab --seed` reproduces it).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// The instructor's hidden steps: COURSE_DIR/LAB/lab.toml (extra
    /// `[[step]]`s) and COURSE_DIR/LAB/expected/, never in a workspace.
    #[arg(long, value_name = "COURSE_DIR")]
    pub extra: Option<PathBuf>,
}

/// Adds `--seed` (derived from `base`, the student and the lab) and
/// `--extra` to each child run; returns the seeds given.
pub fn seed_and_extra(
    jobs: &mut [Job],
    base: u64,
    extra: Option<&Path>,
) -> Vec<(String, String, u64)> {
    let mut seeds = Vec::new();
    for job in jobs {
        let seed = crate::spec::inputs::derive_seed(base, &job.student, &job.lab);
        job.request.seed = Some(seed);
        job.request.extra = extra.map(Path::to_path_buf);
        seeds.push((job.student.clone(), job.lab.clone(), seed));
    }
    seeds
}

/// `results.json` with each entry's `seed`, for the labs that draw inputs
/// (`seeds`: student, lab, seed).
pub fn seeds_json(json: &str, seeds: &[(String, String, u64)]) -> Result<String> {
    let mut doc: serde_json::Value = serde_json::from_str(json).context("invalid results.json")?;
    if let Some(entries) = doc.get_mut("entries").and_then(|e| e.as_array_mut()) {
        for entry in entries {
            let student = entry["student"].as_str().unwrap_or_default();
            let lab = entry["result"]["lab"].as_str().unwrap_or_default();
            let seed = seeds
                .iter()
                .find(|(s, l, _)| s == student && l == lab)
                .map(|(_, _, seed)| *seed);
            if let (Some(seed), Some(obj)) = (seed, entry.as_object_mut()) {
                obj.insert("seed".into(), serde_json::json!(seed));
            }
        }
    }
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

/// `checker grade DIR`: failed when a submission could not be prepared
/// (the student's doing: it scores nothing, the reports say why), an error
/// when the checker could not run one of the labs.
pub fn grade_cmd(args: &GradeArgs) -> Result<Outcome> {
    vm::install_interrupt_handler()?;
    let root = workspace::root()?;
    let tc = setup::ensure(&setup::Options {
        book: false,
        browser: false,
        verbose: false,
    })?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| root.join("target/checker/grade"));
    let out = if out.is_absolute() {
        out
    } else {
        std::env::current_dir()?.join(out)
    };
    let subs = find_submissions(&args.dir)?;
    if subs.is_empty() {
        bail!(
            "{}: no submissions (folders with labs/, or .patch files)",
            args.dir.display()
        );
    }
    let base_seed = args.seed.unwrap_or_else(crate::spec::inputs::os_seed);
    let extra = match &args.extra {
        Some(dir) if !dir.is_dir() => bail!("--extra {}: no such folder", dir.display()),
        Some(dir) => Some(dir.canonicalize()?),
        None => None,
    };
    let labs = lab::course_labs(&root)?;
    // An instructor's mistake in the extra steps shows before any build.
    if let Some(extra) = &extra {
        for lab in labs.values() {
            lab.clone().add_extra(extra)?;
        }
    }
    let mut batch = prepare_all(&root, &subs, &out, args);
    let mut seeds = seed_and_extra(&mut batch.jobs, base_seed, extra.as_deref());
    build_references(&labs, &tc, &out, &mut batch.jobs)?;
    // Only the labs that draw inputs have a seed to report.
    seeds.retain(|(_, lab, _)| labs.get(lab).is_some_and(Lab::has_differential));
    println!("inputs: seed {base_seed} (checker grade --seed {base_seed} draws them again)");
    let parallel = args.batch.parallel();
    let mut entries = jobs::run_and_report(&batch.jobs, parallel, &out)?;
    let mut outcome = Outcome::of_entries(&entries);
    if !batch.failed.is_empty() {
        if outcome == Outcome::Passed {
            outcome = Outcome::Failed;
        }
        entries.extend(batch.failed);
        crate::report::write_reports(&out, &entries)?;
        println!("(the reports also list the submissions that could not be prepared)");
    }
    add_notes(&out, &batch.notes)?;
    let json = out.join("results.json");
    if let Ok(text) = fs::read_to_string(&json) {
        fs::write(&json, seeds_json(&text, &seeds)?)
            .with_context(|| format!("cannot write {}", json.display()))?;
    }
    Ok(outcome)
}

/// The submissions made ready to grade.
struct Batch {
    /// One child run per student and lab.
    jobs: Vec<Job>,
    /// What preparing each submission left out or refused.
    notes: Vec<Notes>,
    /// The submissions that could not be prepared.
    failed: Vec<crate::report::Entry>,
}

/// Prepares every submission in a workspace of its own under `out`,
/// saying what it takes and what it leaves out.
fn prepare_all(root: &Path, subs: &[Submission], out: &Path, args: &GradeArgs) -> Batch {
    let mut batch = Batch {
        jobs: Vec::new(),
        notes: Vec::new(),
        failed: Vec::new(),
    };
    for sub in subs {
        print!("prepare {} ...", sub.student);
        let _ = std::io::Write::flush(&mut std::io::stdout());
        match prepare(root, sub, &out.join("work"), &args.labs) {
            Ok(p) => {
                println!(
                    " {}",
                    if p.labs.is_empty() {
                        "no labs".to_owned()
                    } else {
                        p.labs.join(", ")
                    }
                );
                let note = Notes::of(&p);
                print!("{}", note.lines("  "));
                batch.notes.push(note);
                batch.jobs.extend(jobs_for(&p, out, args.batch.guest));
            }
            Err(e) => {
                println!(" FAILED: {e:#}");
                batch.failed.push(crate::report::Entry {
                    student: sub.student.clone(),
                    result: crate::report::LabResult::error("submission", &format!("{e:#}"), None),
                });
            }
        }
    }
    batch
}

/// Builds the reference solution of each lab with differential steps that
/// `jobs` grade, once, in the course's tree, into `out/reference/<lab>`,
/// and hands it to those jobs: the differential steps load it after the
/// student's module. Not once per student.
fn build_references(
    labs: &BTreeMap<String, Lab>,
    tc: &setup::Toolchain,
    out: &Path,
    jobs: &mut [Job],
) -> Result<()> {
    for lab in labs.values().filter(|l| l.has_differential()) {
        if !jobs.iter().any(|j| j.lab == lab.name) {
            continue;
        }
        let dir = out.join("reference").join(&lab.name);
        print!("build the reference solution of {} ...", lab.name);
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let started = std::time::Instant::now();
        crate::run::build_reference(lab, tc, &dir, &dir.join("build.log"))?;
        println!(" ok ({:.1} s)", started.elapsed().as_secs_f64());
        for job in jobs.iter_mut().filter(|j| j.lab == lab.name) {
            job.request.reference = Some(dir.clone());
        }
    }
    Ok(())
}

/// What grading a submission left out or refused, for the reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Notes {
    /// The student.
    pub student: String,
    /// Changes that were not taken.
    pub ignored: Vec<String>,
    /// Broken rules, by lab: `(lab, line)`.
    pub violations: Vec<(String, String)>,
}

impl Notes {
    /// The notes of a prepared submission.
    pub fn of(p: &Prepared) -> Notes {
        Notes {
            student: p.student.clone(),
            ignored: p.files.ignored.clone(),
            violations: p
                .violations
                .iter()
                .map(|(lab, v)| (lab.clone(), v.to_string()))
                .collect(),
        }
    }

    /// The lines for the terminal, each after `indent`; none when there is
    /// nothing to say.
    pub fn lines(&self, indent: &str) -> String {
        let mut out = String::new();
        if !self.ignored.is_empty() {
            out.push_str(&format!(
                "{indent}ignored (not student files; the course's copies are graded): {}\n",
                self.ignored.join(", ")
            ));
        }
        for (lab, v) in &self.violations {
            out.push_str(&format!("{indent}{lab} rejected before the build: {v}\n"));
        }
        out
    }
}

/// The section added to `summary.txt` and the terminal: every student's
/// notes, or nothing when there are none.
pub fn notes_section(notes: &[Notes]) -> String {
    let body: String = notes
        .iter()
        .map(|n| {
            let lines = n.lines("    ");
            if lines.is_empty() {
                lines
            } else {
                format!("  {}:\n{lines}", n.student)
            }
        })
        .collect();
    if body.is_empty() {
        return body;
    }
    format!(
        "\nWhat the submissions changed that grading did not take \
         (book: For instructors, \"What a submission may change\"):\n{body}"
    )
}

/// `results.json` with each entry's `ignored_files` (the student's) and
/// `policy_violations` (the student's, for that entry's lab).
pub fn notes_json(json: &str, notes: &[Notes]) -> Result<String> {
    let mut doc: serde_json::Value = serde_json::from_str(json).context("invalid results.json")?;
    if let Some(entries) = doc.get_mut("entries").and_then(|e| e.as_array_mut()) {
        for entry in entries {
            let student = entry["student"].as_str().unwrap_or_default().to_owned();
            let lab = entry["result"]["lab"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let note = notes.iter().find(|n| n.student == student);
            let ignored = note.map(|n| n.ignored.clone()).unwrap_or_default();
            let violations: Vec<&String> = note
                .map(|n| {
                    n.violations
                        .iter()
                        .filter(|(l, _)| *l == lab)
                        .map(|(_, v)| v)
                        .collect()
                })
                .unwrap_or_default();
            if let Some(obj) = entry.as_object_mut() {
                obj.insert("ignored_files".into(), serde_json::json!(ignored));
                obj.insert("policy_violations".into(), serde_json::json!(violations));
            }
        }
    }
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

/// Adds the notes to the reports in `out` (`results.json`, `summary.txt`)
/// and prints them.
fn add_notes(out: &Path, notes: &[Notes]) -> Result<()> {
    let json = out.join("results.json");
    if let Ok(text) = fs::read_to_string(&json) {
        fs::write(&json, notes_json(&text, notes)?)
            .with_context(|| format!("cannot write {}", json.display()))?;
    }
    let section = notes_section(notes);
    if !section.is_empty() {
        print!("{section}");
        let summary = out.join("summary.txt");
        let mut text = fs::read_to_string(&summary).unwrap_or_default();
        text.push_str(&section);
        fs::write(&summary, text).with_context(|| format!("cannot write {}", summary.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submissions_are_found_and_sorted() {
        let d = crate::testutil::tree(&[
            ("zoe/labs/lab-01/src/lib.rs", ""),
            ("bea.patch", ""),
            ("notes.txt", ""),
        ]);
        fs::create_dir_all(d.path().join("adam/labs")).unwrap();
        let subs = find_submissions(d.path()).unwrap();
        let names: Vec<_> = subs.iter().map(|s| s.student.as_str()).collect();
        assert_eq!(names, ["adam", "bea", "zoe"]);
        assert!(matches!(subs[1].source, Form::Patch(_)));
        fs::create_dir_all(d.path().join("bad")).unwrap();
        let err = find_submissions(d.path()).unwrap_err().to_string();
        assert!(err.contains("must hold labs/"), "{err}");
    }

    /// A course with one lab whose student file is `src/lib.rs`; its
    /// harness is `src/module.rs`.
    fn course(d: &Path) -> PathBuf {
        let root = d.join("course");
        crate::testutil::write(
            &root,
            &[
                ("kernel-crate/src/lib.rs", "// kernel\n"),
                ("Cargo.toml", "[workspace]\n"),
                (".git", "gitdir: /course/.git/worktrees/course\n"),
                (
                    "labs/lab-01/lab.toml",
                    "title='t'\nchapter='c.md'\nmodules=['m']\nstudent=['src/lib.rs']\n\
                     [[step]]\nname='a'\nrun='true'\n",
                ),
                ("labs/lab-01/src/lib.rs", "// TODO\n"),
                ("labs/lab-01/src/module.rs", "// harness\n"),
                ("labs/lab-01/solution/src/lib.rs", "// solution\n"),
                ("labs/lab-01/expected/01-a.txt", "course\n"),
                ("labs/lab-01/hello.ko", "stale build output"),
            ],
        );
        root
    }

    /// A patch that changes the student file and (ignored) the harness, a
    /// snapshot and the kernel crate; graded in a work folder inside a git
    /// repository, as `target/checker/grade` is.
    #[test]
    fn only_student_files_are_taken_from_a_patch() {
        let d = tempfile::tempdir().unwrap();
        let root = course(d.path());
        let work = d.path().join("repo/target/work");
        fs::create_dir_all(&work).unwrap();
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(d.path().join("repo"))
            .status();
        assert!(git.is_ok_and(|s| s.success()));
        let patch = d.path().join("mallory.patch");
        fs::write(
            &patch,
            "--- a/labs/lab-01/src/lib.rs\n+++ b/labs/lab-01/src/lib.rs\n@@ -1 +1 @@\n-// TODO\n+// done\n\
             --- a/labs/lab-01/src/module.rs\n+++ b/labs/lab-01/src/module.rs\n@@ -1 +1 @@\n-// harness\n+// forged\n\
             --- a/labs/lab-01/expected/01-a.txt\n+++ b/labs/lab-01/expected/01-a.txt\n@@ -1 +1 @@\n-course\n+forged\n\
             --- a/kernel-crate/src/lib.rs\n+++ b/kernel-crate/src/lib.rs\n@@ -1 +1 @@\n-// kernel\n+// forged\n",
        )
        .unwrap();
        let sub = Submission {
            student: "mallory".into(),
            source: Form::Patch(patch),
        };
        let p = prepare_sources(&root, &sub, &work, &[]).unwrap();
        only_the_student_file_is_taken(
            &p,
            &[
                "kernel-crate/src/lib.rs",
                "labs/lab-01/expected/01-a.txt",
                "labs/lab-01/src/module.rs",
            ],
        );
        let ws = &p.workspace;
        let read = |path: &Path| fs::read_to_string(path).unwrap();
        assert_eq!(read(&ws.join("labs/lab-01/src/lib.rs")), "// done\n");
        assert_eq!(read(&ws.join("labs/lab-01/src/module.rs")), "// harness\n");
        assert_eq!(read(&ws.join("kernel-crate/src/lib.rs")), "// kernel\n");
        assert!(!ws.join("labs/lab-01/hello.ko").exists());
        // A copy, not a link back into the course.
        assert!(fs::symlink_metadata(ws.join("kernel-crate"))
            .unwrap()
            .is_dir());
        expected_is_outside_the_workspace(&p);
        no_answer_in_the_workspace(&p);
        // The patch's copy of labs/ is gone once the student file is taken.
        assert!(!work.join("mallory/submitted").exists());
    }

    /// The workspace holds no solution and says which files are the
    /// course's; the lab still loads there.
    #[track_caller]
    fn no_answer_in_the_workspace(p: &Prepared) {
        let ws = &p.workspace;
        assert!(!ws.join("labs/lab-01/solution").exists());
        assert!(!ws.join(".git").exists());
        let mark = fs::read_to_string(ws.join(WORKSPACE_MARK)).unwrap();
        assert!(
            mark.lines()
                .any(|l| l.starts_with("labs/lab-01/src/module.rs\t")),
            "{mark}"
        );
        assert!(!mark.contains("solution/"), "{mark}");
        let lab = Lab::load(&ws.join("labs/lab-01")).unwrap();
        assert!(lab.in_grading_workspace());
    }

    /// A patch that swaps the student file's folder for a link to the
    /// solution's: the collector does not follow it, and the course's copy
    /// is graded. Before `regular_under`, the solution was taken.
    #[test]
    fn a_patch_cannot_take_a_file_through_a_linked_folder() {
        let d = tempfile::tempdir().unwrap();
        let root = course(d.path());
        let patch = d.path().join("eve.patch");
        // As `git diff` writes it after `rm -r src && ln -s solution/src src`.
        fs::write(
            &patch,
            "diff --git a/labs/lab-01/src b/labs/lab-01/src\nnew file mode 120000\n\
             --- /dev/null\n+++ b/labs/lab-01/src\n@@ -0,0 +1 @@\n+solution/src\n\
             \\ No newline at end of file\n\
             diff --git a/labs/lab-01/src/lib.rs b/labs/lab-01/src/lib.rs\ndeleted file mode 100644\n\
             --- a/labs/lab-01/src/lib.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-// TODO\n\
             diff --git a/labs/lab-01/src/module.rs b/labs/lab-01/src/module.rs\n\
             deleted file mode 100644\n--- a/labs/lab-01/src/module.rs\n+++ /dev/null\n\
             @@ -1 +0,0 @@\n-// harness\n",
        )
        .unwrap();
        let sub = Submission {
            student: "eve".into(),
            source: Form::Patch(patch),
        };
        let p = prepare_sources(&root, &sub, &d.path().join("work"), &[]).unwrap();
        assert!(p.files.taken.is_empty(), "{:?}", p.files);
        assert!(
            p.files.ignored.iter().any(|f| f.starts_with(
                "labs/lab-01/src/lib.rs (not a regular file, or under a symbolic link"
            )),
            "{:?}",
            p.files
        );
        let graded = fs::read_to_string(p.workspace.join("labs/lab-01/src/lib.rs")).unwrap();
        assert_eq!(graded, "// TODO\n");
    }

    /// A binary patch and one too big are refused before git writes
    /// anything; nothing of them stays.
    #[test]
    fn binary_and_oversized_patches_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let root = course(d.path());
        let work = d.path().join("work");
        let binary = d.path().join("bin.patch");
        // `git diff --binary` of a 103-byte file holding NULs.
        fs::write(
            &binary,
            "diff --git a/labs/lab-01/blob b/labs/lab-01/blob\nnew file mode 100644\n\
             index 0000000000000000000000000000000000000000..ab493adddbc9f8945fc68ce978327b76314812d8\n\
             GIT binary patch\nliteral 103\nNcmb<msAQl6003ZY0P+9;\n\nliteral 0\nHcmV?d00001\n\n",
        )
        .unwrap();
        let sub = |name: &str, patch: &Path| Submission {
            student: name.into(),
            source: Form::Patch(patch.to_path_buf()),
        };
        let err = prepare_sources(&root, &sub("bin", &binary), &work, &[]).unwrap_err();
        assert!(err.to_string().contains("binary patch"), "{err:#}");
        assert!(!work.join("bin/submitted").exists());
        let big = d.path().join("big.patch");
        fs::write(&big, "x".repeat(MAX_PATCH_BYTES as usize + 1)).unwrap();
        let err = prepare_sources(&root, &sub("big", &big), &work, &[]).unwrap_err();
        assert!(err.to_string().contains("a patch may be"), "{err:#}");
        assert!(!work.join("big/submitted").exists());
    }

    /// Lab 01's student file is taken, and `ignored` is named.
    #[track_caller]
    fn only_the_student_file_is_taken(p: &Prepared, ignored: &[&str]) {
        assert_eq!(p.labs, ["lab-01"]);
        assert_eq!(p.files.taken, ["labs/lab-01/src/lib.rs"]);
        assert_eq!(p.files.ignored, ignored);
    }

    /// The snapshots are not in the workspace the build sees, and the run
    /// is pointed at the course's copy.
    fn expected_is_outside_the_workspace(p: &Prepared) {
        let ws = &p.workspace;
        assert!(!ws.join("labs/lab-01/expected").exists());
        assert!(!p.expected.starts_with(ws));
        assert_eq!(
            fs::read_to_string(p.expected.join("lab-01/01-a.txt")).unwrap(),
            "course\n"
        );
        let jobs = jobs_for(p, Path::new("/out"), GuestArgs::default());
        let dir = jobs[0].request.expected_dir.clone().unwrap();
        assert_eq!(dir, p.expected.join("lab-01"));
        let mut lab = Lab::load(&ws.join("labs/lab-01")).unwrap();
        lab.config.expected_dir = Some(dir);
        assert_eq!(
            fs::read_to_string(lab.expected_path(0)).unwrap(),
            "course\n"
        );
    }

    /// A tree: the student file is taken; the harness, a new file, a forged
    /// snapshot, a symbolic link posing as a student file and a folder the
    /// course lacks are ignored and named; an unchanged copy of the course
    /// is not named.
    #[test]
    fn only_student_files_are_taken_from_a_tree() {
        let d = tempfile::tempdir().unwrap();
        let root = course(d.path());
        let tree = d.path().join("subs/alice");
        copy_sources(&root, &tree).unwrap();
        crate::testutil::write(
            &tree,
            &[
                ("labs/lab-01/src/lib.rs", "// done\n"),
                ("labs/lab-01/src/module.rs", "// forged\n"),
                ("labs/lab-01/src/extra.rs", "// new\n"),
                ("labs/lab-01/expected/01-a.txt", "forged\n"),
                ("labs/lab-01/module.o", "build output"),
                ("node_modules/x/a.js", ""),
            ],
        );
        let lab = tree.join("labs/lab-01");
        let sub = Submission {
            student: "alice".into(),
            source: Form::Tree(tree.clone()),
        };
        let p = prepare_sources(&root, &sub, &d.path().join("work"), &[]).unwrap();
        only_the_student_file_is_taken(
            &p,
            &[
                "labs/lab-01/expected/01-a.txt",
                "labs/lab-01/src/extra.rs",
                "labs/lab-01/src/module.rs",
                "node_modules/",
            ],
        );
        let ws = &p.workspace;
        let read = |rel: &str| fs::read_to_string(ws.join(rel)).unwrap();
        assert_eq!(read("labs/lab-01/src/lib.rs"), "// done\n");
        assert_eq!(read("labs/lab-01/src/module.rs"), "// harness\n");
        assert!(!ws.join("labs/lab-01/src/extra.rs").exists());
        expected_is_outside_the_workspace(&p);

        // A symbolic link to the solution is not a student file to take.
        fs::remove_file(lab.join("src/lib.rs")).unwrap();
        std::os::unix::fs::symlink(
            root.join("labs/lab-01/solution/src/lib.rs"),
            lab.join("src/lib.rs"),
        )
        .unwrap();
        let p = prepare_sources(&root, &sub, &d.path().join("work"), &[]).unwrap();
        assert!(p.files.taken.is_empty());
        assert!(p.files.ignored.contains(
            &"labs/lab-01/src/lib.rs (not a regular file, or under a symbolic link: the course's copy is used)".to_owned()
        ));
        assert_eq!(read("labs/lab-01/src/lib.rs"), "// TODO\n");
    }

    /// The student files of a graded lab are checked before any build.
    #[test]
    fn broken_rules_are_found_when_preparing() {
        let d = tempfile::tempdir().unwrap();
        let root = course(d.path());
        let tree = d.path().join("subs/bob");
        crate::testutil::write(
            &tree,
            &[(
                "labs/lab-01/src/lib.rs",
                "fn f() {\n    pr_info!(\"{}\", include_str!(\"../expected/01-a.txt\"));\n}\n",
            )],
        );
        let sub = Submission {
            student: "bob".into(),
            source: Form::Tree(tree),
        };
        let p = prepare_sources(&root, &sub, &d.path().join("work"), &[]).unwrap();
        let notes = Notes::of(&p);
        expect_test::expect![[r#"
            - lab-01 rejected before the build: labs/lab-01/src/lib.rs:2:20: `include_str!`: reads another file at build time; a student file may not reach past itself [include]
        "#]]
        .assert_eq(&notes.lines("- "));
    }

    #[test]
    fn notes_in_the_reports() {
        let notes = [
            Notes {
                student: "alice".into(),
                ignored: vec!["labs/lab-04/src/module.rs".into()],
                violations: vec![],
            },
            Notes {
                student: "bob".into(),
                ignored: vec![],
                violations: vec![(
                    "lab-01".into(),
                    "labs/lab-01/src/lib.rs:3:5: `unsafe` block [unsafe]".into(),
                )],
            },
            Notes {
                student: "carol".into(),
                ..Notes::default()
            },
        ];
        expect_test::expect![[r#"

            What the submissions changed that grading did not take (book: For instructors, "What a submission may change"):
              alice:
                ignored (not student files; the course's copies are graded): labs/lab-04/src/module.rs
              bob:
                lab-01 rejected before the build: labs/lab-01/src/lib.rs:3:5: `unsafe` block [unsafe]
        "#]]
        .assert_eq(&notes_section(&notes));
        assert_eq!(notes_section(&notes[2..]), "");
        let json = r#"{"entries": [
            {"student": "alice", "result": {"lab": "lab-04"}},
            {"student": "bob", "result": {"lab": "lab-01"}},
            {"student": "bob", "result": {"lab": "lab-02"}}
        ]}"#;
        expect_test::expect![[r#"
            {
              "entries": [
                {
                  "ignored_files": [
                    "labs/lab-04/src/module.rs"
                  ],
                  "policy_violations": [],
                  "result": {
                    "lab": "lab-04"
                  },
                  "student": "alice"
                },
                {
                  "ignored_files": [],
                  "policy_violations": [
                    "labs/lab-01/src/lib.rs:3:5: `unsafe` block [unsafe]"
                  ],
                  "result": {
                    "lab": "lab-01"
                  },
                  "student": "bob"
                },
                {
                  "ignored_files": [],
                  "policy_violations": [],
                  "result": {
                    "lab": "lab-02"
                  },
                  "student": "bob"
                }
              ]
            }
        "#]]
        .assert_eq(&notes_json(json, &notes).unwrap());
    }

    #[test]
    fn seeds_and_extra_reach_the_child_runs_and_the_report() {
        let job = |student: &str, lab: &str| Job {
            student: student.into(),
            lab: lab.into(),
            request: jobs::request(lab, false, GuestArgs::default()),
            cwd: PathBuf::from("/w"),
            log: PathBuf::from("/l"),
            env: Vec::new(),
        };
        let mut jobs = vec![job("alice", "lab-03"), job("bob", "lab-03")];
        let seeds = seed_and_extra(&mut jobs, 7, Some(Path::new("/course")));
        assert_ne!(seeds[0].2, seeds[1].2);
        let r = &jobs[0].request;
        assert_eq!(
            (r.name.as_str(), r.seed, r.extra.as_deref()),
            ("lab-03", Some(seeds[0].2), Some(Path::new("/course")))
        );
        // The same base seed gives every student the same seed again.
        let mut again = vec![job("alice", "lab-03")];
        assert_eq!(seed_and_extra(&mut again, 7, None)[0], seeds[0]);
        let json = r#"{"entries": [
            {"student": "alice", "result": {"lab": "lab-03"}},
            {"student": "alice", "result": {"lab": "lab-01"}}
        ]}"#;
        let out = seeds_json(json, &[("alice".into(), "lab-03".into(), 42)]).unwrap();
        expect_test::expect![[r#"
            {
              "entries": [
                {
                  "result": {
                    "lab": "lab-03"
                  },
                  "seed": 42,
                  "student": "alice"
                },
                {
                  "result": {
                    "lab": "lab-01"
                  },
                  "student": "alice"
                }
              ]
            }
        "#]]
        .assert_eq(&out);
    }

    #[test]
    fn numstat_names_every_path_a_patch_touches() {
        let out = "1\t1\tlabs/lab-01/src/lib.rs\0-\t-\tlabs/lab-01/blob.bin\0\
                   0\t0\t\0labs/lab-01/src/a.rs\0labs/lab-01/src/b.rs\0";
        let (paths, binary) = numstat_paths(out);
        assert_eq!(
            paths,
            [
                "labs/lab-01/blob.bin",
                "labs/lab-01/src/a.rs",
                "labs/lab-01/src/b.rs",
                "labs/lab-01/src/lib.rs"
            ]
        );
        assert_eq!(binary, ["labs/lab-01/blob.bin"]);
    }

    /// The seeded target keeps the kernel crate's units and loses the
    /// course's builds of labs, solutions and drivers.
    #[test]
    fn a_seeded_target_holds_no_compiled_solution() {
        let d = crate::testutil::tree(&[
            ("kernel/liblab_01.a", ""),
            ("kernel/liblab_01_solution.a", ""),
            ("kernel/librust_binder-304c.a", ""),
            ("kernel/deps/lab_01_solution-5d3.d", ""),
            ("kernel/deps/libkernel-77a.rlib", ""),
            ("kernel/.fingerprint/lab-01-solution-5d3/lib", ""),
            ("kernel/.fingerprint/kernel-77a/lib", ""),
            ("kernel/build/kernel-1f6/out/bindings.rs", ""),
        ]);
        let packages = [
            "lab-01".into(),
            "lab-01-solution".into(),
            "rust-binder".into(),
        ];
        prune_target(d.path(), &packages).unwrap();
        let left = regular_files(d.path(), |_, _| false).unwrap();
        assert_eq!(
            left,
            [
                "kernel/.fingerprint/kernel-77a/lib",
                "kernel/build/kernel-1f6/out/bindings.rs",
                "kernel/deps/libkernel-77a.rlib"
            ]
        );
    }
}
