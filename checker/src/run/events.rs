//! What a lab run reports while it goes: [`Event`]s, and the
//! [`Reporter`]s that consume them.
//!
//! The runner ([`crate::run`]) only emits events. The terminal
//! ([`crate::report::terminal`]) renders them as text; a child run (`checker
//! child-run`, started by [`crate::batch::jobs`]) writes them to its standard
//! output as JSON lines ([`JsonLines`]), and the parent reads them back
//! ([`decode`]) into its own terminal renderer (the run's log) and takes
//! the run's result from [`Event::Finished`]. The JSON, JUnit and summary
//! reports are written from the results (see [`crate::report`]).

use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::plan::StepId;
use crate::run::result::RunResult;

/// How QEMU ended when the guest stopped before its steps finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QemuExit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It left no status: the runner killed it.
    Killed,
}

impl QemuExit {
    /// From QEMU's exit status, `None` when the runner killed it.
    pub fn of(status: Option<std::process::ExitStatus>) -> QemuExit {
        use std::os::unix::process::ExitStatusExt as _;
        match status {
            Some(s) => match (s.code(), s.signal()) {
                (Some(code), _) => QemuExit::Code(code),
                (None, Some(signal)) => QemuExit::Signal(signal),
                (None, None) => QemuExit::Killed,
            },
            None => QemuExit::Killed,
        }
    }
}

impl std::fmt::Display for QemuExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QemuExit::Code(code) => write!(f, "exit status: {code}"),
            QemuExit::Signal(signal) => write!(f, "signal: {signal}"),
            QemuExit::Killed => f.write_str("killed"),
        }
    }
}

/// One thing that happened in a lab run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// A run starts: the lab, its title and the chapter to read.
    Started {
        /// Lab name.
        lab: String,
        /// The lab's title.
        title: String,
        /// The reference solution is graded.
        solution: bool,
        /// The chapter to read (`chapter N: title (book/src/...)`).
        read: String,
    },
    /// A line about the run's set-up (kernel, inputs, `--step`, `--extra`).
    Note {
        /// The line.
        text: String,
    },
    /// The rules for student files were checked (see [`crate::spec::policy`]).
    Policy {
        /// The files checked.
        files: Vec<String>,
        /// How long it took, milliseconds.
        ms: f64,
        /// What broke a rule (none: the files are fine).
        violations: Vec<crate::spec::policy::Violation>,
    },
    /// A host (or compile-fail) step starts.
    HostStep {
        /// The step.
        id: StepId,
        /// How many steps the lab has.
        total: usize,
        /// Its name.
        name: String,
        /// A compile-fail step.
        compile_fail: bool,
    },
    /// The host step that started last has finished.
    HostStepDone {
        /// How long it took.
        seconds: f64,
        /// A compile-fail build's outcome replayed from the cache of
        /// `checker lab` and `watch` (`run::cfcache`), not built again.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        cached: bool,
    },
    /// A build starts: the lab's, or the reference solution's.
    Build {
        /// The reference solution's build.
        reference: bool,
    },
    /// That build finished.
    Built {
        /// The reference solution's build.
        reference: bool,
        /// It built every module.
        ok: bool,
        /// How long it took.
        seconds: f64,
        /// Its log.
        log: PathBuf,
        /// The log's last lines, when the lab's build failed.
        tail: Option<String>,
    },
    /// The guest boots.
    Booting {
        /// The accelerator.
        #[serde(with = "crate::run::result::accel_name")]
        accel: vm::accel::Accel,
        /// Why that one.
        why: String,
        /// The time limit, seconds.
        timeout: u64,
    },
    /// The guest starts one of the lab's steps.
    GuestStep {
        /// The step.
        id: StepId,
        /// How many steps the lab has.
        total: usize,
        /// Its name.
        name: String,
    },
    /// The guest starts the reference solution's run of a step.
    ReferenceRun {
        /// The run's name (`NAME-ref`).
        name: String,
    },
    /// The guest's files were kept (`--keep`).
    Kept {
        /// Where.
        dir: PathBuf,
    },
    /// The guest hit its time limit.
    TimedOut {
        /// The limit, seconds.
        timeout: u64,
        /// Where it was: `in step N (name)`, `during boot`, ...
        at: String,
        /// The console's last lines (none: the kernel printed nothing).
        console: Option<String>,
    },
    /// The guest stopped before the steps finished, with no crash seen.
    GuestStopped {
        /// How QEMU ended.
        qemu: QemuExit,
        /// The console's last lines.
        console: String,
        /// What QEMU said on its standard error.
        qemu_said: Option<String>,
    },
    /// The run's result: the last event of a run.
    Finished {
        /// The result.
        result: Box<RunResult>,
    },
    /// A line a child run printed that is not an event (what the set-up
    /// installs, a warning).
    Output {
        /// The line.
        text: String,
    },
}

/// Something that consumes a run's events.
pub trait Reporter {
    /// Takes one event.
    fn event(&mut self, event: &Event);
}

/// A child run's reporter: each event as one JSON line on `out`.
pub struct JsonLines<W: Write>(pub W);

impl<W: Write> Reporter for JsonLines<W> {
    fn event(&mut self, event: &Event) {
        let line = serde_json::to_string(event).expect("events are plain data");
        // The parent reads the lines as they come.
        let _ = writeln!(self.0, "{line}");
        let _ = self.0.flush();
    }
}

/// The event a child run's line holds; a line that is not one is
/// [`Event::Output`].
pub fn decode(line: &str) -> Event {
    serde_json::from_str(line).unwrap_or_else(|_| Event::Output {
        text: line.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_back_and_other_lines_are_output() {
        let events = [
            Event::Note {
                text: "kernel: the debug kernel".into(),
            },
            Event::HostStep {
                id: StepId(0),
                total: 3,
                name: "tests".into(),
                compile_fail: false,
            },
            Event::Built {
                reference: false,
                ok: false,
                seconds: 1.5,
                log: "target/build.log".into(),
                tail: Some("error[E0308]".into()),
            },
            Event::Policy {
                files: vec!["src/lib.rs".into()],
                ms: 2.5,
                violations: vec![crate::spec::policy::Violation {
                    file: "src/lib.rs".into(),
                    line: 3,
                    column: 5,
                    rule: Some(crate::spec::policy::Rule::Unsafe),
                    reason: "`unsafe` block".into(),
                }],
            },
            Event::GuestStopped {
                qemu: QemuExit::Code(1),
                console: "Kernel panic".into(),
                qemu_said: None,
            },
        ];
        let mut out = Vec::new();
        for e in &events {
            JsonLines(&mut out).event(e);
        }
        let text = String::from_utf8(out).unwrap();
        let back: Vec<Event> = text.lines().map(decode).collect();
        assert_eq!(back, events);
        assert_eq!(QemuExit::Code(1).to_string(), "exit status: 1");
        assert_eq!(QemuExit::of(None).to_string(), "killed");
        assert_eq!(
            decode("setup: installing qemu"),
            Event::Output {
                text: "setup: installing qemu".into()
            }
        );
    }
}
