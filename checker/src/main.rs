//! `checker`: sets up the machine, runs and grades the labs.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

use checker::outcome::{Outcome, EXIT_CODES};
use checker::report::terminal::Terminal;
use checker::run::events::{JsonLines, Reporter};
use checker::run::{self, GuestArgs, LabRequest};
use checker::{tools::setup, tools::workspace};

/// Sets up the machine, builds a lab's kernel module, runs it in a QEMU
/// guest and grades each step against the lab's expected snapshots.
#[derive(Parser)]
#[command(name = "checker", version, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The book's mdBook preprocessor: solution pages without the skeleton
    /// markers, diagrams as figures (see checker::commands::mdbook).
    #[command(hide = true)]
    MdbookPreprocess {
        /// `supports RENDERER`, as mdBook asks first.
        args: Vec<String>,
    },
    /// Install what is missing; idempotent.
    ///
    /// Debian packages, kernel headers, the guest kernel, Rust components
    /// and the book's tools.
    Setup {
        /// Skip the book tools (mdbook, mdbook-linkcheck, the npm tools).
        #[arg(long)]
        no_book: bool,
        /// Also install Chromium, for the book's browser check.
        #[arg(long)]
        browser: bool,
    },
    /// Build a lab, run its steps in a guest and grade them.
    Lab {
        #[command(flatten)]
        request: LabRequest,
        /// Also write the result's JSON record to this file.
        #[arg(long, hide = true, value_name = "FILE")]
        result_json: Option<PathBuf>,
    },
    /// Boot a lab's guest with a shell instead of its steps.
    ///
    /// The lab is built as `lab` builds it; the guest's console is this
    /// terminal: your modules are in /lab, `exit` ends it.
    Shell {
        #[command(flatten)]
        request: LabRequest,
        /// Kill the guest after this many seconds (default: never).
        #[arg(long, value_name = "SECS")]
        limit: Option<u64>,
        /// Type the lines of this file into the shell instead of reading
        /// the terminal (for tests); the console still goes to stdout.
        #[arg(long, value_name = "FILE")]
        script: Option<PathBuf>,
        /// Start QEMU's gdbstub on DIR/gdb.sock; in the guest,
        /// /lab/gdb-symbols writes the modules' load addresses as gdb
        /// commands to DIR/symbols.gdb (`make gdb-NN`).
        #[arg(long, value_name = "DIR")]
        gdb: Option<PathBuf>,
    },
    /// A child run of `checker run`, `grade` or `fixtures`: reads its
    /// request (JSON) on standard input, streams its events (JSON lines)
    /// on standard output.
    #[command(hide = true)]
    ChildRun,
    /// Build the debug guest kernel, or say where the cached one is.
    ///
    /// KASAN, lockdep, kmemleak, failslab (`make vm-debug`), from the
    /// kernel source of the host's series or of `--guest`'s; then
    /// `checker lab lab-04 --kernel debug [--guest 6.12]` runs on it.
    VmDebug {
        /// Build it from this kernel series' source (default: the host's,
        /// 6.1 on Debian 12, 6.12 on Debian 13).
        #[arg(long = "guest", value_enum, value_name = "SERIES")]
        linux: Option<checker::tools::guest::Linux>,
    },
    /// CI's fresh start (`.ci/run`): purge every Debian package that a new
    /// machine does not have.
    ///
    /// The packages are those not listed in FILE (one package a line),
    /// everyone's who uses this machine: it refuses without `--yes`.
    #[command(hide = true)]
    ResetPackages {
        /// The machine image's package list.
        #[arg(long, value_name = "FILE")]
        image: PathBuf,
        /// Purge them: without it, the command refuses (exit code 2).
        #[arg(long)]
        yes: bool,
    },
    /// Run one lab, or every lab (--all), several at a time (-j), with
    /// reports.
    Run(checker::batch::jobs::RunArgs),
    /// Grade a folder of submissions (one folder or patch per student).
    Grade(checker::batch::gradedir::GradeArgs),
    /// Write a repository for students, without the answers.
    ///
    /// Into DIR (new or empty): skeletons, harness, steps and snapshots,
    /// the book without its solution pages, the drivers labs 08, 10 and 11
    /// build against in skeleton form, and the reference modules the
    /// differential steps load.
    ExportCourse {
        /// The new repository's folder.
        dir: PathBuf,
        /// Build and ship the reference modules of only these labs (default:
        /// every lab with differential steps; `--references none` for none).
        #[arg(long, value_delimiter = ',', value_name = "LAB,...")]
        references: Option<Vec<String>>,
        /// The kernels to build the reference modules for: `default` (the
        /// guest kernel `checker lab` uses here), `6.1`, `6.12`, `debug` (the
        /// debug kernel of the host's series, built first when not cached),
        /// `debug-6.1`, `debug-6.12`. A student's run on a kernel the export
        /// has no references for is refused.
        #[arg(
            long,
            value_delimiter = ',',
            value_name = "KERNEL,...",
            default_value = "default"
        )]
        kernels: Vec<String>,
        /// Only check DIR, exported before, for answers (a marker line, or a
        /// line of an answer that the course has nowhere else).
        #[arg(long)]
        audit: bool,
    },
    /// Run the broken-module fixtures and compare their verdicts.
    Fixtures(checker::batch::fixtures::FixturesArgs),
    /// Check the set-up and say what is wrong and how to fix it.
    Doctor,
    /// Rebuild and re-grade a lab every time one of its sources is saved.
    Watch(checker::commands::watch::WatchArgs),
    /// Start a driver of your own, outside this repository.
    ///
    /// Copies drivers/template to DIR with the path of this workbook's
    /// kernel crate filled in; then `checker lab DIR` builds and grades it.
    NewDriver {
        /// The new driver's folder (must not exist, or be empty).
        dir: PathBuf,
    },
    /// Turn a submission's results.json into Gradescope's.
    ///
    /// Reads the report of `checker grade` or `checker run` and writes the
    /// results.json Gradescope's autograder reads.
    Gradescope {
        /// The checker's report.
        report: PathBuf,
        /// Only this submission's entries (needed when there are several).
        #[arg(long)]
        student: Option<String>,
        /// Gradescope's visibility of every test.
        #[arg(long, default_value = "visible", value_parser = checker::report::gradescope::VISIBILITIES)]
        visibility: String,
        /// Write here instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Generate the module that runs the kernel crate's doc examples.
    ///
    /// It runs them in the guest and reports each in KTAP; it goes to
    /// target/doctests, and `make doctests` grades it.
    Doctests,
    /// Build the API reference of the kernel and module-macro crates.
    ///
    /// Into target/api (`make doc`; `make book` publishes it as the book's
    /// api/).
    Doc,
    /// Print and write the size tables of the Rust drivers and their C twins.
    ///
    /// The semaphore and its C twin (the RFC's table) to
    /// book/src/generated/sizes.md; the Rust Binder driver against
    /// binder_linux.ko likewise, to binder-sizes.md, and rnvme against
    /// nvme.ko + nvme-core.ko, to nvme-sizes.md.
    Sizes {
        /// Against this guest kernel series (default: the host's); another
        /// series' tables go to sizes-<SERIES>.md and so on, committed.
        #[arg(long = "guest", value_enum, value_name = "SERIES")]
        linux: Option<checker::tools::guest::Linux>,
    },
    /// Measure the Rust Binder driver against Debian's C binder.
    ///
    /// In one guest boot (C, Rust, Rust, C); writes
    /// book/src/generated/binder-bench.md.
    BenchBinder {
        /// Calls per latency measurement and per throughput pair.
        #[arg(long, default_value_t = 2000)]
        count: u32,
        /// ABBA rounds of C, Rust, Rust, C.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
        rounds: u32,
        /// Write the table here instead of the book's generated folder.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// On this guest kernel series (default: the host's); another
        /// series' table goes to binder-bench-<SERIES>.md.
        #[arg(long = "guest", value_enum, value_name = "SERIES")]
        linux: Option<checker::tools::guest::Linux>,
    },
    /// Measure the Rust NVMe driver (rnvme) against Debian's C nvme.
    ///
    /// On one controller in one guest boot (rounds of C, Rust, Rust, C);
    /// writes book/src/generated/nvme-bench.md.
    BenchNvme {
        /// Seconds per measurement (three per run, four runs a round).
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// Rounds of C, Rust, Rust, C.
        #[arg(long, default_value_t = 3)]
        rounds: u32,
        /// Write the table here instead of the book's generated folder.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// On this guest kernel series (default: the host's); another
        /// series' table goes to nvme-bench-<SERIES>.md.
        #[arg(long = "guest", value_enum, value_name = "SERIES")]
        linux: Option<checker::tools::guest::Linux>,
    },
    /// Print the kernel tree modules are built against (`KDIR`): the
    /// headers of Debian's current kernel ABI (`module.mk` asks for it).
    #[command(hide = true)]
    Kdir {
        /// The tree of this guest kernel series instead (`GUEST=6.12`).
        #[arg(long = "guest", value_enum, value_name = "SERIES")]
        linux: Option<checker::tools::guest::Linux>,
    },
    /// Clippy over every lab's solution, sample and Rust fixture.
    ///
    /// Built through Kbuild, warnings denied (`make kernel-clippy`).
    Clippy,
    /// `make clean` in every lab, sample and Rust fixture (`make clean`).
    Clean,
    /// Set the workbook up from nothing on a fresh Debian 13 root, in a
    /// chroot, and grade lab 01 there.
    ///
    /// debootstrap trixie (cached; --fresh for a new one), a clean clone
    /// of HEAD, .devcontainer/bootstrap.sh inside, then `make lab-01` must
    /// fail and `make lab-01 SOLUTION=1` pass (`make chroot-check`; root).
    ChrootCheck(checker::commands::chroot::ChrootArgs),
    /// Check every lab's solution and skeleton, and every sample.
    ///
    /// A lab's solution must pass, and no step that scores may pass on its
    /// skeleton; then every sample (drivers/*/lab.toml) must pass.
    Verify {
        #[command(flatten)]
        guest: GuestArgs,
        /// Only these labs and samples (default: all).
        labs: Vec<String>,
    },
}

