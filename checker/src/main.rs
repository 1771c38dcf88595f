//! `checker`: sets up the machine, runs and grades the labs.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use checker::accel::AccelChoice;
use checker::lab::Lab;
use checker::run::{self, LabOptions};
use checker::{setup, vm, workspace};

/// Sets up the machine, builds a lab's kernel module, runs it in a QEMU
/// guest and grades each step against the lab's expected snapshots.
#[derive(Parser)]
#[command(name = "checker", version)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Install what is missing (Debian packages, kernel headers, guest
    /// kernel, Rust components, book tools); idempotent.
    Setup {
        /// Skip the book tools (mdbook, mdbook-linkcheck).
        #[arg(long)]
        no_book: bool,
    },
    /// Build a lab, run its steps in a guest and grade them.
    Lab {
        /// Lab name, e.g. lab-01.
        name: String,
        /// Build the reference solution (SOLUTION=1) instead of the student's code.
        #[arg(long)]
        solution: bool,
        /// Time limit of the guest run in seconds (default: lab.toml, else 60).
        #[arg(long, value_name = "SECS")]
        timeout: Option<u64>,
        /// Accelerator (default: CHECKER_ACCEL, else auto).
        #[arg(long, value_enum)]
        accel: Option<AccelChoice>,
        /// Keep the guest's temporary folder (initramfs, console and result logs).
        #[arg(long)]
        keep: bool,
        /// Use this lab folder instead of labs/<name> (for testing the checker).
        #[arg(long, hide = true, value_name = "PATH")]
        lab_dir: Option<PathBuf>,
    },
    /// Check every lab: its solution must pass and its skeleton must fail.
    Verify {
        /// Time limit of each guest run in seconds.
        #[arg(long, value_name = "SECS")]
        timeout: Option<u64>,
        /// Accelerator (default: CHECKER_ACCEL, else auto).
        #[arg(long, value_enum)]
        accel: Option<AccelChoice>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) if e.is::<vm::Interrupted>() => {
            eprintln!("checker: interrupted");
            ExitCode::from(130)
        }
        Err(e) => {
            eprintln!("checker: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn real_main(cli: Cli) -> Result<bool> {
    match cli.command {
        Cmd::Setup { no_book } => {
            let started = std::time::Instant::now();
            setup::ensure(&setup::Options {
                book: !no_book,
                verbose: true,
            })?;
            println!("setup: done ({:.1} s)", started.elapsed().as_secs_f64());
            Ok(true)
        }
        Cmd::Lab {
            name,
            solution,
            timeout,
            accel,
            keep,
            lab_dir,
        } => {
            vm::install_interrupt_handler()?;
            let root = workspace::root();
            let dir = match lab_dir {
                Some(d) => d,
                None => root
                    .as_ref()
                    .map_err(|e| anyhow::anyhow!("{e}"))?
                    .join("labs")
                    .join(&name),
            };
            if !dir.join("lab.toml").is_file() {
                let known = root
                    .as_ref()
                    .ok()
                    .and_then(|r| checker::lab::all_labs(r).ok())
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
            let mut lab = Lab::load(&dir)?;
            lab.name = name;
            let tc = ensure_quiet()?;
            let opts = LabOptions {
                solution,
                timeout,
                accel: run::accel_choice(accel)?,
                keep,
            };
            let report = run::run_lab(root.as_deref().ok(), &lab, &tc, &opts)?;
            Ok(report.passed())
        }
        Cmd::Verify { timeout, accel } => {
            vm::install_interrupt_handler()?;
            let root = workspace::root()?;
            let tc = ensure_quiet()?;
            let opts = LabOptions {
                solution: true,
                timeout,
                accel: run::accel_choice(accel)?,
                keep: false,
            };
            let rows = run::verify(&root, &tc, &opts)?;
            run::print_verify(&rows);
            Ok(!rows.is_empty() && rows.iter().all(|r| r.ok()))
        }
    }
}

/// Setup without the book tools, printing only what it changes.
fn ensure_quiet() -> Result<setup::Toolchain> {
    setup::ensure(&setup::Options {
        book: false,
        verbose: false,
    })
    .context("setup failed")
}
