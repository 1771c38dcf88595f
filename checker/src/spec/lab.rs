//! The lab description, `labs/<lab>/lab.toml`.
//!
//! ```toml
//! title = "Your first module"
//! chapter = "first-module.md"   # book chapter under book/src, shown by `checker lab`
//! modules = ["hello"]           # hello.ko, built in the lab folder, copied to /lab/ in the guest
//! smp = 1                       # optional: guest CPUs (default 1)
//! timeout = 60                  # optional: seconds for the whole guest run (default 60)
//!
//! [[step]]
//! name = "load"                 # [a-z0-9_-]+, used in the snapshot file name
//! run = "insmod /lab/hello.ko"  # one busybox `sh -c` command line run in the guest
//!
//! [[step]]
//! name = "unload"
//! run = "rmmod hello"
//! ```
//!
//! Optional keys of every step, for grading:
//!
//! ```toml
//! points = 2                    # weight of the step in the lab's score (default 1, may be 0)
//! depends = "load"              # an earlier step; when it fails, this one is skipped, not failed
//! hint = "Did init return Ok?"  # shown to the student when this step fails
//! ```
//!
//! Test programs that the steps run go in `programs`: each is a file of
//! the lab folder after the build (a static executable that the lab's
//! `Makefile` builds, or a busybox `sh` script), copied to `/lab/<name>`
//! in the guest with mode 0755. The guest has no libc: a compiled program
//! must be linked statically (`gcc -static`).
//!
//! ```toml
//! programs = ["devtest"]        # optional: labs/<lab>/devtest -> /lab/devtest
//! ```
//!
//! A C driver that Debian ships with the guest kernel comes from the
//! cached image: `image_modules` names modules (or paths relative to
//! `lib/modules/<abi>`), which the guest loads, dependencies first, before
//! the first step (see `vm::image`):
//!
//! ```toml
//! image_modules = ["binder_linux"]   # optional: /lab/image/binder_linux.ko, insmod'ed at boot
//! ```
//!
//! The files a student edits are declared in `student`, paths relative to
//! the lab folder. `*` and `?` match within one path segment, `**` any
//! number of whole segments:
//!
//! ```toml
//! student = ["src/vec.rs"]      # the exercise; everything else is the course's
//! solution_dir = "solution"     # optional: where the reference solution keeps its copies (default)
//! allow = ["link-sections"]     # optional: rules of the student-file policy this lab lifts
//! ```
//!
//! `checker grade` takes exactly these files from a submission and every
//! other file from the course, so the harness (a `module.rs` the exercise
//! `include!`s, compile-fail cases, `Cargo.toml`, `Kbuild`, `lab.toml`,
//! `expected/`) is never the student's. Before anything is built, every
//! student file is read and checked against the rules of
//! [`crate::spec::policy`] (no `unsafe`, no `include_str!`, ...): by `checker
//! lab` on the exercise's files, or with `--solution` on the same paths
//! under `solution_dir` (lab 08's solution is the finished driver in
//! `drivers/semaphore`). `allow` lifts rules by name (see
//! [`crate::spec::policy::Rule`]) for a lab whose exercise needs them: lab 02's
//! macro writes `.modinfo` statics. When the lab loads, each pattern must
//! match at least one Rust file (`.rs`) of the lab folder and of the
//! solution's, never one under `expected/`, `compile-fail/` or the
//! solution's folder; absolute paths and `..` are refused.
//!
//! Unknown keys are errors. Each step `N` (1-based) is compared with
//! `labs/<lab>/expected/NN-<name>.txt` (see [`crate::grade::snapshot`]).
//!
//! A step has exactly one of `run` and `host`. `run` steps are *guest*
//! steps, run in the guest after it boots. A `host` step runs on this
//! machine instead, before the build and the guest, for host-side work such
//! as a proc-macro crate's tests:
//!
//! ```toml
//! [[step]]
//! name = "expansion"
//! host = "cargo test -p lab-02-macro"                    # `sh -c`, in the workspace root
//! host_solution = "cargo test -p lab-02-macro-solution"  # optional: run instead with --solution
//! ```
//!
//! The snapshot of a host step records its exit status and its output
//! reduced to the test harness summary (see [`crate::grade::snapshot::render_host`]);
//! it names the `host` command whichever of the two ran, so the exercise and
//! the reference solution are compared with the same file. The full output
//! is kept next to the build log. `UPDATE_EXPECT` is removed from a host
//! step's environment: it refreshes the lab's snapshots, never the snapshot
//! tests inside the crate under test. Host steps come before every guest
//! step, and a lab needs at least one guest step.
//!
//! A `compile_fail` step is a host step too: it builds the lab's crate with
//! a case file that must be rejected by the compiler, and passes when the
//! build fails with the errors its snapshot records (see
//! [`crate::run::compilefail`]). The path is relative to the lab folder:
//!
//! ```toml
//! [[step]]
//! name = "guard-not-send"
//! compile_fail = "compile-fail/guard_send.rs"
//! ```
//!
//! A *differential* step has no snapshot file: it runs twice in the same
//! boot, with the student's module and (after every other step) with the
//! reference solution's, and the two snapshots must be equal (see
//! [`crate::spec::inputs`]). Its `run` names the module as `{ko}` and may use
//! values drawn per run from `[random]`, which only differential steps
//! may use:
//!
//! ```toml
//! [random]
//! count = { int = [0, 12] }     # or { hex = BYTES }, { alpha = [MIN, MAX] } (letters)
//!
//! [[step]]
//! name = "random-params"
//! run = "insmod {ko} count={count} && rmmod greeter"   # {ko}: /lab/greeter.ko, /lab/ref/greeter.ko
//! differential = true
//! ```
//!
//! `{x}` after a `$` is the shell's. `checker lab --extra COURSE_DIR`
//! appends the `[[step]]`s of `COURSE_DIR/<lab>/lab.toml`, whose snapshots
//! are `COURSE_DIR/<lab>/expected/NN-name.txt`, numbered within that file
//! (see [`Lab::add_extra`]).
//!
//! A `check_disk` step runs on the host after the guest powered off: it
//! reads the backing file of a pattern `[[disk]]` (see
//! [`crate::spec::devices`] for `memory`, `[[disk]]` and `[[nvme]]`),
//! checks that every sector is a pattern sector in its place (a known
//! generation, no torn or misplaced sector), and that its SHA-256 is the
//! last one a guest step printed (a line `sha256 HEX ...`). It comes
//! after every guest step (those for the debug kernel may follow it):
//!
//! ```toml
//! [[step]]
//! name = "host-rehash"
//! check_disk = "nvm"            # a [[disk]] id
//! ```
//!
//! The lab folder's `Makefile` builds the modules: the checker runs
//! `make -C labs/<lab> KDIR=/usr/src/linux-headers-<abi>` (plus
//! `SOLUTION=1` for the reference solution) and expects `<module>.ko` in the
//! lab folder afterwards. The kernel log lines kept for comparison are those
//! that start with `<module>:` for one of `modules` (plus crash lines).

use std::path::{Path, PathBuf};

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use crate::spec::devices::{DiskSpec, NvmeSpec};
use crate::spec::files::{check_pattern, glob_matches, list_files, matching_files};
use crate::spec::inputs::{Inputs, RandomSpec};
use crate::tools::guest::Linux;

/// Default time limit of a guest run, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// A parsed `lab.toml`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LabConfig {
    /// Human title of the lab.
    pub title: String,
    /// Book chapter file under `book/src`.
    pub chapter: String,
    /// Module names (without `.ko`) the build produces in the lab folder.
    pub modules: Vec<String>,
    /// Test programs in the lab folder, copied to `/lab/<name>`.
    #[serde(default)]
    pub programs: Vec<String>,
    /// Modules of the guest kernel's own image, loaded with their
    /// dependencies before the first step (see `vm::image`).
    #[serde(default)]
    pub image_modules: Vec<String>,
    /// The files the student edits (`student`): patterns relative to the
    /// lab folder. `checker grade` takes only these from a submission.
    #[serde(default)]
    pub student: Vec<String>,
    /// Where the reference solution keeps its copies of the student files
    /// (`solution_dir`, relative to the lab folder; default `solution`).
    pub solution_dir: Option<String>,
    /// Rules of [`crate::spec::policy`] that this lab lifts (`allow`).
    #[serde(default)]
    pub allow: Vec<crate::spec::rules::Rule>,
    /// Not a `lab.toml` key: where the snapshots are when not in the lab
    /// folder's `expected/` (`checker lab --expected-dir`, which `checker
    /// grade` uses to keep them out of the tree a student's build sees).
    #[serde(skip)]
    pub expected_dir: Option<PathBuf>,
    /// Guest CPUs.
    pub smp: Option<u32>,
    /// Time limit of the whole guest run, in seconds.
    pub timeout: Option<u64>,
    /// Guest memory in MiB (see [`crate::spec::devices`]).
    pub memory: Option<u32>,
    /// Wall-clock limit of each sandboxed build and host step, in
    /// seconds (see [`crate::tools::sandbox`]; default
    /// [`crate::tools::sandbox::DEFAULT_BUILD_TIMEOUT_SECS`]).
    pub build_timeout: Option<u64>,
    /// Address-space limit of each process of a build, in MiB (default
    /// [`crate::tools::sandbox::DEFAULT_BUILD_MEMORY_MIB`]).
    pub build_memory: Option<u64>,
    /// `[[disk]]`: disks the host makes for the guest.
    #[serde(default, rename = "disk")]
    pub disks: Vec<DiskSpec>,
    /// `[[nvme]]`: NVMe controllers, each serving one disk.
    #[serde(default)]
    pub nvme: Vec<NvmeSpec>,
    /// `[random]`: values drawn per run for `differential` steps (see
    /// [`crate::spec::inputs`]).
    #[serde(default)]
    pub random: BTreeMap<String, RandomSpec>,
    /// Not a `lab.toml` key: this run's values of `random` (set by
    /// [`Lab::with_inputs`]).
    #[serde(skip)]
    pub inputs: Option<Inputs>,
    /// Not a `lab.toml` key: where the snapshots of an instructor's extra
    /// steps (`--extra`) are (see [`Lab::add_extra`]).
    #[serde(skip)]
    pub extra: Option<PathBuf>,
    /// Not a `lab.toml` key: the series of this run's guest kernel
    /// (`6.12`, see [`crate::tools::guest::series_of`]), whose snapshots
    /// the `per_kernel` steps read; `None`: the default series (see
    /// [`Lab::series`]).
    #[serde(skip)]
    pub kernel_series: Option<String>,
    /// Not a `lab.toml` key: the major version of this run's QEMU, whose
    /// snapshots the `per_qemu` steps read; `None`: the host's (see
    /// [`Lab::qemu`]).
    #[serde(skip)]
    pub qemu_major: Option<u32>,
    /// The steps, in order: host steps first.
    #[serde(rename = "step")]
    pub steps: Vec<LabStep>,
}

