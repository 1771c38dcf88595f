//! `checker lab` and `checker verify`: build, boot, grade, report.

use std::fs;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ::vm::console;
use anyhow::{Context, Result};

use crate::accel::{self, Accel, AccelChoice};
use crate::grade::{self, Crash, Failure, StepGrade, Verdict};
use crate::lab::{self, Lab};
use crate::setup::{self, Toolchain};
use crate::vm::{self, Ending, GuestConfig, Interrupted, Progress};

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
}

/// The flags of every command that boots guests: `--timeout` and `--accel`.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct GuestArgs {
    /// Time limit of each guest run in seconds (default: lab.toml, else 60).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// Accelerator (default: CHECKER_ACCEL, else auto).
    #[arg(long, value_enum)]
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
        })
    }
}

/// How the build went.
#[derive(Debug, Clone)]
pub struct BuildOutcome {
    /// The build succeeded and produced every module.
    pub ok: bool,
    /// Wall time.
    pub time: Duration,
    /// The build log.
    pub log: PathBuf,
}

/// Everything about one lab run (data for any report format).
#[derive(Debug, Clone)]
pub struct LabReport {
    /// Lab name.
    pub lab: String,
    /// Whether the reference solution was built.
    pub solution: bool,
    /// The build.
    pub build: BuildOutcome,
    /// One entry per step.
    pub steps: Vec<StepGrade>,
    /// A crash seen on the console.
    pub crash: Option<Crash>,
    /// The guest hit its time limit.
    pub timed_out: bool,
    /// Accelerator used (when the guest ran).
    pub accel: Option<Accel>,
    /// Boot time (QEMU start to the first step).
    pub boot_time: Option<Duration>,
    /// Total wall time of the run (build included).
    pub wall: Duration,
    /// The guest's whole console (`ttyS0`), kept next to the build log.
    pub console_log: Option<PathBuf>,
    /// The seed of the run's `[random]` inputs, when the lab has
    /// differential steps (`--seed` reproduces the run).
    pub seed: Option<u64>,
}

impl LabReport {
    /// Steps that passed.
    pub fn passed_steps(&self) -> usize {
        self.steps.iter().filter(|s| s.passed()).count()
    }

    /// Points earned and the most the lab gives.
    pub fn score(&self) -> (u32, u32) {
        let earned = self.steps.iter().map(StepGrade::earned).sum();
        let max = self.steps.iter().map(|s| s.points).sum();
        (earned, max)
    }

    /// Every step passed and no crash was seen.
    pub fn passed(&self) -> bool {
        self.build.ok && self.crash.is_none() && self.passed_steps() == self.steps.len()
    }
}

/// Whether to colour output: stdout is a terminal and `NO_COLOR` is unset.
pub fn color() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

/// The accelerator choice from `--accel`, else `CHECKER_ACCEL`, else auto.
fn accel_choice(flag: Option<AccelChoice>) -> Result<AccelChoice> {
    match flag {
        Some(c) => Ok(c),
        None => match std::env::var("CHECKER_ACCEL") {
            Ok(v) => AccelChoice::parse(&v),
            Err(_) => Ok(AccelChoice::Auto),
        },
    }
}

/// Where build logs go: `<root>/target/checker/<lab>-<variant>/`.
fn work_dir(root: Option<&Path>, lab: &Lab, solution: bool) -> PathBuf {
    let variant = if solution { "solution" } else { "skeleton" };
    let base = match root {
        Some(r) => r.join("target").join("checker"),
        None => std::env::temp_dir().join("checker"),
    };
    base.join(format!("{}-{variant}", lab.name))
}

fn flush() {
    let _ = std::io::stdout().flush();
}

/// `make -C <lab> KDIR=... [RUST_TARGET_DIR=...] [SOLUTION=1]`: the one
/// way the checker builds a lab, for its modules and for compile-fail
/// cases alike, against the kernel tree of `tc`.
pub fn make_command(lab: &Lab, tc: &Toolchain, solution: bool) -> Command {
    let mut cmd = Command::new("make");
    cmd.arg("-C")
        .arg(&lab.dir)
        .arg(format!("KDIR={}", tc.kdir.display()));
    // The debug kernel's modules get their own cargo target folder.
    if let Some(dir) = &tc.rust_target_dir {
        cmd.arg(format!("RUST_TARGET_DIR={}", dir.display()));
    }
    if solution {
        cmd.arg("SOLUTION=1");
    }
    cmd
}

