//! The terminal reporter: a run's [`Event`]s as the lines a student reads
//! (progress, PASS/FAIL per step, diffs, crash excerpt, score), coloured
//! when the output is a terminal.

use std::io::{IsTerminal as _, Write};
use std::path::Path;

use crate::grade::{Failure, Status, StepGrade};
use crate::run::events::{Event, Reporter};
use crate::run::RunResult;

/// Whether to colour standard output: it is a terminal and `NO_COLOR` is
/// unset.
pub fn color() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

pub use crate::report::style::Style;

/// Renders events on `out`.
pub struct Terminal<W: Write> {
    out: W,
    color: bool,
}

impl Terminal<std::io::Stdout> {
    /// On standard output, coloured when it is a terminal.
    pub fn stdout() -> Self {
        Terminal {
            out: std::io::stdout(),
            color: color(),
        }
    }
}

impl<W: Write> Terminal<W> {
    /// On `out`, coloured when `color`.
    pub fn new(out: W, color: bool) -> Self {
        Terminal { out, color }
    }
}

impl<W: Write> Reporter for Terminal<W> {
    fn event(&mut self, event: &Event) {
        let _ = render(&mut self.out, event, self.color);
        let _ = self.out.flush();
    }
}

fn render(o: &mut dyn Write, event: &Event, color: bool) -> std::io::Result<()> {
    match event {
        Event::Started {
            lab,
            title,
            solution,
            read,
        } => {
            let variant = if *solution {
                " (reference solution)"
            } else {
                ""
            };
            writeln!(o, "{lab}: {title}{variant}")?;
            writeln!(o, "Read: {read}")
        }
        Event::Note { text } | Event::Output { text } => writeln!(o, "{text}"),
        Event::Policy {
            files,
            ms,
            violations,
        } => write_policy(o, files, *ms, violations),
        Event::HostStep {
            id,
            total,
            name,
            compile_fail,
        } => {
            let what = if *compile_fail {
                "compile-fail, on the host"
            } else {
                "on the host"
            };
            write!(o, "step {}/{total} {name} ({what}) ...", id.number())
        }
        Event::HostStepDone { cached: true, .. } => {
            writeln!(o, " done (cached: nothing it compiles changed)")
        }
        Event::HostStepDone { seconds, .. } => writeln!(o, " done ({seconds:.1} s)"),
        Event::Build { reference: true } => write!(o, "build the reference solution ..."),
        Event::Build { reference: false } => write!(o, "build ..."),
        Event::Built {
            reference,
            ok,
            seconds,
            log,
            tail,
        } => write_built(o, *reference, *ok, *seconds, log, tail.as_deref()),
        Event::Booting {
            accel,
            why,
            timeout,
        } => writeln!(
            o,
            "boot ... accelerator {accel}: {why}; time limit {timeout} s"
        ),
        Event::GuestStep { id, total, name } => {
            writeln!(o, "step {}/{total} {name}", id.number())
        }
        Event::ReferenceRun { name } => writeln!(o, "reference run {name}"),
        Event::Kept { dir } => writeln!(o, "kept the guest files in {}", dir.display()),
        Event::TimedOut { .. } | Event::GuestStopped { .. } => write_unfinished(o, event),
        Event::Finished { result } => write_result(o, result, color),
    }
}

fn write_policy(
    o: &mut dyn Write,
    files: &[String],
    ms: f64,
    violations: &[crate::spec::policy::Violation],
) -> std::io::Result<()> {
    let names = files.join(", ");
    if violations.is_empty() {
        return writeln!(o, "policy {names} ... ok ({ms:.1} ms)");
    }
    writeln!(
        o,
        "policy {names} ... REJECTED: nothing was built or run ({ms:.1} ms)"
    )?;
    for v in violations {
        writeln!(o, "  {v}")?;
    }
    writeln!(o, "  ({})", crate::spec::policy::REJECTED)
}

fn write_built(
    o: &mut dyn Write,
    reference: bool,
    ok: bool,
    seconds: f64,
    log: &Path,
    tail: Option<&str>,
) -> std::io::Result<()> {
    match (ok, reference) {
        (true, _) => writeln!(o, " ok ({seconds:.1} s)"),
        (false, true) => writeln!(o, " FAILED"),
        (false, false) => {
            writeln!(o, " FAILED ({seconds:.1} s)")?;
            writeln!(o, "--- last lines of {}", log.display())?;
            writeln!(o, "{}", tail.unwrap_or(""))?;
            writeln!(o, "---")
        }
    }
}

/// A time-out, or a guest that stopped before its steps finished.
fn write_unfinished(o: &mut dyn Write, event: &Event) -> std::io::Result<()> {
    match event {
        Event::TimedOut {
            timeout,
            at,
            console: None,
        } => writeln!(
            o,
            "TIME-OUT after {timeout} s {at}; the kernel printed nothing on the console"
        )?,
        Event::TimedOut {
            timeout,
            at,
            console: Some(tail),
        } => {
            writeln!(o, "TIME-OUT after {timeout} s {at}; last console lines:")?;
            writeln!(o, "{tail}")?;
        }
        Event::GuestStopped {
            qemu,
            console,
            qemu_said,
        } => {
            writeln!(
                o,
                "the guest stopped before the steps finished (qemu {qemu}); last console lines:"
            )?;
            writeln!(o, "{console}")?;
            if let Some(said) = qemu_said {
                writeln!(o, "qemu said:\n{said}")?;
            }
        }
        _ => return Ok(()),
    }
    writeln!(o, "---")
}