/// Who each listed command is for, in the order `--help` lists them. A
/// command in none is plumbing (for the Makefile, CI, mdBook, the batch
/// runs' children) and hidden; a test holds the two together.
const AUDIENCES: [(&str, &[&str]); 3] = [
    (
        "Students (and a driver of your own)",
        &[
            "lab",
            "watch",
            "shell",
            "doctor",
            "setup",
            "vm-debug",
            "new-driver",
        ],
    ),
    (
        "Instructors",
        &["grade", "gradescope", "run", "export-course"],
    ),
    (
        "Maintainers",
        &[
            "verify",
            "fixtures",
            "sizes",
            "bench-binder",
            "bench-nvme",
            "doc",
            "doctests",
            "clippy",
            "clean",
            "chroot-check",
        ],
    ),
];

/// The command line, its commands listed by audience in `--help`.
fn command() -> clap::Command {
    let cmd = Cli::command();
    let width = AUDIENCES
        .iter()
        .flat_map(|(_, names)| names.iter().map(|n| n.len()))
        .max()
        .unwrap_or(0);
    let mut listing = String::new();
    for (audience, names) in AUDIENCES {
        listing += &format!("{audience}:\n");
        for name in names {
            let about = cmd
                .find_subcommand(name)
                .and_then(|c| c.get_about())
                .map(|a| a.to_string())
                .unwrap_or_default();
            listing += &format!("  {name:width$}  {about}\n");
        }
        listing += "\n";
    }
    cmd.help_template(format!(
        "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{listing}\
         `checker help COMMAND` (or COMMAND --help) tells more of each.\n\n\
         Options:\n{{options}}{{after-help}}"
    ))
}

