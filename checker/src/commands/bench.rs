//! What the driver benchmarks share (`checker bench-binder`,
//! `checker bench-nvme`): one guest boot whose steps must all pass, their
//! outputs, and the ratios of the tables.

use std::fs;
use std::path::Path;

use ::vm::{Guest, Progress};
use anyhow::{bail, Context, Result};

/// The drivers of one benchmark round, in the order they run (ABBA):
/// short rounds one after another spread a burst of host load over both.
pub const ABBA: [Driver; 4] = [Driver::C, Driver::Rust, Driver::Rust, Driver::C];

/// Which driver a run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// Debian's C driver.
    C,
    /// This project's Rust driver.
    Rust,
}

/// The name of run `i` (0-based, in [`ABBA`]) of round `r` (0-based):
/// `c-1a`, `rust-1a`, `rust-1b`, `c-1b`.
pub fn run_name(r: usize, i: usize) -> String {
    let driver = match ABBA[i] {
        Driver::C => "c",
        Driver::Rust => "rust",
    };
    let half = if i < 2 { 'a' } else { 'b' };
    format!("{driver}-{}{half}", r + 1)
}

/// The host's one-minute load average: under TCG the guest's CPUs are
/// host threads, so other work on the host moves every figure.
pub fn host_load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

/// `a / b`, or NaN when `b` is 0.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        f64::NAN
    } else {
        a / b
    }
}

/// Boots `guest`, saying `tool: STEP` as each step starts, and returns
/// every step's output; a step that did not pass ends the benchmark with
/// its output and the console's tail.
pub fn run_steps(tool: &str, guest: &Guest) -> Result<Vec<String>> {
    let run = vm::run(guest, &mut |p| {
        if let Progress::StepStarted(i) = p {
            if let Some(s) = guest.steps.get(i) {
                println!("{tool}: {}", s.name);
            }
        }
    })?;
    let mut outputs = Vec::new();
    for (i, step) in guest.steps.iter().enumerate() {
        let record = run.transcript.step(i);
        let output = record.and_then(|r| r.output.clone()).unwrap_or_default();
        if record.and_then(|r| r.status) != Some(0) {
            bail!(
                "{tool}: step {} did not pass ({:?}):\n{output}\n--- console tail\n{}",
                step.name,
                run.ending,
                vm::console::tail(&run.console, 30)
            );
        }
        outputs.push(output);
    }
    Ok(outputs)
}

/// Writes a benchmark's table to `out`, making its folder.
pub fn write_table(out: &Path, table: &str) -> Result<()> {
    if let Some(parent) = out.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(out, table).with_context(|| format!("cannot write {}", out.display()))
}