/// Builds the lab's modules with Kbuild; the log goes to `log`.
pub fn build(lab: &Lab, tc: &Toolchain, solution: bool, log: &Path) -> Result<BuildOutcome> {
    if let Some(dir) = log.parent() {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    // A stale module from an earlier (other-variant) build must not be graded.
    for m in &lab.config.modules {
        let _ = fs::remove_file(lab.dir.join(format!("{m}.ko")));
    }
    let file = fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    let mut cmd = make_command(lab, tc, solution);
    let started = Instant::now();
    let status = cmd
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file)
        .status()
        .context("cannot run make: install make (`make setup`)")?;
    if vm::interrupted() {
        return Err(Interrupted.into());
    }
    let produced = lab
        .config
        .modules
        .iter()
        .all(|m| lab.dir.join(format!("{m}.ko")).is_file());
    if status.success() && !produced {
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
    let clean = status.success()
        && produced
        && crate::buildcheck::check_modules(&lab.dir, &lab.config.modules, log)?;
    Ok(BuildOutcome {
        ok: status.success() && produced && clean,
        time: started.elapsed(),
        log: log.to_path_buf(),
    })
}

/// Runs the lab's host steps (see [`crate::lab`]) one by one in `dir`, the
/// workspace root, and grades them. Each step's output goes to
/// `<work>/NN-name.log`.
pub fn run_host_steps(
    dir: &Path,
    lab: &Lab,
    tc: &Toolchain,
    solution: bool,
    work: &Path,
) -> Result<Vec<StepGrade>> {
    let total = lab.config.steps.len();
    let mut grades = Vec::new();
    for (i, step) in lab.config.steps.iter().enumerate() {
        if let Some(case) = step.compile_fail() {
            print!(
                "step {}/{total} {} (compile-fail, on the host) ...",
                i + 1,
                step.name
            );
            flush();
            fs::create_dir_all(work)
                .with_context(|| format!("cannot create {}", work.display()))?;
            let log = work.join(step.expected_file_name(i).replace(".txt", ".log"));
            let started = Instant::now();
            let (status, output) = crate::compilefail::build(lab, tc, case, solution, &log)?;
            if vm::interrupted() {
                return Err(Interrupted.into());
            }
            let time = started.elapsed().as_secs_f64();
            println!(" done ({time:.1} s)");
            let root = lab.dir.parent().and_then(Path::parent).unwrap_or(dir);
            let errors = crate::compilefail::normalise(&output, root);
            grades.push(grade::grade_host(
                lab,
                i,
                status,
                &errors,
                &log,
                time,
                grade::update_requested(),
            ));
            continue;
        }
        let Some(command) = step.host_command(solution) else {
            continue;
        };
        print!("step {}/{total} {} (on the host) ...", i + 1, step.name);
        flush();
        fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
        let log = work.join(step.expected_file_name(i).replace(".txt", ".log"));
        let file =
            fs::File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
        let started = Instant::now();
        let status = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(dir)
            // The lab's snapshots are refreshed, never the tests' own.
            .env_remove("UPDATE_EXPECT")
            .env("CARGO_TERM_COLOR", "never")
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .status()
            .with_context(|| format!("cannot run sh -c {command:?}"))?;
        if vm::interrupted() {
            return Err(Interrupted.into());
        }
        let time = started.elapsed().as_secs_f64();
        println!(" done ({time:.1} s)");
        let output = fs::read_to_string(&log).unwrap_or_default();
        let status = status.code().unwrap_or(-1);
        grades.push(grade::grade_host(
            lab,
            i,
            status,
            &output,
            &log,
            time,
            grade::update_requested(),
        ));
    }
    Ok(grades)
}

/// Runs one lab: build, guest, grade; prints progress and the report.
pub fn run_lab(
    root: Option<&Path>,
    lab: &Lab,
    tc: &Toolchain,
    opts: &LabOptions,
) -> Result<LabReport> {
    let started = Instant::now();
    let color = color();
    let variant = if opts.solution {
        " (reference solution)"
    } else {
        ""
    };
    println!("{}: {}{variant}", lab.name, lab.config.title);
    match root.and_then(|r| crate::lab::chapter_heading(r, &lab.config.chapter)) {
        Some(heading) => println!("Read: {heading} (book/src/{})", lab.config.chapter),
        None => println!("Read: book/src/{}", lab.config.chapter),
    }
    // Steps for the debug kernel (`kernel = "debug"`, `failslab`) run only there.
    let lab = &lab.for_kernel(tc.debug);
    if tc.debug {
        println!("kernel: the debug kernel ({})", tc.abi);
    } else if lab.debug_steps() == 0 {
        let skipped = Lab::load(&lab.dir).map(|l| l.debug_steps()).unwrap_or(0);
        if skipped > 0 {
            println!("({skipped} more steps run on the debug kernel only: --kernel debug)");
        }
    }

    // Differential steps: this run's inputs, from --seed or the OS.
    let seed = lab
        .has_differential()
        .then(|| opts.seed.unwrap_or_else(crate::inputs::os_seed));
    let lab = &match seed {
        Some(seed) => lab.with_inputs(seed),
        None => lab.clone(),
    };
    if let Some(inputs) = &lab.config.inputs {
        println!(
            "inputs: {} (reproduce: --seed {})",
            inputs.describe(),
            inputs.seed
        );
    }

    let work = work_dir(root, lab, opts.solution);
    // Before anything of the student's is compiled or run: the rules for
    // student files (see crate::policy).
    // A run that stops before the guest boots: the build's outcome and the
    // steps as graded so far.
    let stopped = |build: BuildOutcome, steps: Vec<StepGrade>| {
        let report = LabReport {
            lab: lab.name.clone(),
            solution: opts.solution,
            build,
            steps,
            crash: None,
            timed_out: false,
            accel: None,
            boot_time: None,
            wall: started.elapsed(),
            console_log: None,
            seed,
        };
        print_report(&report, color);
        report
    };
    if let Some(build) = crate::policy::gate(lab, opts.solution, &work.join("build.log"))? {
        return Ok(stopped(build, grade::all_build_failed(lab)));
    }
    let mut host_steps = run_host_steps(root.unwrap_or(&lab.dir), lab, tc, opts.solution, &work)?;

    // The reference solution's modules for the differential steps, built
    // first so that the student's build is what stays in the lab folder.
    let ref_dir = opts.reference.clone().unwrap_or_else(|| work.join("ref"));
    if lab.has_differential() && opts.reference.is_some() {
        for m in &lab.config.modules {
            let ko = ref_dir.join(format!("{m}.ko"));
            if !ko.is_file() {
                anyhow::bail!("--reference: {} is missing", ko.display());
            }
        }
    } else if lab.has_differential() && !opts.solution {
        print!("build the reference solution ...");
        flush();
        let log = work.join("ref-build.log");
        let built = build(lab, tc, true, &log)?;
        if !built.ok {
            println!(" FAILED");
            anyhow::bail!(
                "the reference solution does not build (the differential steps need it): see {}",
                log.display()
            );
        }
        println!(" ok ({:.1} s)", built.time.as_secs_f64());
        keep_modules(lab, &ref_dir)?;
    }
    print!("build ...");
    flush();
    let log = work.join("build.log");
    let build = build(lab, tc, opts.solution, &log)?;
    if build.ok && lab.has_differential() && opts.solution && opts.reference.is_none() {
        keep_modules(lab, &ref_dir)?;
    }
    let secs = build.time.as_secs_f64();
    if !build.ok {
        println!(" FAILED ({secs:.1} s)");
        let text = fs::read_to_string(&build.log).unwrap_or_default();
        println!("--- last lines of {}", build.log.display());
        println!("{}", setup::tail(&text, BUILD_LOG_TAIL));
        println!("---");
        return Ok(stopped(
            build,
            [host_steps, grade::build_failed(lab)].concat(),
        ));
    }
    println!(" ok ({secs:.1} s)");

    let (accel, why) = accel::choose(opts.accel, &tc.vmlinuz, &tc.cache);
    let timeout = opts
        .timeout
        .or(lab.config.timeout)
        .unwrap_or(lab::DEFAULT_TIMEOUT_SECS);
    // KASAN, lockdep and kmemleak make the debug kernel about three times
    // slower, and it scans for leaks after the last step: the lab's own
    // limit (not --timeout) is tripled there.
    let timeout = match (tc.debug, opts.timeout) {
        (true, None) => timeout * 3,
        _ => timeout,
    };
    let guest_steps = lab.guest_steps();
    let first_guest = lab.first_guest_step();
    let guest_count = lab.guest_step_count();
    let steps = &lab.config.steps;
    let mut programs: Vec<(String, PathBuf)> = lab
        .config
        .programs
        .iter()
        .map(|p| (p.clone(), lab.dir.join(p)))
        .collect();
    if lab.has_failslab() {
        programs.push((
            crate::guesttools::FAILNTH.to_owned(),
            crate::guesttools::failnth()?,
        ));
    }
    let image_modules = crate::imagemods::resolve(&tc.modules_dir, &lab.config.image_modules)?;
    let cfg = GuestConfig {
        kernel: &tc.boot_kernel,
        modules: image_modules
            .into_iter()
            .map(|m| {
                (
                    format!("{}/{}", crate::imagemods::GUEST_DIR, m.stem),
                    m.path,
                )
            })
            .chain(
                lab.config
                    .modules
                    .iter()
                    .map(|m| (m.clone(), lab.dir.join(format!("{m}.ko")))),
            )
            .chain(
                lab.has_differential()
                    .then(|| {
                        lab.config.modules.iter().map(|m| {
                            let guest = format!("{}/{m}", lab::REF_DIR.trim_start_matches("/lab/"));
                            (guest, ref_dir.join(format!("{m}.ko")))
                        })
                    })
                    .into_iter()
                    .flatten(),
            )
            .collect(),
        programs,
        steps: &guest_steps,
        smp: lab.config.smp.unwrap_or(1),
        memory_mb: GUEST_MEMORY_MB,
        timeout: Duration::from_secs(timeout),
        accel,
        keep: opts.keep,
        extra_cmdline: if tc.debug { vm::DEBUG_CMDLINE } else { "" },
    };
    let total = steps.len();
    let mut on_progress = |p: Progress| match p {
        Progress::Booting => {
            println!("boot ... accelerator {accel}: {why}; time limit {timeout} s");
        }
        Progress::StepStarted(i) => match steps.get(first_guest + i) {
            Some(step) if first_guest + i < first_guest + guest_count => {
                println!("step {}/{total} {}", first_guest + i + 1, step.name);
            }
            // The reference solution's runs of the differential steps.
            _ => match guest_steps.get(i) {
                Some(step) => println!("reference run {}", step.name),
                None => println!("step {}", i + 1),
            },
        },
    };
    let run = vm::run(&cfg, &mut on_progress)?;
    if let Some(dir) = &run.kept_dir {
        println!("kept the guest files in {}", dir.display());
    }
    let timed_out = run.ending == Ending::TimedOut;
    let guest_grades =
        grade::grade_steps(lab, &run.transcript, timed_out, grade::update_requested());
    host_steps.extend(guest_grades);
    let mut steps = host_steps;
    // The whole console and result channel stay next to the build log.
    let console_log = work.join("console.log");
    let _ = fs::write(&console_log, &run.console);
    let _ = fs::write(work.join("results.log"), &run.results_text);
    // The debug kernel's tools say precisely what went wrong; their reports
    // come first. kmemleak's scan after the last step is only seen here.
    let debug_report = if tc.debug {
        console::find_reports(&run.console)
            .first()
            .map(|r| grade::Crash {
                line: r.line(),
                step: r.step.clone(),
                excerpt: r.excerpt.clone(),
            })
    } else {
        None
    };
    // Fault injection makes the allocator warn (with a stack dump) about the
    // failures it was asked for: those are not the module's bugs.
    let console = if tc.debug {
        console::without_injected_failure_warnings(&run.console)
    } else {
        run.console.clone()
    };
    // The guest numbers its steps from the first guest step.
    let crash = debug_report
        .or_else(|| grade::find_crash(&console))
        .map(|mut crash| {
            crash.step = crash.step.map(|(i, name)| (first_guest + i, name));
            crash
        });
    if let Some(crash) = &crash {
        grade::fail_reported_step(&mut steps, crash);
    }
    grade::apply_depends(lab, &mut steps);

    if timed_out {
        let at = match run.transcript.unfinished() {
            Some(i) => match lab.config.steps.get(first_guest + i) {
                Some(step) if i < guest_count => {
                    format!("in step {} ({})", first_guest + i + 1, step.name)
                }
                _ => format!(
                    "in the reference run {}",
                    guest_steps.get(i).map_or("", |s| s.name.as_str())
                ),
            },
            None if run.transcript.last_started().is_none() => "during boot".into(),
            None => "after the last step".into(),
        };
        if run.console.trim().is_empty() {
            println!("TIME-OUT after {timeout} s {at}; the kernel printed nothing on the console");
        } else {
            println!("TIME-OUT after {timeout} s {at}; last console lines:");
            println!("{}", setup::tail(&run.console, CONSOLE_TAIL));
        }
        println!("---");
    } else if !run.transcript.done && run.transcript.unfinished().is_none() && crash.is_none() {
        // The guest stopped before reporting anything (or QEMU failed).
        println!(
            "the guest stopped before the steps finished (qemu {}); last console lines:",
            run.qemu_status
                .map(|s| s.to_string())
                .unwrap_or_else(|| "killed".into())
        );
        println!("{}", setup::tail(&run.console, CONSOLE_TAIL));
        if !run.qemu_stderr.trim().is_empty() {
            println!("qemu said:\n{}", setup::tail(&run.qemu_stderr, 10));
        }
        println!("---");
    }

    let report = LabReport {
        lab: lab.name.clone(),
        solution: opts.solution,
        build,
        steps,
        crash,
        timed_out,
        accel: Some(accel),
        boot_time: run.boot_time,
        wall: started.elapsed(),
        console_log: Some(console_log),
        seed,
    };
    print_report(&report, color);
    Ok(report)
}

/// Builds the reference solution of `lab` (in its folder) and copies its
/// modules to `dir`, for runs given `--reference dir`; the log goes to
/// `log`.
pub fn build_reference(lab: &Lab, tc: &Toolchain, dir: &Path, log: &Path) -> Result<()> {
    let built = build(lab, tc, true, log)?;
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

fn rel(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Prints the PASS/FAIL lines, diffs, crash excerpt and score.
pub fn print_report(r: &LabReport, color: bool) {
    let (green, red, yellow, bold, reset) = if color {
        ("\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[1m", "\x1b[0m")
    } else {
        ("", "", "", "", "")
    };
    let width = r.steps.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in &r.steps {
        let time = s.time.map(|t| format!("  ({t:.2} s)")).unwrap_or_default();
        let (word, colour) = match &s.verdict {
            Verdict::Pass => ("PASS", green),
            Verdict::Updated => ("UPDATED", yellow),
            Verdict::Fail(_) => ("FAIL", red),
            Verdict::Skipped(_) => ("SKIP", yellow),
        };
        let why = match &s.verdict {
            Verdict::Fail(Failure::Mismatch { .. }) | Verdict::Pass => String::new(),
            Verdict::Updated => format!("  wrote {}", rel(&s.expected_path)),
            Verdict::Fail(Failure::MissingExpected) => format!(
                "  no {}: run with UPDATE_EXPECT=1 to create it",
                rel(&s.expected_path)
            ),
            Verdict::Fail(Failure::BuildFailed) => "  (build failed)".into(),
            Verdict::Fail(Failure::TimedOut) => "  (time-out)".into(),
            Verdict::Fail(Failure::GuestStopped) => "  (the guest stopped during this step)".into(),
            Verdict::Fail(Failure::NotRun) => "  (not run)".into(),
            Verdict::Fail(Failure::KernelReport) => {
                "  (the output matched, but the kernel reported a problem: see CRASH)".into()
            }
            Verdict::Skipped(dep) => {
                format!("  (skipped: it needs step {dep:?}, which did not pass)")
            }
        };
        println!(
            "{colour}{word:<5}{reset} {:02} {:<width$}{time}{why}",
            s.index + 1,
            s.name
        );
        if let Verdict::Fail(Failure::Mismatch { expected }) = &s.verdict {
            let actual = s.actual.as_deref().unwrap_or("");
            println!("      {red}--- expected {}{reset}", rel(&s.expected_path));
            println!("      {green}+++ actual{reset}");
            for line in grade::diff(expected, actual, color).lines() {
                println!("      {line}");
            }
        }
        if let (Verdict::Fail(_), Some(log)) = (&s.verdict, &s.log) {
            println!("      full output: {}", rel(log));
        }
        if let (Verdict::Fail(_), Some(hint)) = (&s.verdict, &s.hint) {
            println!("      {yellow}hint:{reset} {hint}");
        }
    }
    if let Some(c) = &r.crash {
        let at = match &c.step {
            Some((i, name)) => format!("during step {} ({name})", i + 1),
            None => "before the first step".into(),
        };
        println!("{red}CRASH{reset} the kernel reported a problem {at}:");
        for line in c.excerpt.lines() {
            println!("      {line}");
        }
    }
    let boot = r
        .boot_time
        .map(|b| format!(", boot {:.1} s", b.as_secs_f64()))
        .unwrap_or_default();
    let accel = r.accel.map(|a| format!(", {a}")).unwrap_or_default();
    let crash = if r.crash.is_some() {
        ", kernel crash"
    } else {
        ""
    };
    let verdict = if r.passed() {
        format!("{green}passed{reset}")
    } else {
        format!("{red}failed{reset}")
    };
    if let Some(seed) = r.seed {
        println!(
            "inputs: seed {seed} (checker lab {} --seed {seed} draws them again)",
            r.lab
        );
    }
    let (earned, max) = r.score();
    println!(
        "{bold}score: {}/{} steps, {earned}/{max} points{reset}{crash} -- {verdict} (total {:.1} s{boot}{accel})",
        r.passed_steps(),
        r.steps.len(),
        r.wall.as_secs_f64()
    );
    if !r.passed() {
        let logs: Vec<String> = [Some(&r.build.log), r.console_log.as_ref()]
            .into_iter()
            .flatten()
            .filter(|p| p.is_file())
            .map(|p| rel(p))
            .collect();
        if !logs.is_empty() {
            println!("logs: {}", logs.join(", "));
        }
    }
}

/// One row of `checker verify`.
#[derive(Debug, Clone)]
pub struct VerifyRow {
    /// Lab name.
    pub lab: String,
    /// The solution's run (a sample's only run).
    pub solution: LabReport,
    /// The skeleton's run; `None` for a sample, which has no exercise.
    pub skeleton: Option<LabReport>,
}

impl VerifyRow {
    /// Solution passes and skeleton (if any) fails.
    pub fn ok(&self) -> bool {
        self.solution.passed() && !self.skeleton.as_ref().is_some_and(LabReport::passed)
    }
}

/// `checker verify`: every lab's solution must pass, its skeleton must
/// fail; then every sample (`drivers/*/lab.toml`, built with a plain `make`)
/// must pass.
pub fn verify(root: &Path, tc: &Toolchain, base: &LabOptions) -> Result<Vec<VerifyRow>> {
    let mut rows = Vec::new();
    for dir in lab::all_labs(root)? {
        let lab = Lab::load(&dir)?;
        let mut reports = Vec::new();
        for solution in [true, false] {
            let opts = LabOptions {
                solution,
                ..base.clone()
            };
            println!();
            reports.push(run_lab(Some(root), &lab, tc, &opts)?);
        }
        let skeleton = reports.pop().expect("two runs");
        let solution = reports.pop().expect("two runs");
        rows.push(VerifyRow {
            lab: lab.name.clone(),
            solution,
            skeleton: Some(skeleton),
        });
    }
    for dir in lab::all_samples(root)? {
        let lab = Lab::load(&dir)?;
        // No `SOLUTION=1`: the sample is the only code there is.
        let opts = LabOptions {
            solution: false,
            ..base.clone()
        };
        println!();
        rows.push(VerifyRow {
            lab: lab.name.clone(),
            solution: run_lab(Some(root), &lab, tc, &opts)?,
            skeleton: None,
        });
    }
    Ok(rows)
}

fn summary(r: &LabReport) -> String {
    if !r.build.ok {
        return "fails (build)".into();
    }
    let crash = if r.crash.is_some() { ", crash" } else { "" };
    let word = if r.passed() { "passes" } else { "fails" };
    format!("{word} ({}/{}{crash})", r.passed_steps(), r.steps.len())
}

/// Prints the verify summary table.
pub fn print_verify(rows: &[VerifyRow]) {
    println!();
    println!(
        "{:<12} {:<22} {:<22} verdict",
        "lab", "solution", "skeleton"
    );
    for row in rows {
        println!(
            "{:<12} {:<22} {:<22} {}",
            row.lab,
            summary(&row.solution),
            row.skeleton
                .as_ref()
                .map_or_else(|| "(sample: none)".into(), summary),
            if row.ok() {
                "ok"
            } else if !row.solution.passed() {
                "WRONG: the solution must pass"
            } else {
                "WRONG: the skeleton must fail"
            }
        );
    }
    let ok = rows.iter().filter(|r| r.ok()).count();
    println!("verify: {ok}/{} labs as expected", rows.len());
}