fn main() -> ExitCode {
    // clap's own usage errors exit 2 too.
    let cli = Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|e| e.exit());
    let outcome = match real_main(cli) {
        Ok(outcome) => outcome,
        Err(e) if checker::outcome::is_interrupted(&e) => {
            eprintln!("checker: interrupted");
            Outcome::Interrupted
        }
        Err(e) => {
            eprintln!("checker: error: {e:#}");
            Outcome::Error
        }
    };
    ExitCode::from(outcome.code())
}

fn real_main(cli: Cli) -> Result<Outcome> {
    use checker::{batch, commands, tools};
    // The other commands say whether what they graded passed (true for a
    // command that grades nothing and returns).
    let passed = match cli.command {
        Cmd::Setup { no_book, browser } => setup_cmd(no_book, browser),
        Cmd::Lab {
            request,
            result_json,
        } => {
            // `checker lab` restores a saved guest (`--cold` boots).
            let request = LabRequest {
                saved_guest: true,
                ..request
            };
            lab(&request, &mut Terminal::stdout(), result_json.as_deref())
        }
        Cmd::Shell {
            request,
            limit,
            script,
            gdb,
        } => shell(&request, limit, script.as_deref(), gdb.as_deref()),
        Cmd::ChildRun => child_run(),
        Cmd::VmDebug { linux } => vm_debug(linux),
        Cmd::ResetPackages { image, yes } => reset_packages(&image, yes),
        Cmd::NewDriver { dir } => new_driver(&dir),
        Cmd::Gradescope {
            report,
            student,
            visibility,
            out,
        } => gradescope(&report, student.as_deref(), &visibility, out.as_deref()),
        Cmd::Doctests => doctests(),
        Cmd::Doc => done(commands::docs::build(
            &workspace::root()?,
            &run::ensure_quiet()?,
        )),
        Cmd::Sizes { linux } => sizes(linux),
        Cmd::BenchBinder {
            count,
            rounds,
            out,
            linux,
        } => bench_binder(count, rounds, out, linux),
        Cmd::BenchNvme {
            seconds,
            rounds,
            out,
            linux,
        } => bench_nvme(seconds, rounds, out, linux),
        Cmd::Verify { guest, labs } => verify(guest, &labs),
        Cmd::Run(args) => return batch::jobs::run_cmd(&args),
        Cmd::Grade(args) => return batch::gradedir::grade_cmd(&args),
        Cmd::ExportCourse {
            dir,
            references,
            kernels,
            audit,
        } => export_course(&dir, references, &kernels, audit),
        Cmd::Fixtures(args) => batch::fixtures::run_cmd(&args),
        // The doctor grades nothing: what it finds wrong is the set-up.
        Cmd::Doctor if commands::doctor::run()? => Ok(true),
        Cmd::Doctor => return Ok(Outcome::Error),
        Cmd::Kdir { linux: None } => {
            println!("{}", tools::guest::host_kdir()?.display());
            Ok(true)
        }
        Cmd::Kdir { linux: Some(l) } => {
            let tc = checker::tools::setup::guest_toolchain(
                Some(l),
                run::ensure_quiet()?,
                &workspace::root(),
            )?;
            println!("{}", tc.kdir.display());
            Ok(true)
        }
        Cmd::Clippy => done(commands::clippy::run(
            &workspace::root()?,
            &run::ensure_quiet()?,
        )),
        Cmd::Clean => done(tools::exec::clean(&workspace::root()?)),
        Cmd::MdbookPreprocess { args } => mdbook_preprocess(&args),
        Cmd::Watch(args) => commands::watch::run(&args),
        Cmd::ChrootCheck(args) => {
            vm::install_interrupt_handler()?;
            commands::chroot::run(&workspace::root()?, &vm::cache_root(), &args)
        }
    };
    passed.map(Outcome::graded)
}

