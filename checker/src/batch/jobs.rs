//! Running many lab runs at once (`checker run --all -j N`, `checker
//! grade`, `checker fixtures`).
//!
//! Each run is a child process, `checker child-run`, which reads its
//! [`LabRequest`] as JSON on its standard input and streams its
//! [`Event`]s back as JSON lines on its standard output. The parent
//! renders them into the run's log with the terminal reporter and takes
//! the result from the last one. Each child has its own log, its own build
//! folder and its own QEMU guest: nothing mutable is shared between runs
//! except Cargo's target folder, whose lock serialises the Cargo part of
//! concurrent builds. At most `N` children run at once (default: the
//! number of CPUs). Ctrl-C reaches the children too (same process group);
//! each kills its own QEMU and removes its temporary folder, and this
//! process waits for them.

use std::ffi::OsString;
use std::fs;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::outcome::Outcome;
use crate::report::terminal::Terminal;
use crate::report::{self, Entry, LabResult};
use crate::run::events::{self, Event, Reporter as _};
use crate::run::{GuestArgs, LabRequest, RunResult};
use crate::{spec::lab, tools::setup, tools::workspace};

/// One child run.
#[derive(Debug, Clone)]
pub struct Job {
    /// Who it belongs to (empty for `checker run`).
    pub student: String,
    /// Lab (or fixture) name.
    pub lab: String,
    /// What the child runs.
    pub request: LabRequest,
    /// Working directory of the child.
    pub cwd: PathBuf,
    /// Where the child's output goes, as the terminal shows it.
    pub log: PathBuf,
    /// Extra environment (`None` removes the variable).
    pub env: Vec<(OsString, Option<OsString>)>,
}

/// The default `-j`: the number of CPUs.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

struct Running {
    job: Job,
    child: Child,
    /// Renders the child's events into its log; its result at the end.
    events: Option<JoinHandle<Option<RunResult>>>,
    started: Instant,
}

impl Drop for Running {
    fn drop(&mut self) {
        // The child handles SIGINT itself; on any other way out, stop it.
        if let Ok(None) = self.child.try_wait() {
            if !vm::interrupted() {
                let _ = self.child.kill();
            }
        }
        let _ = self.child.wait();
        if let Some(events) = self.events.take() {
            let _ = events.join();
        }
    }
}

/// A private copy of this executable for the children: a `cargo build`
/// elsewhere in the workspace may replace `target/debug/checker` while the
/// runs go on.
fn child_exe(dir: &Path) -> Result<PathBuf> {
    // /proc/self/exe opens even when the file was replaced meanwhile.
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let copy = dir.join(format!(".checker-{}", std::process::id()));
    fs::copy("/proc/self/exe", &copy).context("cannot copy the checker's own executable")?;
    Ok(copy)
}

/// Starts `job`'s child, hands it its request, and a thread that renders
/// its events into the job's log.
fn spawn(exe: &Path, job: &Job) -> Result<Running> {
    if let Some(dir) = job.log.parent() {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let log = fs::File::create(&job.log)
        .with_context(|| format!("cannot create {}", job.log.display()))?;
    let mut cmd = Command::new(exe);
    for (k, v) in &job.env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let mut child = cmd
        .arg("child-run")
        .current_dir(&job.cwd)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log.try_clone()?)
        .spawn()
        .context("cannot start a child checker")?;
    let request = serde_json::to_string(&job.request)?;
    if let Some(mut stdin) = child.stdin.take() {
        // A child that died at once is reported from its log.
        let _ = writeln!(stdin, "{request}");
    }
    let stdout = child.stdout.take().context("the child has no output")?;
    let events = std::thread::spawn(move || {
        let mut terminal = Terminal::new(log, false);
        let mut result = None;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let event = events::decode(&line);
            terminal.event(&event);
            if let Event::Finished { result: r } = event {
                result = Some(*r);
            }
        }
        result
    });
    Ok(Running {
        job: job.clone(),
        child,
        events: Some(events),
        started: Instant::now(),
    })
}

