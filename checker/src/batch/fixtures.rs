//! `checker fixtures`: the checker's own broken modules.
//!
//! Each folder `checker/fixtures/<name>/` is a small lab (a `lab.toml`, a
//! module, `expected/` snapshots) whose module misbehaves on purpose: it
//! oopses, panics, hangs, floods the log, refuses to unload, forges the
//! checker's output or powers the guest off. `verdict.txt` holds the
//! verdict it must get, `kind [at step NN (name)]; E/P points` (see
//! [`crate::report::Verdict::short`]); `checker fixtures --update` rewrites
//! it from the run (read the diff). The list, with what each module does,
//! is in `checker/fixtures/README.md`.
//!
//! The runs use a temporary folder of their own (`TMPDIR`); after the last
//! run it must be empty and no process may still use it, which shows that
//! every QEMU was stopped and every temporary folder removed. The fixture
//! `healthy` runs last, after all the broken ones, and must pass.
//!
//! `checker fixtures --kernel debug` runs, on the debug kernel, the
//! fixtures that hold a `debug-verdict.txt`: the bugs Debian's kernel cannot
//! see, which KASAN, lockdep, kmemleak or the atomic-sleep check must catch.
//! Their verdict line also names the report ([`report_headline`]), so a run
//! that fails for another reason does not count.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::batch::jobs::{self, Job};
use crate::report::{Entry, LabResult};
use crate::run::LabRequest;
use crate::tools::debugkernel::KernelChoice;
use crate::{tools::debugkernel, tools::setup, tools::workspace};

pub use crate::tools::discovery::{all_fixtures, HEALTHY};

/// The verdict file of a fixture for each guest kernel.
pub fn verdict_file(kernel: KernelChoice) -> &'static str {
    match kernel {
        KernelChoice::Debian => "verdict.txt",
        KernelChoice::Debug => "debug-verdict.txt",
    }
}

/// `checker fixtures`.
#[derive(Debug, Clone, clap::Args)]
pub struct FixturesArgs {
    /// Fixtures to run (default: all).
    pub names: Vec<String>,
    /// Runs at once (default: the number of CPUs).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Write each fixture's verdict.txt (debug-verdict.txt) from this run.
    #[arg(long)]
    pub update: bool,
    /// Guest kernel: Debian's (every fixture), or the debug kernel (the
    /// fixtures with a debug-verdict.txt).
    #[arg(long, value_enum, default_value_t)]
    pub kernel: KernelChoice,
}

/// The verdict line compared with `verdict.txt` (Debian's kernel) or
/// `debug-verdict.txt`, which also names the report that decided it.
pub fn verdict_line(r: &LabResult, kernel: KernelChoice) -> String {
    let line = format!("{}; {} points", r.verdict.short(), r.score);
    match (kernel, &r.verdict.line) {
        (KernelChoice::Debug, Some(report)) => format!("{line}; {}", report_headline(report)),
        _ => line,
    }
}

/// The stable start of a crash line: its words up to the first one that
/// holds a number (an address, a PID, an offset, a line number), without a
/// trailing `in`, `at` or colon. `KASAN: BUG: KASAN: use-after-free in
/// fx_init+0x98/0x1000 [fx_uaf]` becomes `KASAN: BUG: KASAN: use-after-free`.
pub fn report_headline(line: &str) -> String {
    let mut words: Vec<&str> = line
        .split_whitespace()
        .take_while(|w| !w.chars().any(|c| c.is_ascii_digit()))
        .collect();
    while let Some(last) = words.last() {
        if matches!(*last, "in" | "at" | "by") {
            words.pop();
        } else {
            break;
        }
    }
    words.join(" ").trim_end_matches(':').to_owned()
}

fn processes_using(path: &Path) -> Vec<String> {
    let needle = path.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for e in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(cmdline) = fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(&needle) {
            found.push(format!(
                "{}: {}",
                e.file_name().to_string_lossy(),
                cmdline.trim()
            ));
        }
    }
    found
}