/// A command that succeeds when it returns.
fn done<T>(r: Result<T>) -> Result<bool> {
    r.map(|_| true)
}

/// `checker setup`.
fn setup_cmd(no_book: bool, browser: bool) -> Result<bool> {
    let started = std::time::Instant::now();
    setup::ensure(&setup::Options {
        book: !no_book,
        browser,
        verbose: true,
    })?;
    println!("setup: done ({:.1} s)", started.elapsed().as_secs_f64());
    Ok(true)
}

/// `checker child-run`: the request on standard input, the events on
/// standard output.
fn child_run() -> Result<bool> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("cannot read the request")?;
    let req: LabRequest = serde_json::from_str(&line).context("invalid request")?;
    lab(&req, &mut JsonLines(std::io::stdout()), None)
}

/// `checker vm-debug [--guest SERIES]`.
fn vm_debug(linux: Option<checker::tools::guest::Linux>) -> Result<bool> {
    use checker::tools::debugkernel;
    vm::install_interrupt_handler()?;
    let started = std::time::Instant::now();
    let series = linux.unwrap_or_else(debugkernel::host_series);
    let dk = debugkernel::ensure(&vm::cache_root(), series)?;
    println!(
        "vm-debug: ready ({:.1} s): kernel tree {}",
        started.elapsed().as_secs_f64(),
        dk.tree().display()
    );
    Ok(true)
}

