//! `checker grade DIR`: grading a folder of submissions.
//!
//! `DIR` holds one entry per student:
//!
//! - `DIR/<student>/labs/lab-NN/src/...`: the student's `labs/` tree (a
//!   copy of their checkout, or just the labs they hand in), or
//! - `DIR/<student>.patch`: a patch against the course's tree, as
//!   `git diff` or `git format-patch` write it (paths `a/labs/...`).
//!
//! **What a submission may change**: only `labs/<lab>/src/**`, the
//! exercise's own sources. Everything else (the lab's `Cargo.toml`,
//! `Kbuild`, `lab.toml`, `expected/`, the kernel crate, the macro, the
//! checker) comes from the course's tree, so a student cannot change the
//! steps, the snapshots or the build. A patch is applied to a pristine
//! copy of the course's `labs/`, then the same rule picks its `src/`
//! folders; a patch that touches anything else is still applied to that
//! copy, but only `src/**` is taken.
//!
//! Each student gets a workspace of their own under
//! `target/checker/grade/work/<student>/`: the course's top-level Cargo
//! files, symbolic links to `kernel-crate/`, `module-macro/`, `checker/`
//! (and the other top-level members), and real copies of the course's
//! `labs/` with the student's `src/` folders in place; its Cargo target
//! folder is its own (seeded from the course's compiled kernel crate when
//! there is one). Builds of different students therefore never share a
//! file, and grading the same submissions twice gives the same grades.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::jobs::{self, Job};
use crate::run::GuestArgs;
use crate::{lab, setup, vm, workspace};

/// A submission found in the grading folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    /// Student name: the folder's name, or the patch's name without `.patch`.
    pub student: String,
    /// Where it is.
    pub source: Source,
}

/// What a submission is.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
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
                source: Source::Tree(path),
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
                source: Source::Patch(path),
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

/// Whether a file in a lab folder is Kbuild's or Cargo's output.
pub fn is_build_output(name: &str) -> bool {
    name == "target"
        || name == "modules.order"
        || name == "Module.symvers"
        || name == "kernel_helpers.c"
        || name.starts_with(".kernel-")
        || name.ends_with(".cmd")
        || [".o", ".ko", ".mod", ".mod.c", ".a", ".tmp"]
            .iter()
            .any(|ext| name.ends_with(ext))
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
        }
    }
    Ok(())
}

/// Labs a submission tree has sources for (`labs/lab-*/src/`).
fn submitted_labs(labs: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(labs)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("lab-") && labs.join(n).join("src").is_dir())
        .collect();
    names.sort();
    names
}

