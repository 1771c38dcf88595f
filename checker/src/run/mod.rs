//! `checker lab` and `checker verify`: the runner. A [`LabRequest`] in;
//! the lab's plan ([`crate::plan`]) run as host steps, the build and one
//! guest boot; the transcript graded ([`crate::grade`]); a [`RunResult`]
//! out. Everything the runner has to say goes out as [`Event`]s to a
//! [`Reporter`].

pub mod buildcheck;
pub mod cfcache;
pub mod compilefail;
pub mod decode;
pub mod events;
pub mod gate;
pub mod refcache;
pub mod result;

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ::vm::accel::{self, Accel, AccelChoice};
use ::vm::{self, console, Ending, Interrupted, Progress};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::grade::{self, Crash, HostRun, StepGrade};
use crate::plan::{Plan, Slot};
use crate::run::events::{Event, Reporter};
pub use crate::run::result::{BuildOutcome, RunResult};
use crate::spec::devices;
use crate::spec::lab::{self, Lab};
use crate::tools::debugkernel::KernelChoice;
use crate::tools::sandbox::{self, Sandbox};
use crate::tools::setup::{self, Toolchain};

/// Guest memory, MiB.
pub const GUEST_MEMORY_MB: u32 = 512;
/// Lines of the build log shown when the build fails.
pub const BUILD_LOG_TAIL: usize = 40;
/// Console lines shown on a time-out.
pub const CONSOLE_TAIL: usize = 20;

/// Options of one lab run.
#[derive(Debug, Clone)]
pub struct LabOptions {
    /// Build the reference solution (`SOLUTION=1`).
    pub solution: bool,
    /// Time limit override, seconds.
    pub timeout: Option<u64>,
    /// Accelerator choice.
    pub accel: AccelChoice,
    /// Keep the guest's temporary folder.
    pub keep: bool,
    /// The seed of the `[random]` inputs (`--seed`; default: from the OS).
    pub seed: Option<u64>,
    /// The reference solution's modules, built already (`checker grade`
    /// builds them once for every student): no reference build then.
    pub reference: Option<PathBuf>,
    /// Restore the guest from a saved, booted one instead of booting it
    /// (`vm::snapshot`): `checker lab` and `watch` unless `--cold` or
    /// `CHECKER_COLD_BOOT=1`; never the debug kernel.
    pub saved_guest: bool,
    /// Use the build caches of `checker lab` and `watch`, never of
    /// grading: compile-fail builds whose inputs are unchanged replayed
    /// ([`cfcache`]), the reference solution's modules reused while its
    /// inputs are unchanged ([`refcache`]), Kbuild's compiler probes
    /// answered from earlier builds (`kernel-crate/kbuild/probes.mk`).
    pub build_caches: bool,
}

/// The flags of every command that boots guests: `--timeout`, `--accel`
/// and `--guest`.
#[derive(Debug, Clone, Copy, Default, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct GuestArgs {
    /// Guest kernel series, 6.1 or 6.12 (default: the host's Debian
    /// kernel, 6.1 on Debian 12); another than the host's comes from
    /// Debian's archive into the cache. Modules are built for it.
    #[arg(long = "guest", value_enum, value_name = "SERIES")]
    #[serde(with = "value_enum", default, skip_serializing_if = "Option::is_none")]
    pub linux: Option<crate::tools::guest::Linux>,
    /// Time limit of each guest run in seconds (default: lab.toml, else 60).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// Accelerator (default: CHECKER_ACCEL, else auto).
    #[arg(long, value_enum)]
    #[serde(with = "value_enum")]
    pub accel: Option<AccelChoice>,
}

impl GuestArgs {
    /// The options of one lab run with these flags.
    pub fn lab_options(self, solution: bool, keep: bool) -> Result<LabOptions> {
        Ok(LabOptions {
            solution,
            timeout: self.timeout,
            accel: accel_choice(self.accel)?,
            keep,
            seed: None,
            reference: None,
            saved_guest: false,
            build_caches: false,
        })
    }
}

/// A clap value (`--accel`, `--kernel`) in a [`LabRequest`], by the name
/// its flag takes.
mod value_enum {
    use clap::ValueEnum;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<T: ValueEnum, S: Serializer>(
        v: &Option<T>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        v.as_ref()
            .and_then(|v| v.to_possible_value())
            .map(|p| p.get_name().to_owned())
            .serialize(s)
    }

    pub(super) fn deserialize<'de, T: ValueEnum, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|name| T::from_str(&name, false).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// What to run: the flags of `checker lab`, and what the parent of a
/// child run (`checker run`, `grade`, `fixtures`) hands it as JSON.
#[derive(Debug, Clone, Default, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct LabRequest {
    /// Lab name, e.g. lab-01; a sample's (chardev); or the path of a
    /// folder with a lab.toml (a driver of your own, `new-driver`).
    pub name: String,
    /// Build the reference solution (SOLUTION=1) instead of the student's code.
    #[arg(long)]
    pub solution: bool,
    #[command(flatten)]
    pub guest: GuestArgs,
    /// Keep the guest's temporary folder (initramfs, console and result logs).
    #[arg(long)]
    pub keep: bool,
    /// Use this lab folder instead of labs/NAME (for testing the checker).
    #[arg(long, hide = true, value_name = "PATH")]
    pub lab_dir: Option<PathBuf>,
    /// Run only up to step K (1-based) and stop there.
    #[arg(long, value_name = "K")]
    pub step: Option<usize>,
    /// Use this workspace root instead of the current one (for `checker grade`).
    #[arg(long, hide = true, value_name = "PATH")]
    pub root: Option<PathBuf>,
    /// Read the snapshots from this folder instead of the lab's
    /// `expected/` (for `checker grade`, which keeps them out of the
    /// student's workspace).
    #[arg(long, hide = true, value_name = "PATH")]
    pub expected_dir: Option<PathBuf>,
    /// Guest kernel: Debian's (the default), or the debug kernel (KASAN,
    /// lockdep, kmemleak, failslab; see `make vm-debug`).
    #[arg(long, value_enum)]
    #[serde(with = "value_enum")]
    pub kernel: Option<KernelChoice>,
    /// Draw the differential steps' inputs from this seed (the report
    /// names the seed of every run; default: a new one).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Add the instructor's extra steps of COURSE_DIR/LAB/lab.toml,
    /// with their snapshots in COURSE_DIR/LAB/expected/.
    #[arg(long, value_name = "COURSE_DIR")]
    pub extra: Option<PathBuf>,
    /// The reference solution's modules, built already (for `checker
    /// grade`, which builds them once for all students).
    #[arg(long, hide = true, value_name = "PATH")]
    pub reference: Option<PathBuf>,
    /// Wall-clock limit of the build and of each host step, seconds
    /// (default: the lab's `build_timeout`, else 600).
    #[arg(long, value_name = "SECS")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_timeout: Option<u64>,
    /// Boot the guest instead of restoring the saved, booted guest that
    /// `checker lab` starts from (also CHECKER_COLD_BOOT=1, make COLD=1).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cold: bool,
    /// Whether this run may restore a saved guest: `checker lab` and
    /// `watch` set it; a child run of `run`, `grade` or `fixtures` boots.
    #[arg(skip)]
    #[serde(skip)]
    pub saved_guest: bool,
}