/// `checker new-driver DIR`.
fn new_driver(dir: &Path) -> Result<bool> {
    checker::commands::newdriver::create(&workspace::root()?, dir)?;
    println!(
        "new-driver: {} (build and grade it with `cargo run -q -p checker -- lab {}`)",
        dir.display(),
        dir.display()
    );
    Ok(true)
}

/// `checker export-course DIR`.
fn export_course(
    dir: &Path,
    references: Option<Vec<String>>,
    kernels: &[String],
    audit: bool,
) -> Result<bool> {
    use checker::commands::export;
    let root = workspace::root()?;
    if audit {
        let found = export::audit_cmd(&root, dir)?;
        for f in &found {
            println!("export-course: {f}");
        }
        println!(
            "export-course: audit of {}: {}",
            dir.display(),
            if found.is_empty() {
                "no answer found"
            } else {
                "answers found"
            }
        );
        return Ok(found.is_empty());
    }
    vm::install_interrupt_handler()?;
    let references = references.map(|r| r.into_iter().filter(|l| l != "none").collect());
    let opts = export::Options { references };
    let started = std::time::Instant::now();
    let toolchains = match &opts.references {
        Some(only) if only.is_empty() => Vec::new(),
        _ => export_toolchains(kernels, &root)?,
    };
    let done = export::export(&root, dir, &opts, &toolchains, &mut |line| {
        println!("{line}")
    })?;
    println!(
        "export-course: {} ({} files, {:.1} MB, {} in skeleton form, {} book pages left out, \
         reference modules of {} labs) in {:.1} s; `git init` it and push it as the students' \
         starter repository",
        dir.display(),
        done.files,
        done.bytes as f64 / 1e6,
        done.skeletons.len(),
        done.pages_left_out.len(),
        done.references.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(true)
}

/// The toolchains of `export-course --kernels`, one per kernel ABI.
fn export_toolchains(kernels: &[String], root: &Path) -> Result<Vec<setup::Toolchain>> {
    use checker::tools::debugkernel::KernelChoice;
    use checker::tools::guest::Linux;
    let mut out: Vec<setup::Toolchain> = Vec::new();
    for name in kernels {
        let base = run::ensure_quiet()?;
        let root = Ok(root.to_path_buf());
        let tc = match name.as_str() {
            "default" => base,
            "6.1" => checker::tools::setup::guest_toolchain(Some(Linux::V6_1), base, &root)?,
            "6.12" => checker::tools::setup::guest_toolchain(Some(Linux::V6_12), base, &root)?,
            "debug" | "debug-6.1" | "debug-6.12" => checker::tools::debugkernel::toolchain_for(
                KernelChoice::Debug,
                name.strip_prefix("debug-").and_then(Linux::of),
                base,
                root.as_ref().expect("set above"),
            )?,
            other => anyhow::bail!(
                "--kernels: no kernel named {other:?} (default, 6.1, 6.12, debug, debug-6.1 or \
                 debug-6.12)"
            ),
        };
        if !out.iter().any(|t| t.abi == tc.abi) {
            out.push(tc);
        }
    }
    Ok(out)
}

/// `checker doctests`.
fn doctests() -> Result<bool> {
    let root = workspace::root()?;
    let dest = root.join("target/doctests");
    let n = checker::commands::doctests::generate(&root, &dest)?;
    println!(
        "doctests: {n} examples in {}",
        dest.join("src/lib.rs").display()
    );
    Ok(true)
}

/// `checker sizes`.
fn sizes(linux: Option<checker::tools::guest::Linux>) -> Result<bool> {
    let root = workspace::root()?;
    if root
        .join(checker::commands::export::STUDENT_COURSE)
        .exists()
    {
        // Its drivers are skeletons: the tables would measure those.
        println!(
            "sizes: a students' repository keeps the size tables of the course's finished \
             drivers (book/src/generated/, from checker export-course); nothing measured"
        );
        return Ok(true);
    }
    bench(linux, |root, tc, other| {
        use checker::commands::sizes;
        let mut out = sizes::run(root, tc, other)?;
        for table in [
            sizes::binder(root, tc, other)?,
            sizes::nvme(root, tc, other)?,
        ]
        .into_iter()
        .flatten()
        {
            out.push('\n');
            out.push_str(&table);
        }
        Ok(out)
    })
}

/// `checker bench-binder`.
fn bench_binder(
    count: u32,
    rounds: u32,
    out: Option<PathBuf>,
    linux: Option<checker::tools::guest::Linux>,
) -> Result<bool> {
    bench(linux, |root, tc, series| {
        let out = out.or(series.map(|s| generated(root, "binder-bench", s)));
        let opts = checker::commands::binderbench::BinderBench { count, rounds, out };
        checker::commands::binderbench::run(root, tc, &opts)
    })
}

/// `checker bench-nvme`.
fn bench_nvme(
    seconds: f64,
    rounds: u32,
    out: Option<PathBuf>,
    linux: Option<checker::tools::guest::Linux>,
) -> Result<bool> {
    bench(linux, |root, tc, series| {
        let out = out.or(series.map(|s| generated(root, "nvme-bench", s)));
        let opts = checker::commands::nvmebench::NvmeBench {
            seconds,
            rounds,
            out,
        };
        checker::commands::nvmebench::run(root, tc, &opts)
    })
}

/// `book/src/generated/<stem>-<series>.md`: a table of a series other than
/// the host's, beside the host's `<stem>.md`.
fn generated(root: &Path, stem: &str, series: checker::tools::guest::Linux) -> PathBuf {
    checker::commands::sizes::generated_path(root, stem, Some(series))
}

/// Runs a benchmark on this workspace with the toolchain of the guest
/// series `linux` (default: the host's) and prints its table; `measure`
/// gets the series when it is not the host's.
fn bench(
    linux: Option<checker::tools::guest::Linux>,
    measure: impl FnOnce(
        &Path,
        &setup::Toolchain,
        Option<checker::tools::guest::Linux>,
    ) -> Result<String>,
) -> Result<bool> {
    vm::install_interrupt_handler()?;
    let root = workspace::root()?;
    let base = run::ensure_quiet()?;
    let host = base.abi.clone();
    let tc = checker::tools::setup::guest_toolchain(linux, base, &Ok(root.clone()))?;
    let other = linux.filter(|_| tc.abi != host);
    println!("kernel: {}", tc.abi);
    print!("{}", measure(&root, &tc, other)?);
    Ok(true)
}

/// `checker verify`.
fn verify(guest: GuestArgs, labs: &[String]) -> Result<bool> {
    vm::install_interrupt_handler()?;
    let root = workspace::root()?;
    let tc = checker::tools::setup::guest_toolchain(
        guest.linux,
        run::ensure_quiet()?,
        &Ok(root.clone()),
    )?;
    let opts = guest.lab_options(true, false)?;
    let rows = run::verify(&root, &tc, &opts, labs, &mut Terminal::stdout())?;
    print!("{}", run::verify_table(&rows));
    Ok(!rows.is_empty() && rows.iter().all(|r| r.ok()))
}

/// `checker mdbook-preprocess`: the book's preprocessor.
fn mdbook_preprocess(args: &[String]) -> Result<bool> {
    if args.first().map(String::as_str) == Some("supports") {
        return Ok(true);
    }
    let mut input = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)?;
    print!("{}", checker::commands::mdbook::preprocess(&input)?);
    Ok(true)
}