/// `checker fixtures`.
pub fn run_cmd(args: &FixturesArgs) -> Result<bool> {
    vm::install_interrupt_handler()?;
    let root = workspace::root()?;
    setup::ensure(&setup::Options {
        book: false,
        browser: false,
        verbose: false,
    })?;
    let dirs = selected(&root, args)?;
    let out = root.join(match args.kernel {
        KernelChoice::Debian => "target/checker/fixtures",
        KernelChoice::Debug => "target/checker/fixtures-debug",
    });
    let tmp = out.join("tmp");
    if tmp.exists() {
        fs::remove_dir_all(&tmp)?;
    }
    fs::create_dir_all(&tmp)?;
    let (dirs, entries) = run_all(&root, &dirs, args, &out, &tmp)?;
    println!();
    let verdicts_ok = compare_verdicts(&dirs, &entries, args)?;
    let clean = clean_up(&tmp);
    let _ = fs::remove_dir(&tmp);
    Ok(verdicts_ok && clean)
}

/// The fixtures to run: those named (default: all), on the debug kernel
/// only those with a `debug-verdict.txt` (the kernel built first).
fn selected(root: &Path, args: &FixturesArgs) -> Result<Vec<PathBuf>> {
    let verdict_name = verdict_file(args.kernel);
    let mut dirs = all_fixtures(root)?;
    if args.kernel == KernelChoice::Debug {
        // Built once here, not by two runs at the same time.
        debugkernel::ensure(&vm::cache_root(), debugkernel::host_series())?;
        dirs.retain(|d| d.join(verdict_name).is_file());
    }
    if !args.names.is_empty() {
        for n in &args.names {
            if !dirs.iter().any(|d| d.ends_with(n)) {
                bail!("no fixture {n:?} with a {verdict_name} in checker/fixtures");
            }
        }
        dirs.retain(|d| args.names.iter().any(|n| d.ends_with(n)));
    }
    Ok(dirs)
}

/// Runs the broken fixtures, then `healthy` alone; returns the fixtures in
/// the order run and their entries. The reports go to `out`, the runs'
/// temporary files to `tmp`.
fn run_all(
    root: &Path,
    dirs: &[PathBuf],
    args: &FixturesArgs,
    out: &Path,
    tmp: &Path,
) -> Result<(Vec<PathBuf>, Vec<Entry>)> {
    let job = |dir: &PathBuf| {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Job {
            student: String::new(),
            lab: name.clone(),
            request: LabRequest {
                name: name.clone(),
                lab_dir: Some(dir.clone()),
                kernel: Some(args.kernel),
                ..LabRequest::default()
            },
            cwd: root.to_path_buf(),
            log: out.join("logs").join(format!("{name}.txt")),
            env: vec![
                (OsString::from("TMPDIR"), Some(tmp.into())),
                // The snapshots of a fixture are written by hand.
                (OsString::from("UPDATE_EXPECT"), None),
            ],
        }
    };
    let (last, broken): (Vec<PathBuf>, Vec<PathBuf>) =
        dirs.iter().cloned().partition(|d| d.ends_with(HEALTHY));
    let parallel = args.jobs.unwrap_or_else(jobs::default_jobs);
    let broken_jobs: Vec<Job> = broken.iter().map(job).collect();
    let mut entries = jobs::run_and_report(&broken_jobs, parallel, out)?;
    if !last.is_empty() {
        println!();
        println!("after the broken ones, a healthy module:");
        let last_jobs: Vec<Job> = last.iter().map(job).collect();
        entries.extend(jobs::run_and_report(&last_jobs, 1, &out.join("healthy"))?);
        crate::report::write_reports(out, &entries)?;
    }
    Ok(([broken, last].concat(), entries))
}