/// Runs `jobs`, at most `parallel` at a time, and returns one entry per
/// job in the order given. `on_done` is called as each one finishes (for
/// progress lines). Returns `Err(Interrupted)` after Ctrl-C, once every
/// child has exited.
pub fn run(
    jobs: &[Job],
    parallel: usize,
    on_done: &mut dyn FnMut(usize, &Job, &LabResult, Duration),
) -> Result<Vec<Entry>> {
    let parallel = parallel.max(1);
    let Some(first) = jobs.first() else {
        return Ok(Vec::new());
    };
    let exe_dir = first.log.parent().unwrap_or(Path::new("."));
    let exe = child_exe(exe_dir)?;
    let result = run_with(&exe, jobs, parallel, on_done);
    let _ = fs::remove_file(&exe);
    result
}

/// The record of a finished child: from its last event, else (it stopped
/// before) an error naming the last line of its log.
fn finished(run: &mut Running, status: std::process::ExitStatus) -> LabResult {
    let job = &run.job;
    let result = run.events.take().and_then(|t| t.join().ok()).flatten();
    let mut r = match result {
        Some(r) => LabResult::from_run(&r),
        None => {
            let log = fs::read_to_string(&job.log).unwrap_or_default();
            let last = log
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output");
            LabResult::error(
                &job.lab,
                &format!("the checker stopped ({status}): {last}"),
                Some(&job.log),
            )
        }
    };
    r.output_log = Some(job.log.display().to_string());
    r
}