/// `checker lab` (and a child run): runs the lab `req` names, reporting
/// to `out`; with `result_json`, writes the result's JSON record there.
fn lab(req: &LabRequest, out: &mut dyn Reporter, result_json: Option<&Path>) -> Result<bool> {
    vm::install_interrupt_handler()?;
    let result = run::run_request(req, out)?;
    if let Some(path) = result_json {
        checker::report::LabResult::from_run(&result).write(path)?;
    }
    Ok(result.passed())
}

/// `checker shell`: see [`run::shell`].
fn shell(
    request: &LabRequest,
    limit: Option<u64>,
    script: Option<&Path>,
    gdb: Option<&Path>,
) -> Result<bool> {
    vm::install_interrupt_handler()?;
    let script = script
        .map(|f| std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display())))
        .transpose()?;
    let limit = limit.map(std::time::Duration::from_secs);
    run::shell(
        request,
        limit,
        script.as_deref(),
        gdb,
        &mut Terminal::stdout(),
    )
}

/// `checker reset-packages --image FILE --yes`.
fn reset_packages(image: &Path, yes: bool) -> Result<bool> {
    if !yes {
        anyhow::bail!(
            "reset-packages purges every Debian package not listed in {} from this \
             machine, for everyone who uses it (CI's fresh start, .ci/run): give --yes",
            image.display()
        );
    }
    let list = std::fs::read_to_string(image)
        .with_context(|| format!("cannot read {}", image.display()))?;
    let started = std::time::Instant::now();
    let purged = setup::reset_packages(&list)?;
    println!(
        "reset-packages: purged {} packages not on a new machine ({:.1} s){}{}",
        purged.len(),
        started.elapsed().as_secs_f64(),
        if purged.is_empty() { "" } else { ": " },
        purged.join(" ")
    );
    Ok(true)
}