/// `CHECKER_COLD_BOOT` is set to something other than `0` or empty: boot
/// every guest.
fn cold_boot_env() -> bool {
    std::env::var(vm::snapshot::COLD_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The accelerator choice from `--accel`, else `CHECKER_ACCEL`, else auto.
fn accel_choice(flag: Option<AccelChoice>) -> Result<AccelChoice> {
    match flag {
        Some(c) => Ok(c),
        None => match std::env::var("CHECKER_ACCEL") {
            Ok(v) => Ok(AccelChoice::parse(&v)?),
            Err(_) => Ok(AccelChoice::Auto),
        },
    }
}

/// Where build logs go: `<root>/target/checker/<lab>-<variant>/`.
fn work_dir(root: Option<&Path>, lab: &Lab, solution: bool) -> PathBuf {
    let variant = if solution { "solution" } else { "student" };
    let base = match root {
        Some(r) => r.join("target").join("checker"),
        None => std::env::temp_dir().join("checker"),
    };
    base.join(format!("{}-{variant}", lab.name))
}

/// Builds the lab's modules with Kbuild in the [`Sandbox`] of its
/// workspace; the log goes to `log`. With `probes_cached` (`checker lab`,
/// `watch`), Kbuild's compiler probes are answered from earlier builds
/// ([`crate::tools::exec::cache_probes`]).
pub fn build(
    lab: &Lab,
    tc: &Toolchain,
    solution: bool,
    probes_cached: bool,
    log: &Path,
) -> Result<BuildOutcome> {
    if let Some(dir) = log.parent() {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    // A stale module from an earlier (other-variant) build must not be graded.
    for m in &lab.config.modules {
        let _ = fs::remove_file(lab.dir.join(format!("{m}.ko")));
    }
    let root = crate::tools::workspace::enclosing(&lab.dir);
    sandbox::fetch(&root);
    let mut cmd = crate::tools::exec::make(&lab.dir, tc, solution);
    if probes_cached {
        crate::tools::exec::cache_probes(&mut cmd, &root, tc);
    }
    let done = Sandbox::for_lab(&root, &lab.dir, lab.build_limits(), tc).run(&cmd, log)?;
    if vm::interrupted() {
        return Err(Interrupted.into());
    }
    let produced = lab
        .config
        .modules
        .iter()
        .all(|m| lab.dir.join(format!("{m}.ko")).is_file());
    if done.success() && !produced {
        let mut f = fs::OpenOptions::new().append(true).open(log)?;
        let _ = writeln!(
            f,
            "checker: make succeeded but did not produce {}",
            lab.config
                .modules
                .iter()
                .map(|m| format!("{m}.ko"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    // Every module built must be free of allocation-failure panic paths.
    let clean = done.success()
        && produced
        && crate::run::buildcheck::check_modules(&lab.dir, &lab.config.modules, log)?
        && gate::sources_gate(lab, tc, solution, log)?;
    Ok(BuildOutcome {
        ok: done.success() && produced && clean,
        time: done.time,
        log: log.to_path_buf(),
        limit: done.limit,
    })
}

/// Builds the reference solution of `lab` (in its folder) and copies its
/// modules to `dir`, for runs given `--reference dir`; the log goes to
/// `log`.
pub fn build_reference(lab: &Lab, tc: &Toolchain, dir: &Path, log: &Path) -> Result<()> {
    let built = build(lab, tc, true, false, log)?;
    if !built.ok {
        anyhow::bail!(
            "{}: the reference solution does not build (the differential steps need it): see {}",
            lab.name,
            log.display()
        );
    }
    keep_modules(lab, dir)
}

/// Copies the lab's freshly built modules to `dir` (the reference
/// solution's, for the guest's [`lab::REF_DIR`]).
fn keep_modules(lab: &Lab, dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for m in &lab.config.modules {
        let from = lab.dir.join(format!("{m}.ko"));
        let to = dir.join(format!("{m}.ko"));
        fs::copy(&from, &to)
            .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    }
    Ok(())
}

/// Runs what `req` asks for (`checker lab`, and a child run of `checker
/// run`, `grade` or `fixtures`): resolves and loads the lab, sets up the
/// toolchain, then [`run_lab`].
pub fn run_request(req: &LabRequest, out: &mut dyn Reporter) -> Result<RunResult> {
    let (root, lab, tc, opts) = resolve(req, out)?;
    run_lab(root.as_deref().ok(), &lab, &tc, &opts, out)
}

/// What a request names: the workspace root, the lab, the toolchain of
/// the kernel it asks for, and the run's options.
fn resolve(
    req: &LabRequest,
    out: &mut dyn Reporter,
) -> Result<(Result<PathBuf>, Lab, Toolchain, LabOptions)> {
    let root = match &req.root {
        Some(r) => Ok(r.clone()),
        None => crate::tools::workspace::root(),
    };
    let lab = load_requested(req, &root, out)?;
    let student_course = lab.in_student_course();
    if student_course && req.solution {
        anyhow::bail!(
            "this is a student repository (checker export-course): it has no reference \
             solutions; --solution runs in the course's full repository"
        );
    }
    let wants_shipped = student_course && req.reference.is_none() && lab.has_differential();
    if wants_shipped && req.kernel == Some(KernelChoice::Debug) {
        // Before the debug kernel's build, which takes minutes.
        // Of the series asked for, when `--guest` names one.
        let series = req.guest.linux;
        shipped_reference_for(
            &lab.dir,
            &lab.name,
            |abi| {
                abi.starts_with("debug-")
                    && series.is_none_or(|l| crate::tools::guest::Linux::of(abi) == Some(l))
            },
            "the debug kernel",
        )?;
    }
    let tc = ensure_quiet()?;
    // The debug kernel of a series is its own tree: Debian's kernel of
    // that series is not needed for it.
    let tc = match (req.kernel.unwrap_or_default(), &root) {
        (KernelChoice::Debian, _) => {
            crate::tools::setup::guest_toolchain(req.guest.linux, tc, &root)?
        }
        (choice, Ok(r)) => {
            crate::tools::debugkernel::toolchain_for(choice, req.guest.linux, tc, r)?
        }
        (_, Err(e)) => anyhow::bail!("--kernel debug needs the workspace: {e}"),
    };
    let mut opts = req.guest.lab_options(req.solution, req.keep)?;
    opts.seed = req.seed;
    opts.reference = req.reference.clone();
    opts.saved_guest = req.saved_guest && !req.cold && !cold_boot_env();
    // The same runs that may restore a saved guest (`lab`, `watch`) may
    // replay compile-fail builds; `--cold` does not change a build.
    opts.build_caches = req.saved_guest;
    if wants_shipped {
        let abi = tc.abi.clone();
        opts.reference = Some(shipped_reference_for(
            &lab.dir,
            &lab.name,
            |a| a == abi,
            &abi,
        )?);
    }
    Ok((root, lab, tc, opts))
}

/// The reference modules a student repository ships for the
/// differential steps of the lab `name` in `lab_dir` (see `commands::export`):
/// those of the first kernel ABI `fits`; else an error that names the
/// kernels it has (`wanted` names the one asked for) and what to do.
fn shipped_reference_for(
    lab_dir: &Path,
    name: &str,
    fits: impl Fn(&str) -> bool,
    wanted: &str,
) -> Result<PathBuf> {
    let dir =
        crate::spec::policy::lexical(&lab_dir.join("../..").join(lab::REFERENCE_DIR).join(name));
    let mut built: Vec<String> = fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    built.sort();
    if let Some(abi) = built.iter().find(|abi| fits(abi)) {
        return Ok(dir.join(abi));
    }
    if built.is_empty() {
        anyhow::bail!(
            "{}: this student repository has no reference modules for the lab's differential \
             steps (nothing in {}): ask your instructor for an export with them",
            name,
            dir.display()
        );
    }
    anyhow::bail!(
        "{}: the reference modules in {} were built for kernel {}, not for {wanted}: the \
         differential steps need them built for the kernel the run uses (ask your instructor \
         for an export with that kernel: `checker export-course --kernels ...`)",
        name,
        dir.display(),
        built.join(", ")
    )
}

/// Whether the kernel crate has been built into `profile` (see
/// [`crate::tools::exec::kernel_profile_dir`]): a first build takes
/// minutes, and says so.
fn kernel_crate_built(profile: &Path) -> bool {
    fs::read_dir(profile.join("deps")).is_ok_and(|entries| {
        entries.filter_map(|e| e.ok()).any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libkernel-") && name.ends_with(".rlib")
        })
    })
}

/// The first line of `crash` when the kernel reported it before any step
/// `started`: a crash of the guest kernel's own, not of the lab's code.
fn boot_crash(started: bool, crash: Option<grade::Crash>) -> Option<String> {
    crash
        .filter(|c| !started && c.step.is_none())
        .map(|c| c.line)
}

/// `checker shell`: builds the lab `req` names as `checker lab` does (the
/// policy, the reference solution's modules for its differential steps,
/// then the student's or the solution's), and boots its guest with a
/// shell on this terminal instead of its steps (see [`vm::shell`]).
/// `script`, for tests, is typed into the shell instead; `gdb`, a folder
/// for QEMU's gdbstub and the modules' load addresses (`make gdb-NN`).
/// Returns whether the build succeeded and the guest powered off normally.
pub fn shell(
    req: &LabRequest,
    limit: Option<Duration>,
    script: Option<&str>,
    gdb: Option<&Path>,
    out: &mut dyn Reporter,
) -> Result<bool> {
    let (root, lab, tc, opts) = resolve(req, out)?;
    let run = prepare(root.as_deref().ok(), &lab, &tc, &opts, Instant::now(), out);
    run.shell(limit, script, gdb, out)
}

/// The lab `req` names, with its extra steps and cut at its `--step`.
fn load_requested(req: &LabRequest, root: &Result<PathBuf>, out: &mut dyn Reporter) -> Result<Lab> {
    let (dir, name) = lab_folder(req, root)?;
    let mut lab = Lab::load(&dir)?;
    lab.name = name;
    lab.config.expected_dir = req.expected_dir.clone();
    if let Some(secs) = req.build_timeout {
        lab.config.build_timeout = Some(secs);
    }
    if let Some(extra) = &req.extra {
        // Absolute: UPDATE_EXPECT writes the snapshots relative to it.
        let extra = extra
            .canonicalize()
            .with_context(|| format!("--extra {}: no such folder", extra.display()))?;
        let n = lab.add_extra(&extra)?;
        out.event(&Event::Note {
            text: format!(
                "--extra: {n} extra steps from {}",
                extra.join(&lab.name).join("lab.toml").display()
            ),
        });
    }
    if let Some(k) = req.step {
        let n = lab.config.steps.len();
        if k == 0 || k > n {
            anyhow::bail!("--step {k}: {} has steps 1 to {n}", lab.name);
        }
        if lab.config.steps[..k].iter().all(|s| s.guest().is_none()) {
            anyhow::bail!(
                "--step {k}: steps 1 to {k} run on the host only; a run needs a guest step"
            );
        }
        out.event(&Event::Note {
            text: format!(
                "--step {k}: runs steps 1 to {k} ({}), the earlier ones to set it up",
                lab.config.steps[k - 1].name
            ),
        });
        lab.config.steps.truncate(k);
    }
    Ok(lab)
}

/// The folder of the lab `req` names, and the lab's name: `labs/<name>`,
/// else a sample's `drivers/<name>`; a name with a `/` is a folder
/// anywhere (a driver of one's own), named after the folder.
fn lab_folder(req: &LabRequest, root: &Result<PathBuf>) -> Result<(PathBuf, String)> {
    let name = req.name.clone();
    let (lab_dir, name) = match &req.lab_dir {
        None if name.contains('/') => {
            let dir = PathBuf::from(&name);
            let base = dir
                .canonicalize()
                .ok()
                .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or(name);
            (Some(dir), base)
        }
        other => (other.clone(), name),
    };
    let dir = match lab_dir {
        // Absolute: expected files are written relative to it.
        Some(d) => d.canonicalize().unwrap_or(d),
        None => {
            let root = root.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?;
            let lab = root.join("labs").join(&name);
            let sample = root.join("drivers").join(&name);
            if !lab.join("lab.toml").is_file() && sample.join("lab.toml").is_file() {
                sample
            } else {
                lab
            }
        }
    };
    if !dir.join("lab.toml").is_file() {
        let known = root
            .as_ref()
            .ok()
            .and_then(|r| lab::all_labs(r).ok())
            .unwrap_or_default()
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect::<Vec<_>>()
            .join(", ");
        anyhow::bail!(
            "no lab {name:?}: {} has no lab.toml (labs: {known})",
            dir.display()
        );
    }
    Ok((dir, name))
}

/// How [`run_host_steps`] runs: the run's flags.
pub struct HostOptions<'s, 'a> {
    /// The reference solution's steps (`SOLUTION=1`), not the skeleton's.
    pub solution: bool,
    /// This run's [`cfcache::Session`] (`checker lab`, `watch`): a
    /// compile-fail build whose inputs are unchanged is replayed from
    /// [`cfcache`] instead. `None`: every case is built.
    pub cache: Option<&'s mut cfcache::Session<'a>>,
}

/// Runs the host steps of `plan` one by one in `dir`, the workspace root,
/// each in the [`Sandbox`] of that workspace, and grades them. Each
/// step's output goes to `<work>/NN-name.log`.
pub fn run_host_steps(
    dir: &Path,
    lab: &Lab,
    plan: &Plan,
    tc: &Toolchain,
    opts: HostOptions,
    work: &Path,
    out: &mut dyn Reporter,
) -> Result<Vec<StepGrade>> {
    let HostOptions {
        solution,
        mut cache,
    } = opts;
    let mut grades = Vec::new();
    let sandbox = Sandbox::for_lab(dir, &lab.dir, lab.build_limits(), tc);
    let mut fetched = false;
    for &id in &plan.host {
        let step = &lab.config.steps[id.0];
        let case = step.compile_fail();
        let command = step.host_command(solution);
        if case.is_none() && command.is_none() {
            continue;
        }
        out.event(&Event::HostStep {
            id,
            total: lab.config.steps.len(),
            name: step.name.clone(),
            compile_fail: case.is_some(),
        });
        if !fetched {
            sandbox::fetch(dir);
            fetched = true;
        }
        fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
        let log = work.join(step.expected_file_name(id.0).replace(".txt", ".log"));
        let mut cached = false;
        let (done, output) = match (case, command) {
            (Some(case), _) => {
                let session = cache.as_deref_mut();
                let build = crate::run::compilefail::Build {
                    sandbox: &sandbox,
                    lab,
                    tc,
                    case,
                    solution,
                };
                let (done, output, hit) = build.run_cached(session, &log)?;
                cached = hit;
                let root = lab.dir.parent().and_then(Path::parent).unwrap_or(dir);
                (done, crate::run::compilefail::normalise(&output, root))
            }
            (None, Some(command)) => run_host_command(&sandbox, tc, command, dir, &log)?,
            (None, None) => unreachable!("skipped above"),
        };
        let time = done.time.as_secs_f64();
        out.event(&Event::HostStepDone {
            seconds: time,
            cached,
        });
        let run = HostRun {
            status: done.code,
            output,
            log,
            time,
        };
        let mut graded = grade::grade_host(lab, id, &run, grade::update_requested());
        if let Some(limit) = done.limit {
            graded.status = grade::Status::Failed(grade::Failure::of_limit(limit));
        }
        grades.push(graded);
    }
    Ok(grades)
}

/// Runs a host step's `sh -c command` in `dir` in `sandbox`, its output
/// into `log`; returns how it ended and its output. `KDIR` is the run's
/// kernel tree: a `make` in a lab folder would otherwise ask `checker
/// kdir`, which reads dpkg's database, out of the sandbox's sight (lab
/// 09's `safety-comments` failed on the solution: "linux-headers-amd64
/// is not installed").
fn run_host_command(
    sandbox: &Sandbox,
    tc: &Toolchain,
    command: &str,
    dir: &Path,
    log: &Path,
) -> Result<(sandbox::Finished, String)> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("CARGO_TERM_COLOR", "never")
        .env("KDIR", &tc.kdir);
    let done = sandbox
        .run(&cmd, log)
        .with_context(|| format!("cannot run sh -c {command:?}"))?;
    let output = fs::read_to_string(log).unwrap_or_default();
    Ok((done, output))
}

/// The run's cache session and where the reference build puts the key
/// of the modules to keep in [`refcache`] at the end of the run.
type RefCache<'s, 'a> = (&'s cfcache::Session<'a>, &'s mut Option<String>);

/// One lab run under way: what every phase needs.
struct LabRun<'a> {
    root: Option<&'a Path>,
    lab: Lab,
    plan: Plan,
    tc: &'a Toolchain,
    opts: &'a LabOptions,
    work: PathBuf,
    started: Instant,
    seed: Option<u64>,
}

/// Runs one lab: host steps, build, guest, grade. Says what it does
/// through `out`, ending with [`Event::Finished`].
pub fn run_lab(
    root: Option<&Path>,
    lab: &Lab,
    tc: &Toolchain,
    opts: &LabOptions,
    out: &mut dyn Reporter,
) -> Result<RunResult> {
    let started = Instant::now();
    let read = match root.and_then(|r| crate::spec::book::chapter_heading(r, &lab.config.chapter)) {
        Some(heading) => format!("{heading} (book/src/{})", lab.config.chapter),
        None => format!("book/src/{}", lab.config.chapter),
    };
    out.event(&Event::Started {
        lab: lab.name.clone(),
        title: lab.config.title.clone(),
        solution: opts.solution,
        read,
    });
    let run = prepare(root, lab, tc, opts, started, out);
    let result = run.execute(out)?;
    out.event(&Event::Finished {
        result: Box::new(result.clone()),
    });
    Ok(result)
}

/// The lab as this run has it: the steps of its kernel, this run's inputs.
fn prepare<'a>(
    root: Option<&'a Path>,
    lab: &Lab,
    tc: &'a Toolchain,
    opts: &'a LabOptions,
    started: Instant,
    out: &mut dyn Reporter,
) -> LabRun<'a> {
    let mut note = |text: String| out.event(&Event::Note { text });
    // Steps for the debug kernel (`kernel = "debug"`, `failslab`) run only there.
    let mut lab = lab.for_kernel(tc.debug);
    // `per_kernel` steps read (and UPDATE_EXPECT writes) this series' snapshots.
    lab.config.kernel_series = crate::tools::guest::series_of(&tc.abi);
    // And `per_qemu` steps those of the host's QEMU.
    if lab.has_per_qemu_steps() {
        lab.config.qemu_major = crate::tools::probe::qemu_major();
        note(format!(
            "QEMU {}: the steps marked `per_qemu` read its snapshots",
            lab.qemu()
        ));
    }
    if tc.debug {
        note(format!("kernel: the debug kernel ({})", tc.abi));
    } else if lab.debug_steps() == 0 {
        let skipped = Lab::load(&lab.dir).map(|l| l.debug_steps()).unwrap_or(0);
        if skipped > 0 {
            note(format!(
                "({skipped} more steps run on the debug kernel only: --kernel debug)"
            ));
        }
    }
    // Differential steps: this run's inputs, from --seed or the OS.
    let seed = lab
        .has_differential()
        .then(|| opts.seed.unwrap_or_else(crate::spec::inputs::os_seed));
    let lab = match seed {
        Some(seed) => lab.with_inputs(seed),
        None => lab,
    };
    if let Some(inputs) = &lab.config.inputs {
        note(format!(
            "inputs: {} (reproduce: --seed {})",
            inputs.describe(),
            inputs.seed
        ));
    }
    LabRun {
        root,
        work: work_dir(root, &lab, opts.solution),
        plan: Plan::of(&lab),
        lab,
        tc,
        opts,
        started,
        seed,
    }
}

impl LabRun<'_> {
    /// Everything after the announcement.
    fn execute(&self, out: &mut dyn Reporter) -> Result<RunResult> {
        let lab = &self.lab;
        // Before anything of the student's is compiled or run: the rules
        // for student files (see crate::spec::policy).
        let build_log = self.work.join("build.log");
        if let Some(build) = gate::gate(lab, self.opts.solution, &build_log, out)? {
            return Ok(self.stopped(build, grade::all_build_failed(lab)));
        }
        let profile = |r| crate::tools::exec::kernel_profile_dir(r, self.tc);
        if self.root.is_some_and(|r| !kernel_crate_built(&profile(r))) {
            out.event(&Event::Note {
                text: "the kernel crate is built first for this kernel: a minute or two, once"
                    .into(),
            });
        }
        let root = self.root.unwrap_or(&lab.dir);
        // The caches of `checker lab` and `watch`, opened once per run if a
        // compile-fail step or the reference solution's build may use them.
        let compile_fail =
            (self.plan.host.iter()).any(|id| lab.config.steps[id.0].compile_fail().is_some());
        let mut cache = (self.opts.build_caches && (compile_fail || self.builds_reference()))
            .then(|| cfcache::Session::open(root, self.tc))
            .flatten();
        let host = HostOptions {
            solution: self.opts.solution,
            cache: cache.as_mut(),
        };
        let host_steps = run_host_steps(root, lab, &self.plan, self.tc, host, &self.work, out)?;
        let mut keep: Option<String> = None;
        let built = self.build_modules(&build_log, cache.as_ref().map(|c| (c, &mut keep)), out);
        if let Some(cache) = cache {
            let more = keep.is_some();
            if cache.close(more) {
                if let Some(key) = keep {
                    // A cache that cannot be written only costs the next run a build.
                    let dir = refcache::dir(&self.tc.cache);
                    let ref_dir = self.work.join("ref");
                    let _ = refcache::store(&dir, &key, &lab.config.modules, &ref_dir);
                }
            }
        }
        let (build, ref_dir) = built?;
        if !build.ok {
            let failed = grade::build_failed(lab, build.limit);
            return Ok(self.stopped(build, [host_steps, failed].concat()));
        }
        self.boot_and_grade(build, host_steps, &ref_dir, out)
    }

    /// The reference solution's modules when the lab has differential
    /// steps, then the lab's own; returns the build and the reference's
    /// folder.
    fn build_modules(
        &self,
        build_log: &Path,
        cache: Option<RefCache<'_, '_>>,
        out: &mut dyn Reporter,
    ) -> Result<(BuildOutcome, PathBuf)> {
        let lab = &self.lab;
        let ref_dir = self.reference_modules(cache, out)?;
        out.event(&Event::Build { reference: false });
        let caches = self.opts.build_caches;
        let build = build(lab, self.tc, self.opts.solution, caches, build_log)?;
        let reference_is_this = self.opts.solution && self.opts.reference.is_none();
        if build.ok && lab.has_differential() && reference_is_this {
            keep_modules(lab, &ref_dir)?;
        }
        let tail = (!build.ok).then(|| {
            let text = fs::read_to_string(&build.log).unwrap_or_default();
            vm::console::tail(&text, BUILD_LOG_TAIL)
        });
        out.event(&Event::Built {
            reference: false,
            ok: build.ok,
            seconds: build.time.as_secs_f64(),
            log: build.log.clone(),
            tail,
        });
        Ok((build, ref_dir))
    }

    /// `checker shell` after the announcement: the policy, the build, and
    /// the guest with a shell (see [`shell`]).
    fn shell(
        &self,
        limit: Option<Duration>,
        script: Option<&str>,
        gdb: Option<&Path>,
        out: &mut dyn Reporter,
    ) -> Result<bool> {
        let lab = &self.lab;
        let build_log = self.work.join("build.log");
        if gate::gate(lab, self.opts.solution, &build_log, out)?.is_some() {
            return Ok(false);
        }
        let (build, ref_dir) = self.build_modules(&build_log, None, out)?;
        if !build.ok {
            return Ok(false);
        }
        let tc = self.tc;
        let (accel, _) = accel::choose(self.opts.accel, &tc.vmlinuz, &tc.cache);
        let disk_dir = tempfile::Builder::new()
            .prefix("checker-disks-")
            .tempdir()?;
        let (_disks, devices, files) =
            devices::make(disk_dir.path(), &lab.config.disks, &lab.config.nvme)?;
        let timeout = Duration::from_secs(self.timeout());
        let guest = self.guest(&ref_dir, accel, timeout, (devices, files))?;
        let banner = shell_banner(lab, &guest);
        let opts = vm::shell::Session {
            banner: &banner,
            limit,
            script,
            gdb,
        };
        Ok(vm::shell::run(&guest, &opts)?.success())
    }

    /// A run that stops before the guest boots: the build's outcome and
    /// the steps as graded so far.
    fn stopped(&self, build: BuildOutcome, steps: Vec<StepGrade>) -> RunResult {
        RunResult {
            lab: self.lab.name.clone(),
            solution: self.opts.solution,
            build,
            steps,
            crash: None,
            timed_out: false,
            accel: None,
            boot_time: None,
            wall: self.started.elapsed(),
            console_log: None,
            seed: self.seed,
        }
    }

    /// Whether this run builds the reference solution first: the
    /// skeleton's run of a lab with differential steps, unless they are
    /// given (`--reference`).
    fn builds_reference(&self) -> bool {
        self.lab.has_differential() && !self.opts.solution && self.opts.reference.is_none()
    }

    /// The folder of the reference solution's modules for the
    /// differential steps: given (`--reference`), or built here first, so
    /// that the student's build is what stays in the lab folder. With
    /// `cache` (`checker lab`, `watch`), modules built from the same
    /// inputs before are taken from [`refcache`] instead, and the key of
    /// those built here is set, to keep them at the end of the run.
    fn reference_modules(
        &self,
        cache: Option<RefCache<'_, '_>>,
        out: &mut dyn Reporter,
    ) -> Result<PathBuf> {
        let lab = &self.lab;
        let ref_dir = (self.opts.reference.clone()).unwrap_or_else(|| self.work.join("ref"));
        if lab.has_differential() && self.opts.reference.is_some() {
            for m in &lab.config.modules {
                let ko = ref_dir.join(format!("{m}.ko"));
                if !ko.is_file() {
                    anyhow::bail!("--reference: {} is missing", ko.display());
                }
            }
        } else if self.builds_reference() {
            let key = |cache: &cfcache::Session| {
                let (root, tc) = cache.toolchain();
                refcache::key(cache.shared(), lab, root, tc)
            };
            let before = cache.as_ref().and_then(|(c, _)| key(c));
            let modules = &lab.config.modules;
            if let Some(k) = &before {
                if refcache::load(&refcache::dir(&self.tc.cache), k, modules, &ref_dir) {
                    out.event(&Event::Note {
                        text:
                            "build the reference solution ... cached: nothing it compiles changed"
                                .into(),
                    });
                    return Ok(ref_dir);
                }
            }
            out.event(&Event::Build { reference: true });
            let log = self.work.join("ref-build.log");
            let built = build(lab, self.tc, true, self.opts.build_caches, &log)?;
            out.event(&Event::Built {
                reference: true,
                ok: built.ok,
                seconds: built.time.as_secs_f64(),
                log: log.clone(),
                tail: None,
            });
            if !built.ok {
                anyhow::bail!(
                    "the reference solution does not build (the differential steps need it): see {}",
                    log.display()
                );
            }
            keep_modules(lab, &ref_dir)?;
            // Kept only if what it read did not change while it built.
            if let (Some((cache, keep)), Some(before)) = (cache, before) {
                if key(cache).as_ref() == Some(&before) {
                    *keep = Some(before);
                }
            }
        }
        Ok(ref_dir)
    }

    /// The guest's time limit: `--timeout`, else the lab's (tripled on
    /// the debug kernel: KASAN, lockdep and kmemleak make it about three
    /// times slower, and it scans for leaks after the last step), else
    /// the default.
    fn timeout(&self) -> u64 {
        let lab_limit = self.lab.config.timeout.unwrap_or(lab::DEFAULT_TIMEOUT_SECS);
        match (self.opts.timeout, self.tc.debug) {
            (Some(t), _) => t,
            (None, true) => lab_limit * 3,
            (None, false) => lab_limit,
        }
    }

    /// The guest that runs the plan's guest steps: the lab's modules, the
    /// reference solution's under [`lab::REF_DIR`], the modules of the
    /// kernel image the lab names, its programs and the checker's own for
    /// `failslab` steps.
    fn guest(
        &self,
        ref_dir: &Path,
        accel: Accel,
        timeout: Duration,
        hardware: (Vec<vm::Device>, Vec<vm::Program>),
    ) -> Result<vm::Guest> {
        let (lab, tc) = (&self.lab, self.tc);
        let module = |name: String, path: PathBuf| vm::Module { name, path };
        let mut modules: Vec<vm::Module> = (lab.config.modules.iter())
            .map(|m| module(m.clone(), lab.dir.join(format!("{m}.ko"))))
            .collect();
        if lab.has_differential() {
            let guest_dir = lab::REF_DIR.trim_start_matches("/lab/");
            modules.extend(
                (lab.config.modules.iter())
                    .map(|m| module(format!("{guest_dir}/{m}"), ref_dir.join(format!("{m}.ko")))),
            );
        }
        let image_modules = vm::image::guest_modules(&tc.modules_dir, &lab.config.image_modules)?;
        let mut programs: Vec<vm::Program> = (lab.config.programs.iter())
            .map(|p| vm::Program {
                name: p.clone(),
                source: vm::Source::Path(lab.dir.join(p)),
            })
            .collect();
        if lab.has_failslab() {
            programs.extend(vm::tools::failslab_programs()?);
        }
        let (devices, disk_files) = hardware;
        programs.extend(disk_files);
        let extra_cmdline = if tc.debug {
            vm::guest::DEBUG_CMDLINE
        } else {
            ""
        };
        Ok(vm::Guest {
            kernel: tc.boot_kernel.clone(),
            extra_cmdline: extra_cmdline.into(),
            modules,
            image_modules,
            programs,
            steps: self.plan.scripts.clone(),
            cpus: lab.config.smp.unwrap_or(1),
            memory_mb: lab.config.memory.unwrap_or(GUEST_MEMORY_MB),
            devices,
            timeout,
            accel,
            keep: self.opts.keep,
        })
    }

    /// Boots the guest, runs the plan's guest steps, grades them.
    fn boot_and_grade(
        &self,
        build: BuildOutcome,
        host_steps: Vec<StepGrade>,
        ref_dir: &Path,
        out: &mut dyn Reporter,
    ) -> Result<RunResult> {
        let (lab, tc) = (&self.lab, self.tc);
        let (accel, why) = accel::choose(self.opts.accel, &tc.vmlinuz, &tc.cache);
        let timeout = self.timeout();
        let mut boots = 0;
        let (_disk_dir, disks, run) = loop {
            // The lab's disks: made for this run, read again by its
            // `check_disk` steps after power-off, removed at the end.
            let disk_dir = tempfile::Builder::new()
                .prefix("checker-disks-")
                .tempdir()?;
            let (disks, devices, files) =
                devices::make(disk_dir.path(), &lab.config.disks, &lab.config.nvme)?;
            let guest = self.guest(
                ref_dir,
                accel,
                Duration::from_secs(timeout),
                (devices, files),
            )?;
            let mut progress = |p| {
                out.event(&match p {
                    Progress::Booting => Event::Booting {
                        accel,
                        why: why.clone(),
                        timeout,
                    },
                    Progress::Restoring => Event::Booting {
                        accel,
                        why: format!("{why}; restored from a saved, booted guest (COLD=1 boots)"),
                        timeout,
                    },
                    Progress::Note(text) => Event::Note { text },
                    Progress::StepStarted(n) => self.step_started(n),
                })
            };
            // A saved guest only where it was asked for (`checker lab`,
            // `watch`), and never on the debug kernel.
            let run = if self.opts.saved_guest && !tc.debug {
                vm::snapshot::run(&guest, &tc.modules_dir, &tc.cache, &mut progress)?
            } else {
                vm::run(&guest, &mut progress)?
            };
            boots += 1;
            // Nothing of the lab's runs before its first step: a crash
            // then is the guest kernel's (seen: 6.12 under TCG, an int3
            // left by a static key's patching while booting), so it gets
            // one more boot.
            match self.crash_while_booting(&run) {
                Some(line) if boots == 1 => out.event(&Event::Note {
                    text: format!(
                        "the guest kernel crashed while booting, before any step ran ({line}): \
                         booting it again"
                    ),
                }),
                _ => break (disk_dir, disks, run),
            }
        };
        if let Some(dir) = &run.kept_dir {
            out.event(&Event::Kept { dir: dir.clone() });
        }
        let result = self.grade_run(build, host_steps, &run, &disks, timeout, out)?;
        Ok(RunResult {
            accel: Some(accel),
            ..result
        })
    }

    /// The first line of a crash that `run`'s kernel reported before any
    /// step started.
    fn crash_while_booting(&self, run: &vm::GuestRun) -> Option<String> {
        let started = run.transcript.last_started().is_some();
        boot_crash(started, self.crash(&run.console))
    }

    /// Grades a guest run after the host steps: its steps, a crash on its
    /// console, the disks after power-off; keeps its logs next to the
    /// build log.
    fn grade_run(
        &self,
        build: BuildOutcome,
        host_steps: Vec<StepGrade>,
        run: &vm::GuestRun,
        disks: &[devices::MadeDisk],
        timeout: u64,
        out: &mut dyn Reporter,
    ) -> Result<RunResult> {
        let (lab, plan) = (&self.lab, &self.plan);
        let timed_out = run.ending == Ending::TimedOut;
        let update = grade::update_requested();
        let mut steps = host_steps;
        steps.extend(grade::grade_steps(
            lab,
            plan,
            &run.transcript,
            timed_out,
            update,
        ));
        // The whole console and result channel stay next to the build log.
        let console_log = self.work.join("console.log");
        let _ = fs::write(&console_log, &run.console);
        let _ = fs::write(self.work.join("results.log"), &run.results_text);
        let crash = self.crash(&run.console);
        if let Some(crash) = &crash {
            grade::fail_reported_step(&mut steps, crash);
        }
        steps.extend(self.check_disks(disks, &run.transcript)?);
        steps.sort_by_key(|g| g.id);
        grade::apply_depends(lab, &mut steps);
        if let Some(e) = self.unfinished(run, timed_out, crash.is_some(), timeout) {
            out.event(&e);
        }
        Ok(RunResult {
            boot_time: run.boot_time,
            console_log: Some(console_log),
            crash,
            timed_out,
            steps,
            ..self.stopped(build, Vec::new())
        })
    }

    /// Runs and grades the `check_disk` steps, after the guest powered
    /// off, against the hashes its steps printed.
    fn check_disks(
        &self,
        disks: &[devices::MadeDisk],
        transcript: &vm::Transcript,
    ) -> Result<Vec<StepGrade>> {
        let (lab, plan) = (&self.lab, &self.plan);
        let outputs: Vec<(String, String)> = (plan.guest.iter().enumerate())
            .filter_map(|(n, slot)| match slot {
                Slot::Step(id) => Some((
                    lab.config.steps[id.0].name.clone(),
                    transcript.step(n)?.output.clone()?,
                )),
                Slot::Reference(_) => None,
            })
            .collect();
        let mut grades = Vec::new();
        for &id in &plan.after {
            let step = &lab.config.steps[id.0];
            let Some(disk) = step
                .check_disk()
                .and_then(|d| disks.iter().find(|m| m.spec.id == d))
            else {
                continue;
            };
            let started = Instant::now();
            let (status, output) = devices::check_disk(disk, &outputs)?;
            fs::create_dir_all(&self.work)?;
            let log = (self.work).join(step.expected_file_name(id.0).replace(".txt", ".log"));
            fs::write(&log, &output)?;
            let run = HostRun {
                status,
                output,
                log,
                time: started.elapsed().as_secs_f64(),
            };
            grades.push(grade::grade_host(lab, id, &run, grade::update_requested()));
        }
        Ok(grades)
    }

    /// The event of the guest's run `n` starting.
    fn step_started(&self, n: usize) -> Event {
        let steps = &self.lab.config.steps;
        match self.plan.guest_run(n) {
            Some(Slot::Step(id)) => Event::GuestStep {
                id,
                total: steps.len(),
                name: steps[id.0].name.clone(),
            },
            // The reference solution's runs of the differential steps.
            Some(Slot::Reference(_)) => Event::ReferenceRun {
                name: self.plan.scripts[n].name.clone(),
            },
            None => Event::Note {
                text: format!("step {}", n + 1),
            },
        }
    }

    /// The first problem the kernel reported on `console`, with the step
    /// it happened in as the lab numbers it. The debug kernel's tools say
    /// precisely what went wrong; their reports come first (kmemleak's
    /// scan after the last step is only seen here).
    fn crash(&self, text: &str) -> Option<Crash> {
        let debug_report = if self.tc.debug {
            console::find_reports(text).first().map(|r| Crash {
                line: r.line(),
                step: r.step.clone(),
                excerpt: r.excerpt.clone(),
            })
        } else {
            None
        };
        // Fault injection makes the allocator warn (with a stack dump)
        // about the failures it was asked for: not the module's bugs.
        let text = if self.tc.debug {
            console::without_injected_failure_warnings(text)
        } else {
            text.to_owned()
        };
        // A step's expected `WARN` (`warns`) is what it tests, no crash.
        let steps = &self.lab.config.steps;
        let text = console::without_expected_warnings(&text, |name| {
            let step = steps.iter().find(|s| Some(s.name.as_str()) == name)?;
            step.warns.as_deref()
        });
        debug_report
            .or_else(|| grade::find_crash(&text))
            .map(|mut crash| {
                crash.step = (crash.step).map(|(n, name)| (self.plan.console_position(n), name));
                crash.excerpt = self.decoded(&crash.excerpt);
                crash
            })
    }

    /// `excerpt` with the source lines of its frames in the lab's modules
    /// (see [`decode::annotate`]).
    fn decoded(&self, excerpt: &str) -> String {
        let modules: Vec<(String, PathBuf)> = (self.lab.config.modules.iter())
            .map(|m| (m.replace('-', "_"), self.lab.dir.join(format!("{m}.ko"))))
            .collect();
        let root = crate::tools::workspace::enclosing(&self.lab.dir);
        decode::annotate(excerpt, &modules, &root)
    }

    /// What to say when the guest did not finish its steps: a time-out, or
    /// a stop (QEMU failed, or the guest stopped with no crash seen).
    fn unfinished(
        &self,
        run: &vm::GuestRun,
        timed_out: bool,
        crashed: bool,
        timeout: u64,
    ) -> Option<Event> {
        let steps = &self.lab.config.steps;
        let console = run.console.trim();
        if timed_out {
            let at = match run.transcript.unfinished() {
                Some(n) => match self.plan.guest_run(n) {
                    Some(Slot::Step(id)) => {
                        format!("in step {} ({})", id.number(), steps[id.0].name)
                    }
                    _ => format!(
                        "in the reference run {}",
                        self.plan.scripts.get(n).map_or("", |s| s.name.as_str())
                    ),
                },
                None if run.transcript.last_started().is_none() => "during boot".into(),
                None => "after the last step".into(),
            };
            let console =
                (!console.is_empty()).then(|| vm::console::tail(&run.console, CONSOLE_TAIL));
            return Some(Event::TimedOut {
                timeout,
                at,
                console,
            });
        }
        if run.transcript.done || run.transcript.unfinished().is_some() || crashed {
            return None;
        }
        // The guest stopped before reporting anything (or QEMU failed).
        Some(Event::GuestStopped {
            qemu: events::QemuExit::of(run.qemu_status),
            console: vm::console::tail(&run.console, CONSOLE_TAIL),
            qemu_said: (!run.qemu_stderr.trim().is_empty())
                .then(|| vm::console::tail(&run.qemu_stderr, 10)),
        })
    }
}

/// Set-up without the book tools, printing only what it changes.
pub fn ensure_quiet() -> Result<Toolchain> {
    setup::ensure(&setup::Options {
        book: false,
        browser: false,
        verbose: false,
    })
    .context("setup failed")
}

/// One row of `checker verify`.
#[derive(Debug, Clone)]
pub struct VerifyRow {
    /// Lab name.
    pub lab: String,
    /// The solution's run (a sample's only run).
    pub solution: RunResult,
    /// The skeleton's run; `None` for a sample, which has no exercise.
    pub skeleton: Option<RunResult>,
}

impl VerifyRow {
    /// The solution passes and no step that scores passes on the skeleton
    /// (a sample has only the first).
    pub fn ok(&self) -> bool {
        self.solution.passed() && self.skeleton_builds() && self.skeleton_points().is_empty()
    }

    /// The skeleton builds (a sample has none). One that does not fails
    /// every step whatever they check, which proves nothing: a student
    /// who only made it build would get the points of every step that
    /// does not run their code.
    pub fn skeleton_builds(&self) -> bool {
        self.skeleton.as_ref().is_none_or(|s| s.build.ok)
    }

    /// The skeleton's steps that score (`points` > 0) and pass: points a
    /// student gets for the code the course gave. A skeleton that passes
    /// every step is one too, though its steps all score 0.
    pub fn skeleton_points(&self) -> Vec<&StepGrade> {
        let Some(skeleton) = &self.skeleton else {
            return Vec::new();
        };
        let mut scored: Vec<&StepGrade> = (skeleton.steps.iter())
            .filter(|s| s.points > 0 && s.passed())
            .collect();
        if scored.is_empty() && skeleton.passed() {
            scored.extend(skeleton.steps.first());
        }
        scored
    }
}

/// What the guest of `checker shell` prints before its prompt: what is in
/// `/lab`, what to try, how to leave.
fn shell_banner(lab: &Lab, guest: &vm::Guest) -> String {
    let mine: Vec<String> = (guest.modules.iter())
        .filter(|m| !m.name.contains('/'))
        .map(|m| format!("/lab/{}.ko", m.name))
        .collect();
    let mut text = format!(
        "\nchecker shell: {} ({}), a shell instead of its steps.\n",
        lab.name, lab.config.title
    );
    text += &format!("  your modules: {}\n", mine.join(" "));
    if guest.modules.iter().any(|m| m.name.contains('/')) {
        text += "  the reference solution's: /lab/ref/\n";
    }
    if let Some(first) = mine.first() {
        let name = first.trim_start_matches("/lab/").trim_end_matches(".ko");
        text += &format!("  try: insmod {first}; dmesg | tail; rmmod {name}\n");
    }
    text += &format!(
        "  the steps `make {}` runs are in {}/lab.toml\n",
        lab.name,
        lab.dir.display()
    );
    text + "  `exit` powers the guest off (QEMU's monitor: Ctrl-A C; Ctrl-A X quits at once)\n"
}

/// `checker verify`: every lab's solution must pass, and no step of its
/// skeleton that scores may pass; then every sample
/// (`drivers/*/lab.toml`, built with a plain `make`) must pass. `only`,
/// when not empty, names the labs and samples to verify.
pub fn verify(
    root: &Path,
    tc: &Toolchain,
    base: &LabOptions,
    only: &[String],
    out: &mut dyn Reporter,
) -> Result<Vec<VerifyRow>> {
    let mut rows = Vec::new();
    let run = |lab: &Lab, solution: bool, out: &mut dyn Reporter| {
        let opts = LabOptions {
            solution,
            ..base.clone()
        };
        out.event(&Event::Note {
            text: String::new(),
        });
        run_lab(Some(root), lab, tc, &opts, out)
    };
    let chosen = |lab: &Lab| only.is_empty() || only.contains(&lab.name);
    let (labs, samples) = (lab::all_labs(root)?, lab::all_samples(root)?);
    let known: Vec<String> = (labs.iter().chain(&samples))
        .filter_map(|d| Some(d.file_name()?.to_string_lossy().into_owned()))
        .collect();
    if let Some(name) = only.iter().find(|n| !known.contains(n)) {
        anyhow::bail!(
            "verify {name}: no such lab or sample (known: {})",
            known.join(", ")
        );
    }
    for dir in labs {
        let lab = Lab::load(&dir)?;
        if !chosen(&lab) {
            continue;
        }
        let solution = run(&lab, true, out)?;
        let skeleton = run(&lab, false, out)?;
        rows.push(VerifyRow {
            lab: lab.name.clone(),
            solution,
            skeleton: Some(skeleton),
        });
    }
    for dir in samples {
        let lab = Lab::load(&dir)?;
        if !chosen(&lab) {
            continue;
        }
        // No `SOLUTION=1`: the sample is the only code there is.
        rows.push(VerifyRow {
            lab: lab.name.clone(),
            solution: run(&lab, false, out)?,
            skeleton: None,
        });
    }
    Ok(rows)
}

fn summary(r: &RunResult) -> String {
    if !r.build.ok {
        return "fails (build)".into();
    }
    let crash = if r.crash.is_some() { ", crash" } else { "" };
    let word = if r.passed() { "passes" } else { "fails" };
    format!(
        "{word} ({}/{}, {}{crash})",
        r.passed_steps(),
        r.steps.len(),
        r.score()
    )
}

/// The verify summary table: each run's steps and points, then, under a
/// lab whose skeleton scores, the steps that do.
pub fn verify_table(rows: &[VerifyRow]) -> String {
    let mut t = format!(
        "\n{:<12} {:<26} {:<26} verdict\n",
        "lab", "solution", "skeleton"
    );
    for row in rows {
        let scored = row.skeleton_points();
        t += &format!(
            "{:<12} {:<26} {:<26} {}\n",
            row.lab,
            summary(&row.solution),
            row.skeleton
                .as_ref()
                .map_or_else(|| "(sample: none)".into(), summary),
            if !row.solution.passed() {
                "WRONG: the solution must pass"
            } else if !row.skeleton_builds() {
                "WRONG: the skeleton must build"
            } else if !scored.is_empty() {
                "WRONG: the skeleton scores"
            } else {
                "ok"
            }
        );
        for s in &scored {
            t += &format!(
                "{:<12} passes on the skeleton: step {} ({} points): score it 0 or make it use the student's code\n",
                "",
                s.label(),
                s.points
            );
        }
        let free: Vec<String> = (row.skeleton.iter().flat_map(|r| &r.steps))
            .filter(|s| s.passed() && !scored.iter().any(|g| g.id == s.id))
            .map(StepGrade::label)
            .collect();
        if !free.is_empty() {
            t += &format!(
                "{:<12} passes on the skeleton, scoring 0: {}\n",
                "",
                free.join(", ")
            );
        }
    }
    let ok = rows.iter().filter(|r| r.ok()).count();
    t + &format!("verify: {ok}/{} labs as expected\n", rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::{Failure, Status};
    use crate::plan::StepId;

    /// 6.12 under TCG, once in a CI run: an int3 left by a static key's
    /// patching hit while the guest booted.
    #[test]
    fn a_crash_before_the_first_step_is_the_kernel_s() {
        let console = "\
[    1.688145] sched_clock: Marking stable (1648077677, 39189519)->(1778254663, -90987467)
[    1.692080] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI
[    1.692385] CPU: 1 UID: 0 PID: 0 Comm: swapper/1 Not tainted 6.12.95+deb12-amd64 #1
[    1.692580] RIP: 0010:sched_clock_cpu+0x9/0x190
";
        let crash = grade::find_crash(console);
        assert!(
            crash.as_ref().is_some_and(|c| c.step.is_none()),
            "{crash:?}"
        );
        let line = boot_crash(false, crash.clone()).unwrap();
        assert!(line.contains("Oops: int3"), "{line}");
        assert_eq!(boot_crash(true, crash), None, "a step had started");
        assert_eq!(boot_crash(false, None), None);
    }

    #[test]
    fn a_built_kernel_crate_is_found() {
        let d = tempfile::tempdir().unwrap();
        let profile = d.path().join("target/x86_64-unknown-none/kernel");
        assert!(!kernel_crate_built(&profile));
        let deps = profile.join("deps");
        fs::create_dir_all(&deps).unwrap();
        fs::write(deps.join("libkernel-0123abcd.rmeta"), "").unwrap();
        assert!(!kernel_crate_built(&profile), "metadata only");
        fs::write(deps.join("libkernel-0123abcd.rlib"), "").unwrap();
        assert!(kernel_crate_built(&profile));
    }

    #[test]
    fn shipped_references_are_found_by_kernel() {
        let d = tempfile::tempdir().unwrap();
        let lab = d.path().join("labs/lab-01");
        fs::create_dir_all(&lab).unwrap();
        let err = shipped_reference_for(&lab, "lab-01", |_| true, "6.1.0-57-amd64").unwrap_err();
        assert!(format!("{err}").contains("no reference modules"), "{err}");
        let refs = d.path().join("references/lab-01");
        for abi in ["6.1.0-57-amd64", "6.12.57+deb13-amd64"] {
            fs::create_dir_all(refs.join(abi)).unwrap();
        }
        let found = shipped_reference_for(&lab, "lab-01", |a| a == "6.1.0-57-amd64", "x").unwrap();
        assert!(
            found.ends_with("references/lab-01/6.1.0-57-amd64"),
            "{found:?}"
        );
        let debug = |a: &str| a.starts_with("debug-");
        let err = shipped_reference_for(&lab, "lab-01", debug, "the debug kernel").unwrap_err();
        let err = format!("{err}");
        assert!(
            err.contains(
                "built for kernel 6.1.0-57-amd64, 6.12.57+deb13-amd64, not for the debug kernel"
            ) && err.contains("--kernels"),
            "{err}"
        );
    }

    fn step(i: usize, name: &str, points: u32, passed: bool) -> StepGrade {
        StepGrade {
            id: StepId(i),
            name: name.into(),
            time: None,
            actual: None,
            expected: None,
            expected_path: PathBuf::new(),
            status: if passed {
                Status::Passed
            } else {
                Status::Failed(Failure::Mismatch)
            },
            log: None,
            points,
            hint: None,
            unload_refused: false,
        }
    }

    fn result(solution: bool, steps: Vec<StepGrade>) -> RunResult {
        RunResult {
            lab: "lab-02".into(),
            solution,
            build: BuildOutcome {
                ok: true,
                time: Duration::ZERO,
                log: PathBuf::new(),
                limit: None,
            },
            steps,
            crash: None,
            timed_out: false,
            accel: None,
            boot_time: None,
            wall: Duration::ZERO,
            console_log: None,
            seed: None,
        }
    }

    /// Lab 02 as it was: the skeleton fails overall (its macro emits
    /// nothing), yet its load, sysfs and unload steps score. The old
    /// verify said `ok`; each scored step that passes is named now.
    #[test]
    fn a_skeleton_that_fails_overall_but_scores_is_wrong() {
        let names = ["expansion", "modinfo", "load", "sysfs", "unload", "extra"];
        let steps = |skeleton: bool| {
            (names.iter().enumerate())
                .map(|(i, n)| {
                    let points = u32::from(*n != "extra");
                    step(i, n, points, !skeleton || i >= 2)
                })
                .collect()
        };
        let row = VerifyRow {
            lab: "lab-02".into(),
            solution: result(true, steps(false)),
            skeleton: Some(result(false, steps(true))),
        };
        assert!(!row.skeleton.as_ref().is_some_and(RunResult::passed));
        assert!(!row.ok());
        let scored: Vec<String> = (row.skeleton_points().iter()).map(|s| s.label()).collect();
        assert_eq!(scored, ["03 (load)", "04 (sysfs)", "05 (unload)"]);
        let table = verify_table(&[row]);
        expect_test::expect![[r#"

            lab          solution                   skeleton                   verdict
            lab-02       passes (6/6, 5/5)          fails (4/6, 3/5)           WRONG: the skeleton scores
                         passes on the skeleton: step 03 (load) (1 points): score it 0 or make it use the student's code
                         passes on the skeleton: step 04 (sysfs) (1 points): score it 0 or make it use the student's code
                         passes on the skeleton: step 05 (unload) (1 points): score it 0 or make it use the student's code
                         passes on the skeleton, scoring 0: 06 (extra)
            verify: 0/1 labs as expected
        "#]]
        .assert_eq(&table);
    }

    #[test]
    fn steps_that_score_only_for_the_student_are_ok() {
        let row = VerifyRow {
            lab: "lab-01".into(),
            solution: result(
                true,
                vec![step(0, "load", 2, true), step(1, "state", 0, true)],
            ),
            skeleton: Some(result(
                false,
                vec![step(0, "load", 2, false), step(1, "state", 0, true)],
            )),
        };
        assert!(row.ok());
        // The solution must still pass every step, scored or not.
        let mut bad = row.clone();
        bad.solution.steps[1].status = Status::Failed(Failure::Mismatch);
        assert!(!bad.ok());
        // A skeleton that passes everything is wrong even at 0 points.
        let mut free = row.clone();
        free.skeleton = Some(result(false, vec![step(0, "load", 0, true)]));
        assert!(!free.ok());
        // A skeleton that does not build proves nothing.
        let mut unbuilt = row.clone();
        if let Some(s) = unbuilt.skeleton.as_mut() {
            s.build.ok = false;
        }
        assert!(!unbuilt.ok());
        assert!(verify_table(&[unbuilt]).contains("WRONG: the skeleton must build"));
        // A sample has no skeleton.
        let sample = VerifyRow {
            skeleton: None,
            ..row
        };
        assert!(sample.ok());
    }
}