/// Applies `patch` to a pristine copy of the course's `labs/` in
/// `<dest>/labs`; returns the labs the patch touches.
fn apply_patch(root: &Path, patch: &Path, dest: &Path) -> Result<Vec<String>> {
    copy_sources(&root.join("labs"), &dest.join("labs"))?;
    let patch = patch
        .canonicalize()
        .with_context(|| format!("cannot read {}", patch.display()))?;
    let out = Command::new("git")
        .args(["apply", "--numstat", "--summary"])
        .arg(&patch)
        .current_dir(dest)
        .output()
        .context("cannot run git (apt-get install git)")?;
    let mut labs = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some(path) = line.split('\t').nth(2) {
            let mut parts = path.split('/');
            if let (Some("labs"), Some(lab), Some("src")) =
                (parts.next(), parts.next(), parts.next())
            {
                if !labs.iter().any(|l| l == lab) {
                    labs.push(lab.to_owned());
                }
            }
        }
    }
    let out = Command::new("git")
        .args(["apply", "--whitespace=nowarn"])
        .arg(&patch)
        .current_dir(dest)
        .stdin(Stdio::null())
        .output()
        .context("cannot run git (apt-get install git)")?;
    if !out.status.success() {
        bail!(
            "the patch does not apply to the course's labs/: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    labs.sort();
    Ok(labs)
}

/// A prepared submission: its workspace and the labs to grade.
#[derive(Debug)]
pub struct Prepared {
    /// The student.
    pub student: String,
    /// The workspace root made for the student.
    pub workspace: PathBuf,
    /// Labs to grade.
    pub labs: Vec<String>,
}

/// Makes the student's workspace under `work` (removing an older one)
/// and returns the labs to grade: `only` if given, else every lab the
/// submission holds sources for (that the course has).
pub fn prepare(root: &Path, sub: &Submission, work: &Path, only: &[String]) -> Result<Prepared> {
    let ws = work.join(&sub.student);
    if ws.exists() {
        fs::remove_dir_all(&ws).with_context(|| format!("cannot remove {}", ws.display()))?;
    }
    fs::create_dir_all(&ws)?;
    let (submitted, found): (PathBuf, Vec<String>) = match &sub.source {
        Source::Tree(dir) => (dir.join("labs"), submitted_labs(&dir.join("labs"))),
        Source::Patch(patch) => {
            let scratch = ws.join("submitted");
            let labs = apply_patch(root, patch, &scratch)?;
            (scratch.join("labs"), labs)
        }
    };
    // Top level: Cargo files copied, everything else linked.
    for entry in fs::read_dir(root)? {
        let entry = entry?;
        let name = entry.file_name();
        let n = name.to_string_lossy();
        if matches!(n.as_ref(), "labs" | "target" | ".git" | "book") {
            continue;
        }
        let (src, dst) = (entry.path(), ws.join(&name));
        if entry.file_type()?.is_file() {
            fs::copy(&src, &dst)?;
        } else {
            std::os::unix::fs::symlink(&src, &dst)?;
        }
    }
    copy_sources(&root.join("labs"), &ws.join("labs"))?;
    let course: Vec<String> = lab::all_labs(root)?
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let labs: Vec<String> = if only.is_empty() {
        found.into_iter().filter(|l| course.contains(l)).collect()
    } else {
        only.to_vec()
    };
    for l in &labs {
        let theirs = submitted.join(l).join("src");
        if theirs.is_dir() {
            let ours = ws.join("labs").join(l).join("src");
            fs::remove_dir_all(&ours)?;
            copy_sources(&theirs, &ours)?;
        }
    }
    // Seed the target folder with the course's compiled kernel crate
    // (Cargo rebuilds what is stale; only the student's crate should be).
    let course_target = root.join("target").join("x86_64-unknown-none");
    if course_target.is_dir() {
        let dest = ws.join("target");
        fs::create_dir_all(&dest)?;
        let _ = Command::new("cp")
            .args(["-a", "--reflink=auto"])
            .arg(&course_target)
            .arg(&dest)
            .status();
    }
    Ok(Prepared {
        student: sub.student.clone(),
        workspace: ws,
        labs,
    })
}

/// The child runs for `p`: one per lab, output and results under `out`.
pub fn jobs_for(p: &Prepared, out: &Path, extra: &[OsString]) -> Vec<Job> {
    p.labs
        .iter()
        .map(|l| {
            let mut args: Vec<OsString> =
                vec![l.into(), "--root".into(), p.workspace.clone().into()];
            args.extend(extra.iter().cloned());
            Job {
                student: p.student.clone(),
                lab: l.clone(),
                args,
                cwd: p.workspace.clone(),
                log: out.join("logs").join(format!("{}-{l}.txt", p.student)),
                result: out.join("logs").join(format!("{}-{l}.json", p.student)),
                env: Vec::new(),
            }
        })
        .collect()
}

/// `checker grade`.
#[derive(Debug, Clone, clap::Args)]
pub struct GradeArgs {
    /// The folder of submissions: DIR/<student>/labs/... or DIR/<student>.patch.
    pub dir: PathBuf,
    /// Grade only this lab (repeatable; default: every lab a submission has).
    #[arg(long = "lab", value_name = "LAB")]
    pub labs: Vec<String>,
    /// Runs at once (default: the number of CPUs).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub guest: GuestArgs,
    /// Where the reports and logs go (default: target/checker/grade).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `checker grade DIR`.
pub fn grade_cmd(args: &GradeArgs) -> Result<bool> {
    vm::install_interrupt_handler()?;
    let root = workspace::root()?;
    setup::ensure(&setup::Options {
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
    let flags = jobs::child_flags(false, args.guest);
    let mut all = Vec::new();
    let mut entries_err = Vec::new();
    for sub in &subs {
        print!("prepare {} ...", sub.student);
        let _ = std::io::Write::flush(&mut std::io::stdout());
        match prepare(&root, sub, &out.join("work"), &args.labs) {
            Ok(p) => {
                println!(
                    " {}",
                    if p.labs.is_empty() {
                        "no labs".to_owned()
                    } else {
                        p.labs.join(", ")
                    }
                );
                all.extend(jobs_for(&p, &out, &flags));
            }
            Err(e) => {
                println!(" FAILED: {e:#}");
                entries_err.push(crate::report::Entry {
                    student: sub.student.clone(),
                    result: crate::report::LabResult::error("submission", &format!("{e:#}"), None),
                });
            }
        }
    }
    let parallel = args.jobs.unwrap_or_else(jobs::default_jobs);
    let mut entries = jobs::run_and_report(&all, parallel, &out)?;
    if !entries_err.is_empty() {
        entries.extend(entries_err);
        crate::report::write_reports(&out, &entries)?;
        println!("(the reports also list the submissions that could not be prepared)");
    }
    Ok(entries.iter().all(|e| e.result.passed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submissions_are_found_and_sorted() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("zoe/labs/lab-01/src")).unwrap();
        fs::create_dir_all(d.path().join("adam/labs")).unwrap();
        fs::write(d.path().join("bea.patch"), "").unwrap();
        fs::write(d.path().join("notes.txt"), "").unwrap();
        let subs = find_submissions(d.path()).unwrap();
        let names: Vec<_> = subs.iter().map(|s| s.student.as_str()).collect();
        assert_eq!(names, ["adam", "bea", "zoe"]);
        assert!(matches!(subs[1].source, Source::Patch(_)));
        fs::create_dir_all(d.path().join("bad")).unwrap();
        let err = find_submissions(d.path()).unwrap_err().to_string();
        assert!(err.contains("must hold labs/"), "{err}");
    }

    /// A course tree with one lab, and a patch that changes the lab's
    /// source and (not allowed) its expected snapshot and steps.
    #[test]
    fn only_src_is_taken_from_a_patch() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("course");
        let lab = root.join("labs/lab-01");
        fs::create_dir_all(lab.join("src")).unwrap();
        fs::create_dir_all(lab.join("expected")).unwrap();
        fs::create_dir_all(root.join("kernel-crate")).unwrap();
        fs::write(root.join("Cargo.toml"), "[workspace]\n").unwrap();
        fs::write(
            lab.join("lab.toml"),
            "title='t'\nchapter='c.md'\nmodules=['m']\n[[step]]\nname='a'\nrun='true'\n",
        )
        .unwrap();
        fs::write(lab.join("src/lib.rs"), "// TODO\n").unwrap();
        fs::write(lab.join("expected/01-a.txt"), "course\n").unwrap();
        fs::write(lab.join("hello.ko"), "stale build output").unwrap();
        let patch = d.path().join("mallory.patch");
        fs::write(
            &patch,
            "--- a/labs/lab-01/src/lib.rs\n+++ b/labs/lab-01/src/lib.rs\n@@ -1 +1 @@\n-// TODO\n+// done\n\
             --- a/labs/lab-01/expected/01-a.txt\n+++ b/labs/lab-01/expected/01-a.txt\n@@ -1 +1 @@\n-course\n+forged\n",
        )
        .unwrap();
        let sub = Submission {
            student: "mallory".into(),
            source: Source::Patch(patch),
        };
        let p = prepare(&root, &sub, &d.path().join("work"), &[]).unwrap();
        assert_eq!(p.labs, ["lab-01"]);
        let ws = &p.workspace;
        let read = |rel: &str| fs::read_to_string(ws.join(rel)).unwrap();
        assert_eq!(read("labs/lab-01/src/lib.rs"), "// done\n");
        assert_eq!(read("labs/lab-01/expected/01-a.txt"), "course\n");
        assert!(!ws.join("labs/lab-01/hello.ko").exists());
        assert!(fs::symlink_metadata(ws.join("kernel-crate"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn build_output_is_not_copied() {
        for name in [
            "hello.o",
            "hello.ko",
            ".hello.o.cmd",
            "hello.mod.c",
            "modules.order",
            "target",
        ] {
            assert!(is_build_output(name), "{name}");
        }
        for name in [
            "lib.rs",
            "Kbuild",
            "Makefile",
            "lab.toml",
            "01-load.txt",
            "Cargo.toml",
        ] {
            assert!(!is_build_output(name), "{name}");
        }
    }
}