pub use crate::spec::steps::{
    failslab_target, DebugStep, Failslab, FailslabStep, FailslabTarget, LabStep, Step, StepKind,
};

/// The file at the root of a grading workspace (`checker grade`, see
/// `batch::gradedir`): it lists the course files put in it, and a lab there
/// has no solution folder.
pub const GRADING_WORKSPACE: &str = ".grading-workspace";

/// The file at the root of a student repository (`checker export-course`,
/// see `commands::export`): a lab there has no solution folder, and one with
/// differential steps has the reference's modules under [`REFERENCE_DIR`].
pub const STUDENT_COURSE: &str = ".student-course";

/// The folder at a student repository's root holding, for each lab with
/// differential steps, the reference solution's modules, one folder per
/// kernel ABI they were built for (`references/<lab>/<abi>/`): outside
/// the lab folder, which Kbuild's `make clean` empties of modules.
pub const REFERENCE_DIR: &str = "references";

/// A lab: its folder and its parsed description.
#[derive(Debug, Clone)]
pub struct Lab {
    /// Lab name, the folder's name (`lab-01`).
    pub name: String,
    /// The lab folder.
    pub dir: PathBuf,
    /// The parsed `lab.toml`.
    pub config: LabConfig,
}

impl Lab {
    /// The limits of this lab's sandboxed builds and host steps: its
    /// `build_timeout` and `build_memory`, else the defaults.
    pub fn build_limits(&self) -> crate::tools::sandbox::Limits {
        crate::tools::sandbox::Limits::new(self.config.build_timeout, self.config.build_memory)
    }

    /// Loads `<dir>/lab.toml`; its `student` patterns must name files of
    /// the lab folder and of the solution's (see the module docs).
    pub fn load(dir: &Path) -> Result<Lab> {
        let file = dir.join("lab.toml");
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let config = parse(&text).with_context(|| format!("invalid {}", file.display()))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "lab".into());
        let lab = Lab {
            name,
            dir: dir.to_path_buf(),
            config,
        };
        lab.check_student_files(&text)
            .with_context(|| format!("invalid {}", file.display()))?;
        check_snapshot_files(&dir.join("expected"), lab.config.steps.iter().enumerate())
            .with_context(|| format!("invalid {}", file.display()))?;
        Ok(lab)
    }

    /// The folder holding the reference solution's copies of the student
    /// files (`solution_dir`, default `solution`).
    pub fn solution_dir(&self) -> PathBuf {
        self.dir
            .join(self.config.solution_dir.as_deref().unwrap_or("solution"))
    }

    /// The lab is in a workspace `checker grade` made (the lab folder's
    /// grandparent holds [`GRADING_WORKSPACE`]).
    pub fn in_grading_workspace(&self) -> bool {
        self.dir.join("../..").join(GRADING_WORKSPACE).is_file()
    }

    /// The lab is in a student repository (the lab folder's grandparent
    /// holds [`STUDENT_COURSE`]).
    pub fn in_student_course(&self) -> bool {
        self.dir.join("../..").join(STUDENT_COURSE).is_file()
    }

    /// The student files of the lab folder: paths relative to it, sorted.
    pub fn student_files(&self) -> Result<Vec<String>> {
        matching_files(&self.dir, &self.config.student)
    }

    /// The reference solution's copies of the student files, relative to
    /// [`Lab::solution_dir`], sorted.
    pub fn solution_files(&self) -> Result<Vec<String>> {
        matching_files(&self.solution_dir(), &self.config.student)
    }

    /// Whether `path` (relative to the lab folder, `/`-separated) is one
    /// of the student's files.
    pub fn is_student_file(&self, path: &str) -> bool {
        self.config
            .student
            .iter()
            .any(|pattern| glob_matches(pattern, path))
    }

    /// Each `student` pattern matches Rust files of the lab folder and of
    /// the solution's, none of them the course's own (snapshots,
    /// compile-fail cases, the solution); errors name `lab.toml`'s line.
    fn check_student_files(&self, text: &str) -> Result<()> {
        if self.config.student.is_empty() {
            return Ok(());
        }
        let solution = self.solution_dir();
        if !solution.is_dir() && (self.in_grading_workspace() || self.in_student_course()) {
            // `checker grade` leaves the solutions out of a student's build,
            // `checker export-course` out of a student's repository.
            return Ok(());
        }
        if !solution.is_dir() {
            bail!(
                "{}`solution_dir`: {} is not a folder",
                line_prefix(text, "solution_dir"),
                solution.display()
            );
        }
        let inside = solution
            .strip_prefix(&self.dir)
            .ok()
            .map(|p| p.to_string_lossy().replace('\\', "/"));
        let files = list_files(&self.dir)?;
        let solution_files = list_files(&solution)?;
        for pattern in &self.config.student {
            let mut at = line_prefix(text, &format!("\"{pattern}\""));
            if at.is_empty() {
                at = line_prefix(text, &format!("'{pattern}'"));
            }
            let matched: Vec<&String> = files.iter().filter(|f| glob_matches(pattern, f)).collect();
            if matched.is_empty() {
                bail!(
                    "{at}`student` pattern {pattern:?} matches no file of {}",
                    self.dir.display()
                );
            }
            for f in matched {
                let course_own = ["expected/", "compile-fail/"]
                    .iter()
                    .any(|d| f.starts_with(d))
                    || inside
                        .as_deref()
                        .is_some_and(|d| f.starts_with(&format!("{d}/")));
                if course_own {
                    bail!(
                        "{at}`student` pattern {pattern:?} matches {f}, which is the course's \
                         (snapshots, compile-fail cases and the solution never are the student's)"
                    );
                }
                if !f.ends_with(".rs") {
                    bail!(
                        "{at}`student` pattern {pattern:?} matches {f}: student files must be \
                         Rust sources (.rs), which the checker reads before the build"
                    );
                }
            }
            if !solution_files.iter().any(|f| glob_matches(pattern, f)) {
                bail!(
                    "{at}`student` pattern {pattern:?} matches no file of the solution's folder {}",
                    solution.display()
                );
            }
        }
        Ok(())
    }

    /// The lab as run on Debian's kernel (`debug` false: without the steps
    /// for the debug kernel, which come last) or on the debug kernel (all
    /// steps).
    pub fn for_kernel(&self, debug: bool) -> Lab {
        let mut lab = self.clone();
        if !debug {
            lab.config.steps.retain(|s| s.debug.is_none());
        }
        lab
    }

    /// How many steps only the debug kernel runs.
    pub fn debug_steps(&self) -> usize {
        self.config
            .steps
            .iter()
            .filter(|s| s.debug.is_some())
            .count()
    }

    /// The guest steps, in order: the guest numbers them from 0. After
    /// them come the reference solution's runs of the differential steps,
    /// in order (`NAME-ref`, with `{ko}` the reference module): the guest
    /// runs them last, so the student's steps run as they would without.
    pub fn guest_steps(&self) -> Vec<Step> {
        let inputs = self.config.inputs.as_ref();
        let ko = |dir: &str| format!("{dir}/{}.ko", self.config.modules[0]);
        // Both runs of a differential step start with none of the lab's
        // modules loaded (what an earlier step left is unloaded, and what
        // that printed is not part of the step).
        let clean = format!(
            "{{ rmmod {}; dmesg -c; }} >/dev/null 2>&1; ",
            self.config.modules.join(" ")
        );
        let mut steps: Vec<Step> = self
            .config
            .steps
            .iter()
            .filter_map(|s| {
                let mut g = s.guest()?;
                g.run = crate::spec::inputs::expand(&g.run, inputs, &ko("/lab"));
                if s.differential {
                    g.run = format!("{clean}{}", g.run);
                }
                Some(g)
            })
            .collect();
        for s in self.config.steps.iter().filter(|s| s.differential) {
            steps.push(Step {
                name: format!("{}-ref", s.name),
                run: clean.clone()
                    + &crate::spec::inputs::expand(s.command(), inputs, &ko(REF_DIR)),
            });
        }
        steps
    }

    /// Whether the lab has differential steps (and so needs the reference
    /// solution's modules in the guest, under [`REF_DIR`]).
    pub fn has_differential(&self) -> bool {
        self.config.steps.iter().any(|s| s.differential)
    }

    /// The lab with this run's `[random]` values drawn from `seed`.
    pub fn with_inputs(&self, seed: u64) -> Lab {
        let mut lab = self.clone();
        lab.config.inputs = Some(Inputs::draw(&self.config.random, seed));
        lab
    }

    /// The command of step `index` as its snapshot records it: the
    /// `[random]` values filled in, `{ko}` left as it is (the student's
    /// and the reference's runs record the same command).
    pub fn shown_command(&self, index: usize) -> String {
        let step = &self.config.steps[index];
        crate::spec::inputs::expand(step.command(), self.config.inputs.as_ref(), "{ko}")
    }

    /// Appends the extra steps of `<extra>/<lab>/lab.toml`, if there is
    /// one, an instructor's hidden steps (`checker grade --extra`): only
    /// `[[step]]` tables; their snapshots are in `<extra>/<lab>/expected/`,
    /// numbered from 01 in the order of that file, whatever the kernel
    /// leaves out of the lab's own. Returns how many were added.
    pub fn add_extra(&mut self, extra: &Path) -> Result<usize> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Extra {
            #[serde(rename = "step", default)]
            steps: Vec<LabStep>,
        }
        let dir = extra.join(&self.name);
        let file = dir.join("lab.toml");
        if !file.is_file() {
            return Ok(0);
        }
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let parsed: Extra =
            toml::from_str(&text).with_context(|| format!("invalid {}", file.display()))?;
        let first = self.config.steps.len();
        let n = parsed.steps.len();
        let mut config = self.config.clone();
        config.steps.extend(
            parsed
                .steps
                .into_iter()
                .map(|s| LabStep { extra: true, ..s }),
        );
        validate(&config).with_context(|| {
            format!(
                "invalid {} (its steps are numbered after the lab's {first})",
                file.display()
            )
        })?;
        check_snapshot_files(
            &dir.join("expected"),
            config.steps[first..].iter().enumerate(),
        )
        .with_context(|| format!("invalid {}", file.display()))?;
        config.extra = Some(dir.join("expected"));
        self.config = config;
        Ok(n)
    }

    /// Whether a guest step has a `failslab` table (the guest then needs
    /// the checker's `failnth`).
    pub fn has_failslab(&self) -> bool {
        self.config
            .steps
            .iter()
            .any(|s| s.debug.as_ref().is_some_and(|d| d.failslab.is_some()))
    }

    /// How many of the lab's steps run in the guest (differential steps'
    /// reference runs, which [`Lab::guest_steps`] appends, not counted).
    pub fn guest_step_count(&self) -> usize {
        self.config
            .steps
            .iter()
            .filter(|s| s.guest().is_some())
            .count()
    }

    /// The lab index of the first guest step (the number of host steps).
    pub fn first_guest_step(&self) -> usize {
        let steps = &self.config.steps;
        steps
            .iter()
            .position(|s| s.guest().is_some())
            .unwrap_or(steps.len())
    }

    /// The most points the lab can give (the sum over its steps).
    pub fn max_points(&self) -> u32 {
        self.config.steps.iter().map(|s| s.points).sum()
    }

    /// The kernel series whose snapshots the `per_kernel` steps read:
    /// the run's (`kernel_series`), else the default guest's
    /// ([`Linux::default`], the host's Debian kernel).
    pub fn series(&self) -> &str {
        match &self.config.kernel_series {
            Some(series) => series,
            None => Linux::default().arg(),
        }
    }

    /// The QEMU major version whose snapshots the `per_qemu` steps read:
    /// the run's (`qemu_major`), else the host's `qemu-system-x86_64`'s
    /// (7 when it does not run: Debian 12's, which then runs no step).
    pub fn qemu(&self) -> u32 {
        self.config
            .qemu_major
            .or_else(crate::tools::probe::qemu_major)
            .unwrap_or(7)
    }

    /// Whether a step's snapshot depends on the host's QEMU.
    pub fn has_per_qemu_steps(&self) -> bool {
        self.config.steps.iter().any(|s| s.per_qemu.is_some())
    }

    /// The expected snapshot of step `index` (0-based): in the lab
    /// folder's `expected/`, or in `expected_dir` when set; for a
    /// `per_kernel` step, the one of [`Lab::series`]
    /// (`expected/NN-name.6.12.txt`), for a `per_qemu` step the one of
    /// [`Lab::qemu`] (`expected/NN-name.qemu10.txt`), which UPDATE_EXPECT
    /// writes there.
    pub fn expected_path(&self, index: usize) -> PathBuf {
        let step = &self.config.steps[index];
        let series = self.series();
        let qemu = if step.per_qemu.is_some() {
            self.qemu()
        } else {
            0
        };
        if let (true, Some(dir)) = (step.extra, &self.config.extra) {
            let nth = self.config.steps[..index]
                .iter()
                .filter(|s| s.extra)
                .count();
            return dir.join(step.snapshot_file_name(nth, series, qemu));
        }
        let dir = match &self.config.expected_dir {
            Some(dir) => dir.clone(),
            None => self.dir.join("expected"),
        };
        dir.join(step.snapshot_file_name(index, series, qemu))
    }
}