/// `path` relative to the current folder, when it is inside it.
pub fn rel(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The word and colour of a step's status.
fn status_word(status: &Status, s: Style) -> (&'static str, &'static str) {
    match status {
        Status::Passed => ("PASS", s.green),
        Status::Updated => ("UPDATED", s.yellow),
        Status::Failed(_) => ("FAIL", s.red),
        Status::Skipped(_) => ("SKIP", s.yellow),
    }
}

/// What the PASS/FAIL line adds about a step of `steps`.
fn status_note(status: &Status, expected: &Path, steps: &[StepGrade]) -> String {
    match status {
        Status::Failed(Failure::Mismatch) | Status::Passed => String::new(),
        Status::Updated => format!("  wrote {}", rel(expected)),
        Status::Failed(Failure::MissingExpected) => format!(
            "  no {}: run with UPDATE_EXPECT=1 to create it",
            rel(expected)
        ),
        Status::Failed(Failure::BuildFailed) => "  (build failed)".into(),
        Status::Failed(
            f @ (Failure::BuildTimedOut | Failure::BuildCpuTime | Failure::BuildOutOfMemory),
        ) => format!("  ({})", f.reason().trim_start_matches("the ")),
        Status::Failed(Failure::TimedOut) => "  (time-out)".into(),
        Status::Failed(Failure::GuestStopped) => "  (the guest stopped during this step)".into(),
        Status::Failed(Failure::NotRun) => "  (not run)".into(),
        Status::Failed(Failure::KernelReport) => {
            "  (the output matched, but the kernel reported a problem: see CRASH)".into()
        }
        Status::Skipped(dep) => {
            let needed = steps
                .iter()
                .find(|g| g.id == *dep)
                .map_or_else(|| format!("{:02}", dep.number()), StepGrade::label);
            format!("  (skipped: it needs step {needed}, which did not pass)")
        }
    }
}

/// The PASS/FAIL lines, diffs, crash excerpt and score of a run.
pub fn write_result(o: &mut dyn Write, r: &RunResult, color: bool) -> std::io::Result<()> {
    let st = Style::new(color);
    let width = r.steps.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in &r.steps {
        let time = s.time.map(|t| format!("  ({t:.2} s)")).unwrap_or_default();
        let (word, colour) = status_word(&s.status, st);
        let why = status_note(&s.status, &s.expected_path, &r.steps);
        writeln!(
            o,
            "{colour}{word:<5}{} {:02} {:<width$}{time}{why}",
            st.reset,
            s.id.number(),
            s.name
        )?;
        if let Some(diff) = crate::report::diff::step_diff(s, color) {
            writeln!(
                o,
                "      {}--- expected {}{}",
                st.red,
                rel(&s.expected_path),
                st.reset
            )?;
            writeln!(o, "      {}+++ actual{}", st.green, st.reset)?;
            for line in diff.lines() {
                writeln!(o, "      {line}")?;
            }
        }
        if let (Status::Failed(_), Some(log)) = (&s.status, &s.log) {
            writeln!(o, "      full output: {}", rel(log))?;
        }
        if let (Status::Failed(_), Some(hint)) = (&s.status, &s.hint) {
            writeln!(o, "      {}hint:{} {hint}", st.yellow, st.reset)?;
        }
    }
    if let Some(c) = &r.crash {
        let at = match &c.step {
            Some((i, name)) => format!("during step {} ({name})", i + 1),
            None => "before the first step".into(),
        };
        writeln!(
            o,
            "{}CRASH{} the kernel reported a problem {at}:",
            st.red, st.reset
        )?;
        for line in c.excerpt.lines() {
            writeln!(o, "      {line}")?;
        }
    }
    write_score(o, r, st)
}

/// The seed line, the score line and, after a failure, where the logs are.
fn write_score(o: &mut dyn Write, r: &RunResult, st: Style) -> std::io::Result<()> {
    let boot = r
        .boot_time
        .map(|b| format!(", boot {:.1} s", b.as_secs_f64()))
        .unwrap_or_default();
    let accel = r
        .accel
        .as_ref()
        .map(|a| format!(", {a}"))
        .unwrap_or_default();
    let crash = if r.crash.is_some() {
        ", kernel crash"
    } else {
        ""
    };
    let verdict = if r.passed() {
        format!("{}passed{}", st.green, st.reset)
    } else {
        format!("{}failed{}", st.red, st.reset)
    };
    if let Some(seed) = r.seed {
        writeln!(
            o,
            "inputs: seed {seed} (checker lab {} --seed {seed} draws them again)",
            r.lab
        )?;
    }
    let score = r.score();
    writeln!(
        o,
        "{}score: {}/{} steps, {score} points{}{crash} -- {verdict} (total {:.1} s{boot}{accel})",
        st.bold,
        r.passed_steps(),
        r.steps.len(),
        st.reset,
        r.wall.as_secs_f64()
    )?;
    if !r.passed() {
        let logs: Vec<String> = [Some(&r.build.log), r.console_log.as_ref()]
            .into_iter()
            .flatten()
            .filter(|p| p.is_file())
            .map(|p| rel(p))
            .collect();
        if !logs.is_empty() {
            writeln!(o, "logs: {}", logs.join(", "))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::grade::{Crash, StepGrade};
    use crate::plan::StepId;
    use crate::run::events::{decode, JsonLines};
    use crate::run::BuildOutcome;

    fn step(i: usize, name: &str, status: Status) -> StepGrade {
        StepGrade {
            id: StepId(i),
            name: name.into(),
            time: Some(0.25),
            actual: Some("$ cat /dev/x\nstatus: 0\n--- output\nhullo\n".into()),
            expected: matches!(status, Status::Failed(Failure::Mismatch))
                .then(|| "$ cat /dev/x\nstatus: 0\n--- output\nhello\n".into()),
            expected_path: format!("/nowhere/expected/{:02}-{name}.txt", i + 1).into(),
            status,
            log: None,
            points: 1,
            hint: Some("Read the chapter again.".into()),
            unload_refused: false,
        }
    }

    fn run() -> (Vec<Event>, RunResult) {
        let result = RunResult {
            lab: "lab-07".into(),
            solution: false,
            build: BuildOutcome {
                ok: true,
                time: Duration::from_millis(1500),
                log: "/nowhere/build.log".into(),
                limit: None,
            },
            steps: vec![
                step(0, "load", Status::Passed),
                step(1, "read", Status::Failed(Failure::Mismatch)),
                step(2, "write", Status::Failed(Failure::KernelReport)),
                step(3, "unload", Status::Skipped(StepId(1))),
            ],
            crash: Some(Crash {
                line: "[ 2.6] BUG: kernel NULL pointer dereference".into(),
                step: Some((2, "write".into())),
                excerpt:
                    "[ 2.5] checker: step 3 write\n[ 2.6] BUG: kernel NULL pointer dereference"
                        .into(),
            }),
            timed_out: false,
            accel: Some(vm::accel::Accel::Tcg),
            boot_time: Some(Duration::from_millis(2700)),
            wall: Duration::from_millis(9100),
            console_log: None,
            seed: Some(7),
        };
        let events = vec![
            Event::Started {
                lab: "lab-07".into(),
                title: "Devices".into(),
                solution: false,
                read: "chapter 7: Devices (book/src/devices.md)".into(),
            },
            Event::Build { reference: false },
            Event::Built {
                reference: false,
                ok: true,
                seconds: 1.5,
                log: "/nowhere/build.log".into(),
                tail: None,
            },
            Event::GuestStep {
                id: StepId(0),
                total: 4,
                name: "load".into(),
            },
            Event::Finished {
                result: Box::new(result.clone()),
            },
        ];
        (events, result)
    }

    fn rendered(events: &[Event]) -> String {
        let mut out = Vec::new();
        let mut t = Terminal::new(&mut out, false);
        for e in events {
            t.event(e);
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_run_as_the_terminal_shows_it() {
        let (events, _) = run();
        expect_test::expect![[r#"
            lab-07: Devices
            Read: chapter 7: Devices (book/src/devices.md)
            build ... ok (1.5 s)
            step 1/4 load
            PASS  01 load    (0.25 s)
            FAIL  02 read    (0.25 s)
                  --- expected /nowhere/expected/02-read.txt
                  +++ actual
                   $ cat /dev/x
                   status: 0
                   --- output
                  -hello
                  +hullo
                  hint: Read the chapter again.
            FAIL  03 write   (0.25 s)  (the output matched, but the kernel reported a problem: see CRASH)
                  hint: Read the chapter again.
            SKIP  04 unload  (0.25 s)  (skipped: it needs step 02 (read), which did not pass)
            CRASH the kernel reported a problem during step 3 (write):
                  [ 2.5] checker: step 3 write
                  [ 2.6] BUG: kernel NULL pointer dereference
            inputs: seed 7 (checker lab lab-07 --seed 7 draws them again)
            score: 1/4 steps, 1/4 points, kernel crash -- failed (total 9.1 s, boot 2.7 s, tcg)
        "#]]
        .assert_eq(&rendered(&events));
    }

    /// A child run's events, read back by its parent, render as the run
    /// itself would have printed them, and carry its whole result.
    #[test]
    fn a_child_runs_events_render_the_same_in_its_parent() {
        let (events, result) = run();
        let mut wire = Vec::new();
        for e in &events {
            JsonLines(&mut wire).event(e);
        }
        let back: Vec<Event> = String::from_utf8(wire)
            .unwrap()
            .lines()
            .map(decode)
            .collect();
        assert_eq!(rendered(&back), rendered(&events));
        assert!(matches!(back.last(), Some(Event::Finished { result: r }) if **r == result));
    }
}