/// `checker gradescope REPORT`.
fn gradescope(
    report: &Path,
    student: Option<&str>,
    visibility: &str,
    out: Option<&Path>,
) -> Result<bool> {
    let text = std::fs::read_to_string(report)
        .with_context(|| format!("cannot read {}", report.display()))?;
    let doc = checker::report::gradescope::convert(&text, student, visibility)?;
    match out {
        Some(path) => {
            std::fs::write(path, doc).with_context(|| format!("cannot write {}", path.display()))?
        }
        None => print!("{doc}"),
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command `--help` would show is in exactly one audience, and
    /// every name there is such a command: a new command cannot go
    /// unlisted, nor plumbing be listed.
    #[test]
    fn every_listed_command_has_one_audience() {
        let mut cmd = command();
        cmd.build();
        let mut visible: Vec<&str> = cmd
            .get_subcommands()
            .filter(|c| !c.is_hide_set() && c.get_name() != "help")
            .map(|c| c.get_name())
            .collect();
        let mut listed: Vec<&str> = AUDIENCES
            .iter()
            .flat_map(|(_, n)| n.iter().copied())
            .collect();
        visible.sort_unstable();
        listed.sort_unstable();
        assert_eq!(listed, visible);
        for plumbing in ["kdir", "mdbook-preprocess", "child-run", "reset-packages"] {
            let c = cmd.find_subcommand(plumbing).expect("still callable");
            assert!(c.is_hide_set(), "{plumbing} is listed");
        }
    }

    /// The top-level help lists the audiences with each command's summary,
    /// and no plumbing.
    #[test]
    fn help_lists_commands_by_audience() {
        let help = command().render_help().to_string();
        let students = help.find("Students").expect("students");
        let instructors = help.find("Instructors:").expect("instructors");
        let maintainers = help.find("Maintainers:").expect("maintainers");
        assert!(
            students < instructors && instructors < maintainers,
            "{help}"
        );
        let lab = help.find("  lab ").expect("lab listed");
        assert!(students < lab && lab < instructors, "{help}");
        assert!(help.contains("Build a lab, run its steps in a guest and grade them"));
        for plumbing in ["kdir", "mdbook-preprocess", "child-run", "reset-packages"] {
            assert!(!help.contains(plumbing), "{plumbing} in\n{help}");
        }
    }

    /// `run` and `grade` take the report folder by one name; `run`'s old
    /// `--report` still parses (CI workflows of courses use it).
    #[test]
    fn the_report_folder_has_one_flag() {
        for args in [
            ["checker", "run", "--all", "--out", "r"],
            ["checker", "run", "--all", "--report", "r"],
        ] {
            let cli = Cli::try_parse_from(args).expect("parses");
            let Cmd::Run(run) = cli.command else {
                panic!("not run")
            };
            assert_eq!(run.out.as_deref(), Some(Path::new("r")));
        }
        let cli = Cli::try_parse_from(["checker", "grade", "subs", "--out", "r"]).expect("parses");
        assert!(matches!(cli.command, Cmd::Grade(g) if g.out.as_deref() == Some(Path::new("r"))));
        let help = command()
            .find_subcommand_mut("run")
            .expect("run")
            .render_help()
            .to_string();
        assert!(
            help.contains("--out <DIR>") && !help.contains("--report"),
            "{help}"
        );
    }
}