/// Refuses the snapshot files of `dir` (an `expected/` folder) that do not
/// fit their steps, `steps` numbered from 0 as in `dir`: a per-kernel
/// snapshot (`NN-name.6.12.txt`) of a step without `per_kernel`, or a
/// per-QEMU one (`NN-name.qemu10.txt`) of a step without `per_qemu`, whose
/// `lab.toml` then says nothing of why the kernel or QEMU matters; a
/// snapshot without the series or QEMU part of a step that has it, which no
/// run reads; and a series that is not `major.minor`. Files of no step are
/// left alone. A folder that is not there has nothing to refuse.
fn check_snapshot_files<'a>(
    dir: &Path,
    steps: impl Iterator<Item = (usize, &'a LabStep)>,
) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let steps: Vec<(String, &LabStep)> = steps
        .map(|(i, s)| (format!("{:02}-{}", i + 1, s.name), s))
        .collect();
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let Some(stem) = name.strip_suffix(".txt") else {
            continue;
        };
        let (stem, qemu) = match stem.rsplit_once(".qemu") {
            Some((rest, major)) if major.parse::<u32>().is_ok() => (rest, Some(major)),
            _ => (stem, None),
        };
        let (base, series) = match stem.split_once('.') {
            Some((base, series)) => (base, Some(series)),
            None => (stem, None),
        };
        let Some((_, step)) = steps.iter().find(|(b, _)| b == base) else {
            continue;
        };
        match (series, &step.per_kernel) {
            (Some(series), None) => bail!(
                "expected/{name} is a snapshot for kernel {series}, but step {base} has no \
                 `per_kernel = \"why\"`: a step's output is the same on every kernel (one \
                 {base}.txt; normalise what is noise) unless the kernel really behaves \
                 differently, which `per_kernel` says, and why"
            ),
            (None, Some(_)) => bail!(
                "expected/{name}: step {base} is `per_kernel`: its snapshots are \
                 {base}.<series>.txt, one per kernel series ({base}.6.1.txt, \
                 {base}.6.12.txt), and no run reads {name}: rename or remove it"
            ),
            (Some(series), Some(_)) if !crate::tools::guest::is_series(series) => {
                bail!("expected/{name}: {series:?} is not a kernel series (major.minor, e.g. 6.12)")
            }
            _ => {}
        }
        match (qemu, &step.per_qemu) {
            (Some(major), None) => bail!(
                "expected/{name} is a snapshot for QEMU {major}, but step {base} has no \
                 `per_qemu = \"why\"`: a step's output is the same on every QEMU unless \
                 the emulated device really reports something else, which `per_qemu` says, \
                 and why"
            ),
            (None, Some(_)) => bail!(
                "expected/{name}: step {base} is `per_qemu`: its snapshots end in \
                 .qemu<major>.txt, one per QEMU major version (QEMU 7.2: .qemu7.txt), and \
                 no run reads {name}: rename or remove it"
            ),
            _ => {}
        }
    }
    Ok(())
}

/// Where the guest finds the reference solution's modules of a lab with
/// differential steps.
pub const REF_DIR: &str = "/lab/ref";

/// `lab.toml line N: ` for the first line of `text` holding `needle`, or
/// nothing when no line does.
fn line_prefix(text: &str, needle: &str) -> String {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| format!("line {}: ", i + 1))
        .unwrap_or_default()
}