/// Prints each fixture's verdict against its verdict file (rewriting the
/// file with `--update`); true when every one is as expected.
fn compare_verdicts(dirs: &[PathBuf], entries: &[Entry], args: &FixturesArgs) -> Result<bool> {
    let width = entries
        .iter()
        .map(|e| e.result.lab.len())
        .max()
        .unwrap_or(0);
    let mut ok = true;
    for (dir, e) in dirs.iter().zip(entries) {
        let r = &e.result;
        let got = verdict_line(r, args.kernel);
        let file = dir.join(verdict_file(args.kernel));
        let want = fs::read_to_string(&file).unwrap_or_default();
        let want = want.trim();
        let mut same = want == got;
        // A fixture's `decoded.txt`: lines its crash excerpt must hold,
        // the module frames decoded to source lines (run/decode.rs).
        if let Ok(decoded) = fs::read_to_string(dir.join("decoded.txt")) {
            let excerpt = r.crash_excerpt.as_deref().unwrap_or("");
            let held: Vec<&str> = excerpt.lines().map(str::trim).collect();
            for line in decoded.lines().map(str::trim).filter(|l| !l.is_empty()) {
                if !held.contains(&line) {
                    same = false;
                    println!("        {}: no `{line}` in its crash excerpt", r.lab);
                }
            }
        }
        if args.update && !same {
            fs::write(&file, format!("{got}\n"))?;
        }
        let mark = if same {
            "ok"
        } else if args.update {
            "UPDATED"
        } else {
            ok = false;
            "WRONG"
        };
        let line = r.verdict.line_in("  [", "]");
        println!("{mark:<7} {:<width$}  {got}{line}", r.lab);
        if !same && !args.update {
            println!("        {:<width$}  expected: {want}", "");
        }
    }
    Ok(ok)
}

/// Whether every run left `tmp` empty and no process uses it; says so.
fn clean_up(tmp: &Path) -> bool {
    let leftovers: Vec<String> = fs::read_dir(tmp)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().display().to_string())
        .collect();
    let procs = processes_using(tmp);
    if leftovers.is_empty() && procs.is_empty() {
        println!(
            "clean-up: no process and no temporary file left in {}",
            tmp.display()
        );
        return true;
    }
    for l in &leftovers {
        println!("LEFT    temporary file {l}");
    }
    for p in &procs {
        println!("LEFT    process {p}");
    }
    false
}

/// The table of fixtures and their expected verdicts, as the book shows it.
pub fn verdict_table(root: &Path) -> Result<String> {
    let mut out = String::from(
        "| Fixture | The module | Verdict on Debian's kernel | On the debug kernel |\n|---|---|---|---|\n",
    );
    for dir in all_fixtures(root)? {
        let lab = crate::spec::lab::Lab::load(&dir)?;
        let title = lab.config.title.trim_start_matches("Fixture: ").to_owned();
        let verdict = |kernel| {
            fs::read_to_string(dir.join(verdict_file(kernel)))
                .map(|v| format!("`{}`", v.trim()))
                .unwrap_or_else(|_| "not run".into())
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            lab.name,
            title,
            verdict(KernelChoice::Debian),
            verdict(KernelChoice::Debug),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_verdicts_for_the_book() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let table = verdict_table(&root).unwrap();
        expect_test::expect_file!["../../tests/snapshots/fixture-verdicts.md"].assert_eq(&table);
    }

    #[test]
    fn report_headlines_leave_out_what_changes_between_runs() {
        let cases = [
            (
                "KASAN: BUG: KASAN: use-after-free in fx_init+0x98/0x1000 [fx_uaf]",
                "KASAN: BUG: KASAN: use-after-free",
            ),
            (
                "sleep in atomic context: BUG: scheduling while atomic: insmod/93/0x00000002",
                "sleep in atomic context: BUG: scheduling while atomic",
            ),
            (
                "sleep in atomic context: BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580",
                "sleep in atomic context: BUG: sleeping function called from invalid context",
            ),
            (
                "kmemleak: unreferenced object 0xffff888004a3c000 (size 65536):",
                "kmemleak: unreferenced object",
            ),
            (
                "lockdep: WARNING: possible recursive locking detected",
                "lockdep: WARNING: possible recursive locking detected",
            ),
        ];
        for (line, want) in cases {
            assert_eq!(report_headline(line), want, "{line}");
        }
    }
}