fn run_with(
    exe: &Path,
    jobs: &[Job],
    parallel: usize,
    on_done: &mut dyn FnMut(usize, &Job, &LabResult, Duration),
) -> Result<Vec<Entry>> {
    let mut results: Vec<Option<LabResult>> = vec![None; jobs.len()];
    let mut running: Vec<(usize, Running)> = Vec::new();
    let mut next = 0;
    while next < jobs.len() || !running.is_empty() {
        if vm::interrupted() {
            running.clear(); // waits for each child
            return Err(vm::Interrupted.into());
        }
        while next < jobs.len() && running.len() < parallel {
            let job = &jobs[next];
            match spawn(exe, job) {
                Ok(run) => running.push((next, run)),
                Err(e) => {
                    let r = LabResult::error(&job.lab, &format!("{e:#}"), Some(&job.log));
                    on_done(next, job, &r, Duration::ZERO);
                    results[next] = Some(r);
                }
            }
            next += 1;
        }
        let mut i = 0;
        while i < running.len() {
            let Some(status) = running[i].1.child.try_wait()? else {
                i += 1;
                continue;
            };
            let (index, mut run) = running.swap_remove(i);
            let r = finished(&mut run, status);
            on_done(index, &run.job, &r, run.started.elapsed());
            results[index] = Some(r);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(jobs
        .iter()
        .zip(results)
        .map(|(job, r)| Entry {
            student: job.student.clone(),
            result: r.unwrap_or_else(|| LabResult::error(&job.lab, "not run", None)),
        })
        .collect())
}

/// The progress line of a finished job.
pub fn done_line(done: usize, total: usize, job: &Job, r: &LabResult, took: Duration) -> String {
    let who = if job.student.is_empty() {
        job.lab.clone()
    } else {
        format!("{} {}", job.student, job.lab)
    };
    let what = r.verdict.short();
    let line = r.verdict.line_in(": ", "");
    format!(
        "[{done}/{total}] {who}: {} points, {what}{line} ({:.1} s)",
        r.score,
        took.as_secs_f64()
    )
}

/// The flags of the commands that boot many guests at once (`checker run`,
/// `checker grade`): `-j` and each guest's.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct BatchArgs {
    /// Runs at once (default: the number of CPUs).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub guest: GuestArgs,
}

impl BatchArgs {
    /// How many runs go at once.
    pub fn parallel(&self) -> usize {
        self.jobs.unwrap_or_else(default_jobs)
    }
}

/// `checker run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Lab name, e.g. lab-01 (or --all).
    pub lab: Option<String>,
    /// Run every lab.
    #[arg(long, conflicts_with = "lab")]
    pub all: bool,
    /// Grade the reference solutions instead of the exercises.
    #[arg(long)]
    pub solution: bool,
    /// Run only up to step K of the lab (one lab only).
    #[arg(long, value_name = "K", conflicts_with = "all")]
    pub step: Option<usize>,
    #[command(flatten)]
    pub batch: BatchArgs,
    /// Where the reports go (default: target/checker/reports/run), as
    /// `checker grade --out`.
    // `--report`, its old name, still works (hidden: one name in the help).
    #[arg(long, alias = "report", value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// The request of a child run of `lab` with the common flags.
pub fn request(lab: &str, solution: bool, guest: GuestArgs) -> LabRequest {
    LabRequest {
        name: lab.to_owned(),
        solution,
        guest,
        ..LabRequest::default()
    }
}

/// Runs `jobs` with progress lines, writes the reports into `out`, prints
/// the summary; returns the entries.
pub fn run_and_report(jobs: &[Job], parallel: usize, out: &std::path::Path) -> Result<Vec<Entry>> {
    let total = jobs.len();
    let started = Instant::now();
    println!("running {total} lab run(s), {parallel} at a time");
    let mut done = 0;
    let entries = run(jobs, parallel, &mut |_, job, r, took| {
        done += 1;
        println!("{}", done_line(done, total, job, r, took));
    })?;
    report::write_reports(out, &entries)?;
    println!();
    print!("{}", report::summary_table(&entries));
    let failing: Vec<&Entry> = entries.iter().filter(|e| !e.result.passed()).collect();
    if !failing.is_empty() {
        println!();
        println!("logs of the runs that did not pass:");
        for e in failing {
            let who = if e.student.is_empty() {
                e.result.lab.clone()
            } else {
                format!("{} {}", e.student, e.result.lab)
            };
            let logs: Vec<&str> = [
                &e.result.output_log,
                &e.result.build_log,
                &e.result.console_log,
            ]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
            println!("  {who}: {}", logs.join(", "));
        }
    }
    println!();
    println!(
        "reports: {0}/results.json, {0}/results.xml, {0}/summary.txt ({1:.1} s)",
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(entries)
}

/// `checker run`: one lab in this terminal, or several as child runs.
pub fn run_cmd(args: &RunArgs) -> Result<Outcome> {
    vm::install_interrupt_handler()?;
    let root = workspace::root()?;
    let labs: Vec<String> = if args.all {
        lab::all_labs(&root)?
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect()
    } else {
        match &args.lab {
            Some(l) => vec![l.clone()],
            None => bail!("name a lab (checker run lab-01) or give --all"),
        }
    };
    // Install what is missing once, before any child does.
    setup::ensure(&setup::Options {
        book: false,
        browser: false,
        verbose: false,
    })?;
    if labs.len() == 1 && args.out.is_none() {
        // One lab: the ordinary `checker lab`, in this terminal.
        let req = LabRequest {
            step: args.step,
            ..request(&labs[0], args.solution, args.batch.guest)
        };
        let r = crate::run::run_request(&req, &mut Terminal::stdout())?;
        return Ok(Outcome::graded(r.passed()));
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| root.join("target/checker/reports/run"));
    let jobs: Vec<Job> = labs
        .iter()
        .map(|l| Job {
            student: String::new(),
            lab: l.clone(),
            request: LabRequest {
                step: args.step,
                ..request(l, args.solution, args.batch.guest)
            },
            cwd: root.clone(),
            log: out.join("logs").join(format!("{l}.txt")),
            env: Vec::new(),
        })
        .collect();
    let entries = run_and_report(&jobs, args.batch.parallel(), &out)?;
    Ok(Outcome::of_entries(&entries))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::debugkernel::KernelChoice;
    use ::vm::accel::AccelChoice;

    /// What the parent writes on a child's standard input is what the
    /// child reads back: every flag, the clap values by their names.
    #[test]
    fn a_request_reaches_the_child_whole() {
        let req = LabRequest {
            step: Some(3),
            kernel: Some(KernelChoice::Debug),
            seed: Some(42),
            extra: Some("/course".into()),
            reference: Some("/out/reference/lab-04".into()),
            ..request(
                "lab-04",
                true,
                GuestArgs {
                    timeout: Some(90),
                    accel: Some(AccelChoice::Tcg),
                    linux: Some(crate::tools::guest::Linux::V6_12),
                },
            )
        };
        let line = serde_json::to_string(&req).unwrap();
        assert!(line.contains(r#""accel":"tcg""#) && line.contains(r#""kernel":"debug""#));
        assert!(line.contains(r#""linux":"6.12""#), "{line}");
        assert_eq!(serde_json::from_str::<LabRequest>(&line).unwrap(), req);
        let bad = line.replace(r#""tcg""#, r#""fast""#);
        assert!(serde_json::from_str::<LabRequest>(&bad).is_err());
    }
}