/// Parses and validates the text of a `lab.toml`.
pub fn parse(text: &str) -> Result<LabConfig> {
    let config: LabConfig = toml::from_str(text)?;
    validate(&config)?;
    Ok(config)
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

fn validate(c: &LabConfig) -> Result<()> {
    validate_files(c)?;
    if c.steps.is_empty() {
        bail!("a lab needs at least one [[step]]");
    }
    for (i, s) in c.steps.iter().enumerate() {
        validate_step(c, i, s)?;
    }
    if c.steps.iter().all(|s| s.guest().is_none()) {
        bail!("a lab needs at least one guest step (`run`)");
    }
    for (name, spec) in &c.random {
        if !name.starts_with(|ch: char| ch.is_ascii_lowercase())
            || !name
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_')
            || name == "ko"
        {
            bail!("[random] {name:?}: a name is [a-z][a-z0-9_]*, and not `ko`");
        }
        spec.check()
            .map_err(|e| anyhow::anyhow!("[random] {name}: {e}"))?;
    }
    if c.smp == Some(0) {
        bail!("`smp` must be at least 1");
    }
    if c.timeout == Some(0) {
        bail!("`timeout` must be at least 1 second");
    }
    crate::spec::devices::validate(c.memory, &c.disks, &c.nvme)?;
    Ok(())
}

/// The names of the lab's modules, programs, image modules and student
/// files.
fn validate_files(c: &LabConfig) -> Result<()> {
    if c.modules.is_empty() {
        bail!("`modules` must name at least one module");
    }
    for m in &c.modules {
        if !is_name(m) {
            bail!("module name {m:?} must be [a-z0-9_-]+ (no path, no .ko)");
        }
    }
    for p in &c.programs {
        if !is_name(p) {
            bail!("program name {p:?} must be [a-z0-9_-]+ (no path)");
        }
    }
    for m in &c.image_modules {
        if let Err(why) = ::vm::image::check_entry(m) {
            bail!("`image_modules` entry {m:?} {why}");
        }
    }
    for p in &c.student {
        if let Err(why) = check_pattern(p) {
            bail!("`student` pattern {p:?} {why}");
        }
    }
    if let Some(dir) = &c.solution_dir {
        if dir.is_empty() || dir.starts_with('/') {
            bail!("`solution_dir` {dir:?} must be a folder relative to the lab folder");
        }
        if c.student.is_empty() {
            bail!("`solution_dir` without `student`: there are no student files to find there");
        }
    }
    Ok(())
}

/// Step `i`, `s`, against the steps before it.
fn validate_step(c: &LabConfig, i: usize, s: &LabStep) -> Result<()> {
    if !is_name(&s.name) {
        bail!("step {}: name {:?} must be [a-z0-9_-]+", i + 1, s.name);
    }
    step_rules(c, &c.steps[..i], s).map_err(|e| anyhow::anyhow!("step {} ({}): {e}", i + 1, s.name))
}

/// The rules a step breaks, if any, given the steps before it (the
/// message without [`validate_step`]'s `step N (name): ` prefix).
fn step_rules(c: &LabConfig, earlier: &[LabStep], s: &LabStep) -> std::result::Result<(), String> {
    let commands: Vec<(&str, &str)> = match &s.kind {
        StepKind::Guest(run) => vec![("run", run)],
        StepKind::CompileFail(case) => vec![("compile_fail", case)],
        StepKind::CheckDisk(disk) => {
            let pattern = c.disks.iter().find(|d| &d.id == disk).map(|d| d.image);
            if pattern != Some(crate::spec::devices::ImageKind::Pattern) {
                return Err(format!(
                    "`check_disk = {disk:?}` must name a [[disk]] with `image = \"pattern\"`"
                ));
            }
            if !earlier.iter().any(|e| e.guest().is_some()) {
                return Err("a `check_disk` step comes after the guest steps".into());
            }
            vec![]
        }
        StepKind::Host { command, solution } => std::iter::once(("host", command.as_str()))
            .chain(solution.as_deref().map(|c| ("host_solution", c)))
            .collect(),
    };
    for (key, command) in commands {
        if command.trim().is_empty() {
            return Err(format!("`{key}` is empty"));
        }
        if command.contains('\n') {
            return Err(format!("`{key}` must be one line (use ; or && to chain)"));
        }
    }
    if let Some(dep) = &s.depends {
        if !earlier.iter().any(|e| &e.name == dep) {
            return Err(format!("`depends = {dep:?}` must name an earlier step"));
        }
    }
    if s.hint.as_deref().is_some_and(|h| h.trim().is_empty()) {
        return Err("`hint` is empty".into());
    }
    if earlier.iter().any(|e| e.name == s.name) {
        return Err("two steps have this name".into());
    }
    // A differential step has no snapshot file whose number could move,
    // and an extra step's is numbered in its own file.
    if s.debug.is_none() && !s.differential && !s.extra && earlier.iter().any(|e| e.debug.is_some())
    {
        return Err(
            "steps for the debug kernel (`kernel`, `failslab`) must come after every \
                    other step"
                .into(),
        );
    }
    if s.guest().is_some() && s.debug.is_none() && earlier.iter().any(|e| e.check_disk().is_some())
    {
        return Err(
            "`check_disk` steps run after the guest powered off: they come after every \
                    guest step (but those for the debug kernel)"
                .into(),
        );
    }
    check_placeholders(c, s)?;
    let after_guest = earlier.iter().any(|e| e.guest().is_some());
    if after_guest && s.guest().is_none() && s.check_disk().is_none() {
        return Err("host steps must come before every guest step".into());
    }
    Ok(())
}

/// The `{name}` placeholders of a step: only a differential step has
/// them, and each names a `[random]` value or `ko`.
fn check_placeholders(c: &LabConfig, s: &LabStep) -> std::result::Result<(), String> {
    let StepKind::Guest(run) = &s.kind else {
        return Ok(());
    };
    let names: Vec<&str> = crate::spec::inputs::placeholders(run)
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    if s.differential && !names.contains(&"ko") {
        return Err(
            "a differential step loads its module as `{ko}`: the student's, then the \
                    reference solution's"
                .into(),
        );
    }
    for name in names {
        let known = name == "ko" || c.random.contains_key(name);
        if !s.differential {
            if known {
                return Err(format!(
                    "`{{{name}}}` is for differential steps (`differential = true`): the \
                     snapshot of any other step is fixed"
                ));
            }
        } else if !known {
            return Err(format!(
                "`{{{name}}}` is neither `{{ko}}` nor a value of [random]"
            ));
        }
    }
    Ok(())
}

pub use crate::tools::discovery::{all_labs, all_samples, is_template};

/// The course's labs by name.
pub fn course_labs(root: &Path) -> Result<BTreeMap<String, Lab>> {
    let mut labs = BTreeMap::new();
    for dir in all_labs(root)? {
        let l = Lab::load(&dir)?;
        labs.insert(l.name.clone(), l);
    }
    Ok(labs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    #[test]
    fn build_limits_come_from_the_lab() {
        let lab = crate::testutil::lab(
            "/w/labs/lab-01",
            "title='t'\nchapter='c.md'\nmodules=['m']\nbuild_timeout=5\nbuild_memory=512\n\
             [[step]]\nname='a'\nrun='true'\n",
        );
        assert_eq!(lab.build_limits().wall, std::time::Duration::from_secs(5));
        assert_eq!(lab.build_limits().memory_mib, 512);
    }

    #[track_caller]
    fn check(input: &str, expect: Expect) {
        check_with(input, |c| format!("{c:#?}"), expect);
    }

    /// `show` of the parsed `input`, or its error, with a TOML parse
    /// error's excerpt [`folded`].
    #[track_caller]
    fn check_with(input: &str, show: impl Fn(&LabConfig) -> String, expect: Expect) {
        let actual = match parse(input) {
            Ok(c) => show(&c),
            Err(e) => format!("error: {}", folded(&format!("{e:#}"))),
        };
        expect.assert_eq(&actual);
    }

    /// The keys every lab must have (a step aside).
    const HEAD: &str = "title='t'\nchapter='c.md'\nmodules=['m']\n";

    /// `show` of a lab of `HEAD`, `keys` and one guest step.
    #[track_caller]
    fn check_keys(keys: &str, show: impl Fn(&LabConfig) -> String, expect: Expect) {
        check_with(
            &format!("{HEAD}{keys}\n[[step]]\nname='a'\nrun='true'\n"),
            show,
            expect,
        );
    }

    /// A TOML parse error's excerpt (the line, carets under the span) as
    /// one line, `line L, column C, at `span`: message`, so that each
    /// expectation says what is blamed in a line; `unknown_key` shows the
    /// whole excerpt.
    fn folded(error: &str) -> String {
        let Some(rest) = error.strip_prefix("TOML parse error at ") else {
            return error.to_owned();
        };
        let lines: Vec<&str> = rest.lines().collect();
        let excerpt = |n: usize| lines.get(n).and_then(|l| l.split_once(" | ")).map(|p| p.1);
        let (Some(source), Some(carets)) = (excerpt(2), excerpt(3)) else {
            return error.to_owned();
        };
        let start = carets.find('^').unwrap_or(0);
        let span: String = source
            .chars()
            .skip(start)
            .take(carets.trim_end().len() - start)
            .collect();
        format!("{}, at `{span}`: {}", lines[0], lines[4..].join("\n"))
    }

    #[test]
    fn labs_and_samples() {
        // Only a folder with a `lab.toml` is a lab (`lab-NN`) or a sample.
        let dir = crate::testutil::tree(&[
            ("labs/lab-02/lab.toml", ""),
            ("labs/lab-01/lab.toml", ""),
            ("labs/notes/lab.toml", ""),
            ("drivers/shared-misc/lab.toml", ""),
            ("drivers/chardev/lab.toml", ""),
            ("drivers/semaphore/Kbuild", ""),
            ("drivers/tools/Makefile", ""),
            ("kernel-crate/soundness/wait/lab.toml", ""),
            ("kernel-crate/soundness/README.md", ""),
        ]);
        let root = dir.path().to_path_buf();
        let names = |dirs: Vec<PathBuf>| {
            dirs.iter()
                .map(|d| d.strip_prefix(&root).unwrap().display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let found = format!(
            "labs: {}\nsamples: {}",
            names(all_labs(&root).unwrap()),
            names(all_samples(&root).unwrap())
        );
        dir.close().unwrap();
        expect![[r#"
            labs: labs/lab-01 labs/lab-02
            samples: drivers/chardev drivers/shared-misc kernel-crate/soundness/wait"#]]
        .assert_eq(&found);
        assert!(all_samples(&root).unwrap().is_empty());
    }

    #[test]
    fn full_lab() {
        check(
            r#"
title = "Your first module"
chapter = "first-module.md"
modules = ["hello"]
smp = 2
timeout = 30

[[step]]
name = "load"
run = "insmod /lab/hello.ko"

[[step]]
name = "unload"
run = "rmmod hello"
points = 2
depends = "load"
hint = "Does exit unregister?"
"#,
            expect![[r#"
                LabConfig {
                    title: "Your first module",
                    chapter: "first-module.md",
                    modules: [
                        "hello",
                    ],
                    programs: [],
                    image_modules: [],
                    student: [],
                    solution_dir: None,
                    allow: [],
                    expected_dir: None,
                    smp: Some(
                        2,
                    ),
                    timeout: Some(
                        30,
                    ),
                    memory: None,
                    build_timeout: None,
                    build_memory: None,
                    disks: [],
                    nvme: [],
                    random: {},
                    inputs: None,
                    extra: None,
                    kernel_series: None,
                    qemu_major: None,
                    steps: [
                        LabStep {
                            name: "load",
                            kind: Guest(
                                "insmod /lab/hello.ko",
                            ),
                            points: 1,
                            depends: None,
                            hint: None,
                            debug: None,
                            differential: false,
                            warns: None,
                            per_kernel: None,
                            per_qemu: None,
                            extra: false,
                        },
                        LabStep {
                            name: "unload",
                            kind: Guest(
                                "rmmod hello",
                            ),
                            points: 2,
                            depends: Some(
                                "load",
                            ),
                            hint: Some(
                                "Does exit unregister?",
                            ),
                            debug: None,
                            differential: false,
                            warns: None,
                            per_kernel: None,
                            per_qemu: None,
                            extra: false,
                        },
                    ],
                }"#]],
        );
    }

    #[test]
    fn host_steps() {
        let c = parse(
            r#"
title = "t"
chapter = "c.md"
modules = ["m"]

[[step]]
name = "tests"
host = "cargo test -p m-macro"
host_solution = "cargo test -p m-macro-solution"

[[step]]
name = "lint"
host = "cargo clippy -p m-macro"

[[step]]
name = "load"
run = "insmod /lab/m.ko"
"#,
        )
        .unwrap();
        // The other fields as `full_lab` shows them.
        let kinds: Vec<String> = (c.steps.iter())
            .map(|s| format!("{}: {:?}", s.name, s.kind))
            .collect();
        expect![[r#"
            tests: Host { command: "cargo test -p m-macro", solution: Some("cargo test -p m-macro-solution") }
            lint: Host { command: "cargo clippy -p m-macro", solution: None }
            load: Guest("insmod /lab/m.ko")"#]]
        .assert_eq(&kinds.join("\n"));
        let commands: Vec<_> = c
            .steps
            .iter()
            .map(|s| (s.host_command(false), s.host_command(true), s.command()))
            .collect();
        assert_eq!(
            commands,
            [
                (
                    Some("cargo test -p m-macro"),
                    Some("cargo test -p m-macro-solution"),
                    "cargo test -p m-macro"
                ),
                (
                    Some("cargo clippy -p m-macro"),
                    Some("cargo clippy -p m-macro"),
                    "cargo clippy -p m-macro"
                ),
                (None, None, "insmod /lab/m.ko"),
            ]
        );
        let lab = Lab {
            name: "lab".into(),
            dir: PathBuf::from("lab"),
            config: c,
        };
        assert_eq!(lab.first_guest_step(), 2);
        assert_eq!(
            lab.guest_steps(),
            [Step {
                name: "load".into(),
                run: "insmod /lab/m.ko".into()
            }]
        );
    }

    #[test]
    fn invalid_host_steps() {
        let guest = "[[step]]\nname='g'\nrun='true'\n";
        let check = |steps: &str, expect: Expect| {
            check_with(&format!("{HEAD}{steps}"), |_| "ok".to_owned(), expect);
        };
        check(
            &format!("[[step]]\nname='h'\nhost='true'\n{guest}"),
            expect!["ok"],
        );
        check(
            "[[step]]\nname='a'\nrun='true'\nhost='true'\n",
            expect![[
                r#"error: line 4, column 1, at `[[step]]`: step "a": give `run` (a guest command) or `host` (a host command), not both"#
            ]],
        );
        check(
            "[[step]]\nname='a'\n",
            expect![[
                r#"error: line 4, column 1, at `[[step]]`: step "a": give `run` (a guest command) or `host` (a host command)"#
            ]],
        );
        check(
            "[[step]]\nname='a'\nrun='true'\nhost_solution='true'\n",
            expect![[
                r#"error: line 4, column 1, at `[[step]]`: step "a": give `run` (a guest command) or `host` (a host command), not both"#
            ]],
        );
        check(
            "[[step]]\nname='a'\nhost_solution='true'\n",
            expect![[
                r#"error: line 4, column 1, at `[[step]]`: step "a": `host_solution` needs `host`"#
            ]],
        );
        check(
            &format!("{guest}[[step]]\nname='h'\nhost='true'\n"),
            expect!["error: step 2 (h): host steps must come before every guest step"],
        );
        check(
            "[[step]]\nname='h'\nhost='true'\n",
            expect!["error: a lab needs at least one guest step (`run`)"],
        );
        check(
            &format!("[[step]]\nname='h'\nhost='true'\nhost_solution=' '\n{guest}"),
            expect!["error: step 1 (h): `host_solution` is empty"],
        );
        check(
            &format!("[[step]]\nname='h'\nhost='a\\nb'\n{guest}"),
            expect!["ok"],
        );
    }

    #[test]
    fn optional_fields_default() {
        let c = parse(&format!("{HEAD}[[step]]\nname='a'\nrun='true'\n")).unwrap();
        assert_eq!((c.smp, c.timeout), (None, None));
        assert_eq!(c.steps[0].expected_file_name(0), "01-a.txt");
        assert_eq!(c.steps[0].expected_file_name(11), "12-a.txt");
    }

    #[test]
    fn points_depends_hints() {
        let check = |steps: &str, expect: Expect| {
            check_with(
                &format!("{HEAD}{steps}"),
                |c| {
                    c.steps
                        .iter()
                        .map(|s| {
                            format!(
                                "{} points={} depends={:?} hint={:?}\n",
                                s.name, s.points, s.depends, s.hint
                            )
                        })
                        .collect()
                },
                expect,
            );
        };
        check(
            "[[step]]\nname='load'\nrun='true'\npoints=3\nhint='Does init return Ok(...)?'\n\
             [[step]]\nname='read'\nrun='true'\ndepends='load'\npoints=0\n\
             [[step]]\nname='unload'\nrun='true'\n",
            expect![[r#"
                load points=3 depends=None hint=Some("Does init return Ok(...)?")
                read points=0 depends=Some("load") hint=None
                unload points=1 depends=None hint=None
            "#]],
        );
        check(
            "[[step]]\nname='read'\nrun='true'\ndepends='load'\n[[step]]\nname='load'\nrun='true'\n",
            expect![[r#"error: step 1 (read): `depends = "load"` must name an earlier step"#]],
        );
        check(
            "[[step]]\nname='a'\nrun='true'\ndepends='a'\n",
            expect![[r#"error: step 1 (a): `depends = "a"` must name an earlier step"#]],
        );
        check(
            "[[step]]\nname='a'\nrun='true'\nhint=' '\n",
            expect!["error: step 1 (a): `hint` is empty"],
        );
        check(
            "[[step]]\nname='a'\nrun='true'\n[[step]]\nname='a'\nrun='true'\n",
            expect!["error: step 2 (a): two steps have this name"],
        );
        check(
            "[[step]]\nname='a'\nrun='true'\npoints=-1\n",
            expect!["error: line 7, column 8, at `-1`: invalid value: integer `-1`, expected u32"],
        );
    }

    #[test]
    fn programs() {
        let check = |programs: &str, expect: Expect| {
            check_keys(programs, |c| format!("{:?}", c.programs), expect);
        };
        check("", expect!["[]"]);
        check(
            "programs=['devtest', 'load-all']",
            expect![[r#"["devtest", "load-all"]"#]],
        );
        check(
            "programs=['tools/devtest']",
            expect![[r#"error: program name "tools/devtest" must be [a-z0-9_-]+ (no path)"#]],
        );
        check(
            "programs=['']",
            expect![[r#"error: program name "" must be [a-z0-9_-]+ (no path)"#]],
        );
    }

    #[test]
    fn student_keys() {
        let check = |keys: &str, expect: Expect| {
            let show =
                |c: &LabConfig| format!("{:?} {:?} {:?}", c.student, c.solution_dir, c.allow);
            check_keys(keys, show, expect);
        };
        check("", expect!["[] None []"]);
        check(
            "student=['src/vec.rs', 'src/**/*.rs']\nsolution_dir='../../drivers/x'\nallow=['link-sections']",
            expect![[r#"["src/vec.rs", "src/**/*.rs"] Some("../../drivers/x") [LinkSections]"#]],
        );
        check(
            "student=['/etc/passwd']",
            expect![[
                r#"error: `student` pattern "/etc/passwd" must be relative to the lab folder, not absolute"#
            ]],
        );
        check(
            "student=['../lab-02/src/lib.rs']",
            expect![[
                r#"error: `student` pattern "../lab-02/src/lib.rs" must stay inside the lab folder: no `.` or `..`"#
            ]],
        );
        check(
            "student=['src/./lib.rs']",
            expect![[
                r#"error: `student` pattern "src/./lib.rs" must stay inside the lab folder: no `.` or `..`"#
            ]],
        );
        check(
            "student=['src//lib.rs']",
            expect![[r#"error: `student` pattern "src//lib.rs" has an empty path segment"#]],
        );
        check(
            "student=['src/[ab].rs']",
            expect![[
                r#"error: `student` pattern "src/[ab].rs" may use only the wildcards `*`, `?` and `**`"#
            ]],
        );
        check(
            "student=['src/**.rs']",
            expect![[
                r#"error: `student` pattern "src/**.rs" `**` must be a whole path segment (`src/**/*.rs`)"#
            ]],
        );
        check(
            "student=['']",
            expect![[r#"error: `student` pattern "" is empty"#]],
        );
        check(
            "solution_dir='solution'",
            expect![
                "error: `solution_dir` without `student`: there are no student files to find there"
            ],
        );
        check(
            "allow=['unsafe_code']",
            expect!["error: line 4, column 8, at `'unsafe_code'`: unknown variant `unsafe_code`, expected one of `unsafe`, `bindings`, `include`, `env`, `path-attribute`, `extern-crate`, `std`, `features`, `symbol-names`, `link-sections`, `asm`, `opaque-macros`, `sources`"],
        );
    }

    /// A lab folder on disk: its `student` patterns are checked against
    /// its files and the solution's when it loads.
    #[test]
    fn student_files_are_checked_when_the_lab_loads() {
        let d = tempfile::tempdir().unwrap();
        let lab = d.path().join("labs/lab-09");
        let files = [
            "src/lib.rs",
            "src/module.rs",
            "src/vec.rs",
            "src/notes.txt",
            "solution/src/vec.rs",
            "compile-fail/case.rs",
            "expected/01-a.txt",
            "src/vec.o",
        ];
        crate::testutil::write(&lab, &files.map(|f| (f, "")));
        let check = |student: &str, expect: Expect| {
            std::fs::write(
                lab.join("lab.toml"),
                format!("{HEAD}{student}\n[[step]]\nname='a'\nrun='true'\n"),
            )
            .unwrap();
            let actual = match Lab::load(&lab) {
                Ok(l) => format!(
                    "{:?} {:?}",
                    l.student_files().unwrap(),
                    l.solution_files().unwrap()
                ),
                Err(e) => format!("{e:#}").replace(&d.path().display().to_string(), "D"),
            };
            expect.assert_eq(&actual);
        };
        check(
            "student=['src/vec.rs']",
            expect![[r#"["src/vec.rs"] ["src/vec.rs"]"#]],
        );
        check(
            "student=['src/v*']",
            expect![[r#"["src/vec.rs"] ["src/vec.rs"]"#]],
        );
        check(
            "student=['src/vex.rs']",
            expect![[
                r#"invalid D/labs/lab-09/lab.toml: line 4: `student` pattern "src/vex.rs" matches no file of D/labs/lab-09"#
            ]],
        );
        check(
            "student=['src/*']",
            expect![[
                r#"invalid D/labs/lab-09/lab.toml: line 4: `student` pattern "src/*" matches src/notes.txt: student files must be Rust sources (.rs), which the checker reads before the build"#
            ]],
        );
        check(
            "student=['**/*.rs']",
            expect![[
                r#"invalid D/labs/lab-09/lab.toml: line 4: `student` pattern "**/*.rs" matches compile-fail/case.rs, which is the course's (snapshots, compile-fail cases and the solution never are the student's)"#
            ]],
        );
        check(
            "student=['src/lib.rs']",
            expect![[
                r#"invalid D/labs/lab-09/lab.toml: line 4: `student` pattern "src/lib.rs" matches no file of the solution's folder D/labs/lab-09/solution"#
            ]],
        );
        check(
            "student=['src/vec.rs']\nsolution_dir='elsewhere'",
            expect![[
                r#"invalid D/labs/lab-09/lab.toml: line 5: `solution_dir`: D/labs/lab-09/elsewhere is not a folder"#
            ]],
        );
    }

    #[test]
    fn unknown_key() {
        // The whole excerpt, as `checker` prints it (the other tests fold it).
        let e = parse(&format!("{HEAD}cpus=1\n[[step]]\nname='a'\nrun='true'\n")).unwrap_err();
        expect![[r#"
            error: TOML parse error at line 4, column 1
              |
            4 | cpus=1
              | ^^^^
            unknown field `cpus`, expected one of `title`, `chapter`, `modules`, `programs`, `image_modules`, `student`, `solution_dir`, `allow`, `smp`, `timeout`, `memory`, `build_timeout`, `build_memory`, `disk`, `nvme`, `random`, `step`
        "#]]
        .assert_eq(&format!("error: {e:#}"));
    }

    #[test]
    fn check_disk_steps() {
        let disks = "[[disk]]\nid='nvm'\nsize=1\nimage='pattern'\n\
                     [[disk]]\nid='z'\nsize=1\n";
        let lab = parse(&format!(
            "{HEAD}{disks}[[step]]\nname='a'\nrun='true'\n[[step]]\nname='b'\ncheck_disk='nvm'\n\
             [[step]]\nname='d'\nrun='true'\nkernel='debug'\n"
        ))
        .unwrap();
        assert_eq!(lab.steps[1].kind, StepKind::CheckDisk("nvm".into()));
        assert_eq!(lab.steps[1].check_disk(), Some("nvm"));
        assert!(lab.steps[1].guest().is_none() && lab.steps[1].host_command(false).is_none());
        check(
            &format!(
                "{HEAD}{disks}[[step]]\nname='b'\ncheck_disk='nvm'\n[[step]]\nname='a'\nrun='true'\n"
            ),
            expect!["error: step 1 (b): a `check_disk` step comes after the guest steps"],
        );
        check(
            &format!("{HEAD}{disks}[[step]]\nname='a'\nrun='true'\n[[step]]\nname='b'\ncheck_disk='nvm'\n[[step]]\nname='c'\nrun='true'\n"),
            expect!["error: step 3 (c): `check_disk` steps run after the guest powered off: they come after every guest step (but those for the debug kernel)"],
        );
        check(
            &format!(
                "{HEAD}{disks}[[step]]\nname='a'\nrun='true'\n[[step]]\nname='b'\ncheck_disk='z'\n"
            ),
            expect![[
                r#"error: step 2 (b): `check_disk = "z"` must name a [[disk]] with `image = "pattern"`"#
            ]],
        );
        check(
            &format!("{HEAD}{disks}[[step]]\nname='a'\nrun='true'\n[[step]]\nname='b'\ncheck_disk='nvm'\nrun='true'\n"),
            expect![[r#"error: line 11, column 1, at `[[step]]`: step "b": `check_disk` is a step of its own: no `run`, `host`, `compile_fail`, `kernel`, `failslab` or `differential` with it"#]],
        );
    }

    #[test]
    fn unknown_step_key() {
        check(
            &format!("{HEAD}[[step]]\nname='a'\nrun='true'\nexpect='x'\n"),
            expect!["error: line 7, column 1, at `expect`: unknown field `expect`, expected one of `name`, `run`, `host`, `host_solution`, `compile_fail`, `check_disk`, `points`, `depends`, `hint`, `kernel`, `failslab`, `differential`, `warns`, `per_kernel`, `per_qemu`"],
        );
    }

    #[test]
    fn missing_field() {
        check(
            "title='t'\nmodules=['m']\n[[step]]\nname='a'\nrun='true'\n",
            expect!["error: line 1, column 1, at `title='t'`: missing field `chapter`"],
        );
        check(
            HEAD,
            expect!["error: line 1, column 1, at `title='t'`: missing field `step`"],
        );
    }

    const DIFF_LAB: &str = "title='t'\nchapter='c.md'\nmodules=['m', 'twin']\n\
        [random]\nn = { int = [1, 9] }\nb = { hex = 2 }\n\
        [[step]]\nname='load'\nrun='insmod /lab/m.ko; echo ${HOME} { true; }'\n\
        [[step]]\nname='random'\nrun='insmod {ko} n={n} b={b} && rmmod m'\ndifferential=true\n\
        [[step]]\nname='unload'\nrun='rmmod m'\n";

    #[test]
    fn differential_steps_run_twice() {
        let dir = tempfile::tempdir().unwrap();
        let lab = Lab {
            name: "lab-00".into(),
            dir: dir.path().to_path_buf(),
            config: parse(DIFF_LAB).unwrap(),
        };
        assert!(lab.has_differential());
        let lab = lab.with_inputs(5);
        let steps: Vec<String> = lab
            .guest_steps()
            .iter()
            .map(|s| format!("{}: {}", s.name, s.run))
            .collect();
        expect![[r#"
            load: insmod /lab/m.ko; echo ${HOME} { true; }
            random: { rmmod m twin; dmesg -c; } >/dev/null 2>&1; insmod /lab/m.ko n=9 b=5af8 && rmmod m
            unload: rmmod m
            random-ref: { rmmod m twin; dmesg -c; } >/dev/null 2>&1; insmod /lab/ref/m.ko n=9 b=5af8 && rmmod m"#]]
        .assert_eq(&steps.join("\n"));
        expect!["insmod {ko} n=9 b=5af8 && rmmod m"].assert_eq(&lab.shown_command(1));
        assert_eq!(
            lab.shown_command(0),
            "insmod /lab/m.ko; echo ${HOME} { true; }"
        );
    }

    #[test]
    fn differential_steps_may_follow_debug_steps() {
        // They have no snapshot whose number the kernel could move.
        let text = "title='t'\nchapter='c.md'\nmodules=['m']\n\
            [[step]]\nname='a'\nrun='true'\nkernel='debug'\n\
            [[step]]\nname='b'\nrun='insmod {ko}'\ndifferential=true\n";
        let c = parse(text).unwrap();
        assert!(c.steps[1].differential);
        let plain = text.replace("run='insmod {ko}'\ndifferential=true", "run='true'");
        let err = format!("{:#}", parse(&plain).unwrap_err());
        assert!(err.contains("must come after every other step"), "{err}");
    }

    #[test]
    fn invalid_differential_steps() {
        let lab = |random: &str, step: &str| {
            format!("title='t'\nchapter='c.md'\nmodules=['m']\n[random]\n{random}\n[[step]]\nname='a'\n{step}\n")
        };
        check(
            &lab("n = { int = [1, 2] }", "run='insmod /lab/m.ko n={n}'"),
            expect!["error: step 1 (a): `{n}` is for differential steps (`differential = true`): the snapshot of any other step is fixed"],
        );
        check(
            &lab(
                "n = { int = [1, 2] }",
                "run='insmod {ko} n={m}'\ndifferential=true",
            ),
            expect!["error: step 1 (a): `{m}` is neither `{ko}` nor a value of [random]"],
        );
        check(
            &lab("n = { int = [1, 2] }", "run='insmod /lab/m.ko n={n}'\ndifferential=true"),
            expect!["error: step 1 (a): a differential step loads its module as `{ko}`: the student's, then the reference solution's"],
        );
        check(
            &lab("n = { int = [3, 2] }", "run='true'"),
            expect!["error: [random] n: int = [3, 2]: empty range"],
        );
        check(
            &lab("ko = { hex = 2 }", "run='true'"),
            expect![[r#"error: [random] "ko": a name is [a-z][a-z0-9_]*, and not `ko`"#]],
        );
        check(
            &lab("n = { float = 2 }", "run='true'"),
            expect!["error: line 5, column 7, at `float`: unknown variant `float`, expected one of `int`, `hex`, `alpha`"],
        );
        check(
            &lab("", "host='true'\ndifferential=true"),
            expect![[
                r#"error: line 6, column 1, at `[[step]]`: step "a": `differential` is for guest (`run`) steps on every kernel"#
            ]],
        );
    }

    /// A lab of three steps, the second per kernel, in `dir/lab-00`
    /// with the snapshot files `files` (names in `expected/`).
    /// A lab `lab-00` in `dir` whose `lab.toml` has `steps`, with a
    /// snapshot file of each of `files` in its `expected/`.
    fn lab_with_snapshots(dir: &Path, steps: &str, files: &[&str]) -> Result<Lab> {
        let lab_dir = dir.join("lab-00");
        std::fs::create_dir_all(lab_dir.join("expected")).unwrap();
        std::fs::write(
            lab_dir.join("lab.toml"),
            format!("title='t'\nchapter='c.md'\nmodules=['m']\n{steps}"),
        )
        .unwrap();
        for f in files {
            std::fs::write(lab_dir.join("expected").join(f), "x\n").unwrap();
        }
        Lab::load(&lab_dir)
    }

    fn per_kernel_lab(dir: &Path, files: &[&str]) -> Result<Lab> {
        lab_with_snapshots(
            dir,
            "[[step]]\nname='load'\nrun='insmod /lab/m.ko'\n\
             [[step]]\nname='limits'\nrun='cat /sys/block/x/queue/optimal_io_size'\n\
             per_kernel='6.12 sets no io_opt when NOWS is 0'\n\
             [[step]]\nname='unload'\nrun='rmmod m'\n",
            files,
        )
    }

    #[test]
    fn per_kernel_snapshots_are_looked_up_by_series() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            "01-load.txt",
            "02-limits.6.1.txt",
            "02-limits.6.12.txt",
            "03-unload.txt",
        ];
        let mut lab = per_kernel_lab(dir.path(), &files).unwrap();
        let expected = lab.dir.join("expected");
        assert_eq!(
            lab.config.steps[1].per_kernel.as_deref(),
            Some("6.12 sets no io_opt when NOWS is 0")
        );
        // No series known: the default guest's.
        assert_eq!(lab.series(), "6.1");
        assert_eq!(lab.expected_path(1), expected.join("02-limits.6.1.txt"));
        lab.config.kernel_series = crate::tools::guest::series_of("6.12.95+deb12-amd64");
        assert_eq!(lab.expected_path(1), expected.join("02-limits.6.12.txt"));
        // The other steps have one snapshot for every kernel.
        assert_eq!(lab.expected_path(0), expected.join("01-load.txt"));
        assert_eq!(lab.expected_path(2), expected.join("03-unload.txt"));
        // A series with no snapshot yet: the file UPDATE_EXPECT writes.
        lab.config.kernel_series = Some("6.18".into());
        assert_eq!(lab.expected_path(1), expected.join("02-limits.6.18.txt"));
        // `checker grade`'s snapshot folder is read the same way.
        lab.config.expected_dir = Some(dir.path().join("elsewhere"));
        assert_eq!(
            lab.expected_path(1),
            dir.path().join("elsewhere/02-limits.6.18.txt")
        );
    }

    fn per_qemu_lab(dir: &Path, files: &[&str]) -> Result<Lab> {
        lab_with_snapshots(
            dir,
            "[[step]]\nname='limits'\nrun='cat /sys/block/x/queue/max_discard_segments'\n\
             per_kernel='6.12 reads DMRL'\nper_qemu='QEMU 10 reports DMRL 255'\n\
             [[step]]\nname='identify'\nrun='nvmetest ioctl'\nper_qemu='QEMU 10 sets more ONCS bits'\n\
             [[step]]\nname='unload'\nrun='rmmod m'\n",
            files,
        )
    }

    #[test]
    fn per_qemu_snapshots_are_looked_up_by_qemu_major() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            "01-limits.6.1.qemu7.txt",
            "01-limits.6.12.qemu10.txt",
            "02-identify.qemu7.txt",
            "02-identify.qemu10.txt",
            "03-unload.txt",
        ];
        let mut lab = per_qemu_lab(dir.path(), &files).unwrap();
        let expected = lab.dir.join("expected");
        assert!(lab.has_per_qemu_steps());
        lab.config.qemu_major = Some(7);
        assert_eq!(
            lab.expected_path(0),
            expected.join("01-limits.6.1.qemu7.txt")
        );
        assert_eq!(lab.expected_path(1), expected.join("02-identify.qemu7.txt"));
        assert_eq!(lab.expected_path(2), expected.join("03-unload.txt"));
        lab.config.qemu_major = Some(10);
        lab.config.kernel_series = Some("6.12".into());
        assert_eq!(
            lab.expected_path(0),
            expected.join("01-limits.6.12.qemu10.txt")
        );
        assert_eq!(
            lab.expected_path(1),
            expected.join("02-identify.qemu10.txt")
        );
        // A QEMU with no snapshot yet: the file UPDATE_EXPECT writes.
        lab.config.qemu_major = Some(9);
        assert_eq!(lab.expected_path(1), expected.join("02-identify.qemu9.txt"));
    }

    #[test]
    fn per_qemu_snapshots_need_the_reason_in_lab_toml() {
        let err = |files: &[&str]| {
            let dir = tempfile::tempdir().unwrap();
            format!("{:#}", per_qemu_lab(dir.path(), files).unwrap_err())
        };
        expect![[r#"invalid /LAB/lab.toml: expected/03-unload.qemu10.txt is a snapshot for QEMU 10, but step 03-unload has no `per_qemu = "why"`: a step's output is the same on every QEMU unless the emulated device really reports something else, which `per_qemu` says, and why"#]]
        .assert_eq(&strip_dir(&err(&["03-unload.qemu10.txt"])));
        expect![[r#"invalid /LAB/lab.toml: expected/02-identify.txt: step 02-identify is `per_qemu`: its snapshots end in .qemu<major>.txt, one per QEMU major version (QEMU 7.2: .qemu7.txt), and no run reads 02-identify.txt: rename or remove it"#]]
        .assert_eq(&strip_dir(&err(&["02-identify.txt"])));
        // Both parts: the series first, then QEMU's.
        expect![[r#"invalid /LAB/lab.toml: expected/01-limits.qemu7.txt: step 01-limits is `per_kernel`: its snapshots are 01-limits.<series>.txt, one per kernel series (01-limits.6.1.txt, 01-limits.6.12.txt), and no run reads 01-limits.qemu7.txt: rename or remove it"#]]
        .assert_eq(&strip_dir(&err(&["01-limits.qemu7.txt"])));
        expect![[r#"invalid /LAB/lab.toml: expected/01-limits.6.1.txt: step 01-limits is `per_qemu`: its snapshots end in .qemu<major>.txt, one per QEMU major version (QEMU 7.2: .qemu7.txt), and no run reads 01-limits.6.1.txt: rename or remove it"#]]
        .assert_eq(&strip_dir(&err(&["01-limits.6.1.txt"])));
    }

    #[test]
    fn per_kernel_snapshots_need_the_reason_in_lab_toml() {
        let err = |files: &[&str]| {
            let dir = tempfile::tempdir().unwrap();
            format!("{:#}", per_kernel_lab(dir.path(), files).unwrap_err())
        };
        // A per-kernel file of a step that does not say why.
        expect![[r#"invalid /LAB/lab.toml: expected/03-unload.6.12.txt is a snapshot for kernel 6.12, but step 03-unload has no `per_kernel = "why"`: a step's output is the same on every kernel (one 03-unload.txt; normalise what is noise) unless the kernel really behaves differently, which `per_kernel` says, and why"#]]
        .assert_eq(&strip_dir(&err(&["03-unload.txt", "03-unload.6.12.txt"])));
        // A plain file of a per-kernel step, which nothing reads.
        expect!["invalid /LAB/lab.toml: expected/02-limits.txt: step 02-limits is `per_kernel`: its snapshots are 02-limits.<series>.txt, one per kernel series (02-limits.6.1.txt, 02-limits.6.12.txt), and no run reads 02-limits.txt: rename or remove it"]
        .assert_eq(&strip_dir(&err(&["02-limits.txt"])));
        expect![[r#"invalid /LAB/lab.toml: expected/02-limits.debug.txt: "debug" is not a kernel series (major.minor, e.g. 6.12)"#]]
        .assert_eq(&strip_dir(&err(&["02-limits.debug.txt"])));
        // Files of no step, and other files, are not this check's.
        let dir = tempfile::tempdir().unwrap();
        per_kernel_lab(
            dir.path(),
            &["04-gone.6.12.txt", "README", "02-limits.6.1.txt"],
        )
        .unwrap();
        // The reason is required, and a differential step has no file.
        let lab = |step: &str| format!("{HEAD}[[step]]\nname='a'\n{step}\n");
        check(
            &lab("run='true'\nper_kernel=' '"),
            expect![[
                r#"error: line 4, column 1, at `[[step]]`: step "a": `per_kernel` needs its reason: say what the kernel does differently, e.g. `per_kernel = "6.12's C driver ..."`"#
            ]],
        );
        check(
            &format!("{HEAD}[random]\nn = {{ int = [1, 2] }}\n[[step]]\nname='a'\nrun='insmod {{ko}} n={{n}}'\ndifferential=true\nper_kernel='x'\n"),
            expect![[r#"error: line 6, column 1, at `[[step]]`: step "a": `per_kernel` is for steps with snapshot files; a `differential` step has none (the reference solution's run, on the same kernel, is its expected output)"#]],
        );
    }

    /// `err` with the temporary lab folder's path as `/LAB`.
    fn strip_dir(err: &str) -> String {
        let start = err.find('/').unwrap();
        let end = err.find("/lab.toml").unwrap();
        format!("{}/LAB{}", &err[..start], &err[end..])
    }

    #[test]
    fn extra_steps_from_a_course_folder() {
        let dir = tempfile::tempdir().unwrap();
        let lab_dir = dir.path().join("lab-00");
        std::fs::create_dir(&lab_dir).unwrap();
        std::fs::write(lab_dir.join("lab.toml"), DIFF_LAB).unwrap();
        let mut lab = Lab::load(&lab_dir).unwrap();
        let extra = dir.path().join("course");
        // No folder for the lab: nothing to add.
        assert_eq!(lab.add_extra(&extra).unwrap(), 0);
        std::fs::create_dir_all(extra.join("lab-00/expected")).unwrap();
        std::fs::write(
            extra.join("lab-00/lab.toml"),
            "[[step]]\nname='hidden'\nrun='insmod /lab/m.ko && rmmod m'\ndepends='load'\n",
        )
        .unwrap();
        assert_eq!(lab.add_extra(&extra).unwrap(), 1);
        assert_eq!(lab.config.steps.len(), 4);
        assert_eq!(
            lab.expected_path(3),
            extra.join("lab-00/expected/01-hidden.txt")
        );
        assert_eq!(lab.expected_path(2), lab_dir.join("expected/03-unload.txt"));
        // The extra steps are checked as the lab's are: names, `depends`.
        std::fs::write(
            extra.join("lab-00/lab.toml"),
            "[[step]]\nname='unload'\nrun='true'\n",
        )
        .unwrap();
        let mut again = Lab::load(&lab_dir).unwrap();
        let err = format!("{:#}", again.add_extra(&extra).unwrap_err());
        assert!(
            err.contains("its steps are numbered after the lab's 3"),
            "{err}"
        );
        assert!(
            err.contains("step 4 (unload): two steps have this name"),
            "{err}"
        );
        std::fs::write(extra.join("lab-00/lab.toml"), "title='x'\n").unwrap();
        let err = format!("{:#}", again.add_extra(&extra).unwrap_err());
        assert!(err.contains("unknown field `title`"), "{err}");
        // Their snapshots follow the rule of `per_kernel` too.
        std::fs::write(
            extra.join("lab-00/lab.toml"),
            "[[step]]\nname='hidden'\nrun='true'\n",
        )
        .unwrap();
        std::fs::write(extra.join("lab-00/expected/01-hidden.6.12.txt"), "").unwrap();
        let err = format!("{:#}", again.add_extra(&extra).unwrap_err());
        assert!(
            err.contains("expected/01-hidden.6.12.txt is a snapshot for kernel 6.12, but step 01-hidden has no `per_kernel"),
            "{err}"
        );
        std::fs::write(
            extra.join("lab-00/lab.toml"),
            "[[step]]\nname='hidden'\nrun='true'\nper_kernel='why'\n",
        )
        .unwrap();
        assert_eq!(again.add_extra(&extra).unwrap(), 1);
        again.config.kernel_series = Some("6.12".into());
        assert_eq!(
            again.expected_path(3),
            extra.join("lab-00/expected/01-hidden.6.12.txt")
        );
    }

    #[test]
    fn invalid_values() {
        check(
            "title='t'\nchapter='c.md'\nmodules=['m.ko']\n[[step]]\nname='a'\nrun='true'\n",
            expect![[r#"error: module name "m.ko" must be [a-z0-9_-]+ (no path, no .ko)"#]],
        );
        check(
            &format!("{HEAD}[[step]]\nname='Load it'\nrun='true'\n"),
            expect![[r#"error: step 1: name "Load it" must be [a-z0-9_-]+"#]],
        );
        check_keys("smp=2", |c| format!("{:?}", c.smp), expect!["Some(2)"]);
        check_keys(
            "smp=0",
            |c| format!("{:?}", c.smp),
            expect![["error: `smp` must be at least 1"]],
        );
        check(
            &format!("{HEAD}[[step]]\nname='a'\nrun=''\n"),
            expect![["error: step 1 (a): `run` is empty"]],
        );
    }

    #[test]
    fn compile_fail_steps() {
        let lab = parse(
            "title='t'\nchapter='c.md'\nmodules=['m']\n\
             [[step]]\nname='not-send'\ncompile_fail='compile-fail/guard_send.rs'\n\
             [[step]]\nname='load'\nrun='insmod /lab/m.ko'\n",
        )
        .unwrap();
        let step = &lab.steps[0];
        let summary = format!(
            "{:?} {:?} {:?} {:?}",
            step.kind,
            step.compile_fail(),
            step.host_command(false),
            step.guest()
        );
        expect![[r#"CompileFail("compile-fail/guard_send.rs") Some("compile-fail/guard_send.rs") None None"#]].assert_eq(&summary);
        check(
            &format!("{HEAD}[[step]]\nname='a'\nrun='true'\ncompile_fail='x.rs'\n"),
            expect![[
                r#"error: line 4, column 1, at `[[step]]`: step "a": `compile_fail` is a step of its own: no `run` or `host` with it"#
            ]],
        );
        check(
            &format!("{HEAD}[[step]]\nname='a'\ncompile_fail=''\n[[step]]\nname='b'\nrun='true'\n"),
            expect![["error: step 1 (a): `compile_fail` is empty"]],
        );
        check(
            &format!(
                "{HEAD}[[step]]\nname='b'\nrun='true'\n[[step]]\nname='a'\ncompile_fail='x.rs'\n"
            ),
            expect![["error: step 2 (a): host steps must come before every guest step"]],
        );
    }
}

/// The steps of the debug kernel (`kernel`, `failslab`), read from
/// `lab.toml` (they were tested in `tools/debugkernel.rs`).
#[cfg(test)]
mod debug_kernel_steps {
    use expect_test::expect;

    #[test]
    fn lab_toml_keys() {
        use crate::spec::lab::{failslab_target, parse};
        assert_eq!(
            failslab_target("insmod /lab/m.ko count=3 name=x"),
            Ok(crate::spec::lab::FailslabTarget {
                module: "m".into(),
                path: "/lab/m.ko".into(),
                params: "count=3 name=x".into(),
            })
        );
        for bad in [
            "rmmod m",
            "insmod",
            "insmod m.ko",
            "insmod /lab/.ko",
            "insmod /lab/a;b.ko",
        ] {
            assert!(failslab_target(bad).is_err(), "{bad}");
        }
        let head = "title='t'\nchapter='c.md'\nmodules=['m']\n[[step]]\nname='load'\nrun='insmod /lab/m.ko'\n";
        let check = |steps: &str, expect: expect_test::Expect| {
            let actual = match parse(&format!("{head}{steps}")) {
                Ok(c) => {
                    let lab = crate::spec::lab::Lab {
                        name: "t".into(),
                        dir: "/nonexistent".into(),
                        config: c,
                    };
                    let names = |l: &crate::spec::lab::Lab| {
                        l.config
                            .steps
                            .iter()
                            .map(|s| s.name.clone())
                            .collect::<Vec<_>>()
                            .join(" ")
                    };
                    format!(
                        "debian: {}; debug: {}; last guest command: {}",
                        names(&lab.for_kernel(false)),
                        names(&lab.for_kernel(true)),
                        lab.guest_steps()
                            .last()
                            .map(|s| s.run.clone())
                            .unwrap_or_default()
                    )
                }
                Err(e) => format!("error: {e:#}")
                    .lines()
                    .last()
                    .unwrap_or("")
                    .to_owned(),
            };
            expect.assert_eq(&actual);
        };
        check(
            "[[step]]\nname='f'\nrun='insmod /lab/m.ko'\nfailslab={first=8}\n[[step]]\nname='k'\nrun='true'\nkernel='debug'\n",
            expect!["debian: load; debug: load f k; last guest command: true"],
        );
        check(
            "[[step]]\nname='k'\nrun='true'\nkernel='debug'\n[[step]]\nname='after'\nrun='true'\n",
            expect!["error: step 3 (after): steps for the debug kernel (`kernel`, `failslab`) must come after every other step"],
        );
        check(
            "[[step]]\nname='k'\nrun='true'\nkernel='debian'\n",
            expect![[r#"step "k": `kernel = "debian"`: the only choice is "debug""#]],
        );
        check(
            "[[step]]\nname='f'\nrun='true'\nfailslab={}\n",
            expect![[
                r#"step "f": failslab: `run` must be `insmod /lab/NAME.ko [PARAMS]`, not "true""#
            ]],
        );
        check(
            "[[step]]\nname='f'\nrun='insmod /lab/m.ko'\nfailslab={every=0}\n",
            expect![[r#"step "f": failslab `every` must be 1 or more"#]],
        );
        check(
            "[[step]]\nname='f'\nrun='insmod /lab/m.ko'\nfailslab={nth='1-3'}\n",
            expect!["unknown field `nth`, expected `first` or `every`"],
        );
    }

    #[test]
    fn failslab_command() {
        let c = crate::spec::lab::parse(
            "title='t'\nchapter='c.md'\nmodules=['m']\n[[step]]\nname='f'\nrun='insmod /lab/m.ko n=1'\nfailslab={every=25}\n",
        )
        .unwrap();
        let lab = crate::spec::lab::Lab {
            name: "t".into(),
            dir: "/nonexistent".into(),
            config: c,
        };
        assert!(lab.has_failslab());
        let run = lab.config.steps[0].guest().unwrap().run;
        expect!["sh /lab/failslab.sh 64 25 m '/lab/m.ko' 'n=1'"].assert_eq(&run);
        assert_eq!(lab.config.steps[0].command(), "insmod /lab/m.ko n=1");
    }
}
