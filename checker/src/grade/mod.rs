//! Grading a guest run: snapshot comparison, crash detection, diffs.
//!
//! The result types ([`StepGrade`], [`Crash`]) are plain data so that other
//! reports (JSON, JUnit) can be written from them later.

pub mod snapshot;

use std::path::{Path, PathBuf};

use ::vm::console;
use serde::{Deserialize, Serialize};

use crate::plan::{Plan, Slot, StepId};
use crate::spec::lab::{Lab, LabStep};
use crate::tools::sandbox::Limit;
use ::vm::Transcript;

/// Why a step failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Failure {
    /// The snapshot differs from the expected file (the expected text is
    /// [`StepGrade::expected`]).
    Mismatch,
    /// There is no expected file yet.
    MissingExpected,
    /// The module did not build; nothing ran.
    BuildFailed,
    /// The build or host step hit the sandbox's wall-clock limit and was
    /// killed (see [`crate::tools::sandbox`]).
    BuildTimedOut,
    /// A process of the build or host step used up its CPU time.
    BuildCpuTime,
    /// A process of the build or host step could not get the memory it
    /// asked for.
    BuildOutOfMemory,
    /// The run hit its time limit while this step was running.
    TimedOut,
    /// The guest stopped (crash, panic, power-off) while this step was running.
    GuestStopped,
    /// The step never started (an earlier step hung or crashed the guest).
    NotRun,
    /// Its output matched, but the kernel reported a crash, a warning or a
    /// debug tool's finding while it ran.
    KernelReport,
}

impl Failure {
    /// Every failure.
    pub const ALL: [Failure; 10] = [
        Failure::Mismatch,
        Failure::MissingExpected,
        Failure::BuildFailed,
        Failure::BuildTimedOut,
        Failure::BuildCpuTime,
        Failure::BuildOutOfMemory,
        Failure::TimedOut,
        Failure::GuestStopped,
        Failure::NotRun,
        Failure::KernelReport,
    ];

    /// The failure of a step whose build hit the sandbox's `limit`.
    pub fn of_limit(limit: Limit) -> Failure {
        match limit {
            Limit::WallClock => Failure::BuildTimedOut,
            Limit::CpuTime => Failure::BuildCpuTime,
            Limit::Memory => Failure::BuildOutOfMemory,
        }
    }

    /// The reason the reports give (`reason` in the JSON).
    pub fn reason(self) -> &'static str {
        match self {
            Failure::Mismatch => "the output differs from the expected snapshot",
            Failure::MissingExpected => "no expected snapshot",
            Failure::BuildFailed => "the module did not build",
            Failure::BuildTimedOut => "the build timed out",
            Failure::BuildCpuTime => "the build used too much CPU time",
            Failure::BuildOutOfMemory => "the build used too much memory",
            Failure::TimedOut => "the time limit expired during this step",
            Failure::GuestStopped => "the guest stopped during this step",
            Failure::NotRun => "not run: an earlier step stopped the guest",
            Failure::KernelReport => "the kernel reported a problem during this step",
        }
    }
}

/// The status of one graded step: the one enum that grading, the
/// terminal, the JSON and JUnit reports and Gradescope all read. In the
/// JSON it is `status` (`passed`, `failed`, `skipped`) with the typed
/// detail (`failure`, the kebab-case [`Failure`]; `needs`, the number of
/// the step a skipped one needs; `updated`) and a `reason` sentence for
/// people, which is never read back (`StatusRecord`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "StatusRecord", try_from = "StatusRecord")]
pub enum Status {
    /// Matches the expected file.
    Passed,
    /// `UPDATE_EXPECT` is set: the expected file was (re)written.
    Updated,
    /// Did not pass.
    Failed(Failure),
    /// Not graded: the step it `depends` on (this one) did not pass.
    Skipped(StepId),
}

impl Status {
    /// Passed (or updated).
    pub fn passed(&self) -> bool {
        matches!(self, Status::Passed | Status::Updated)
    }

    /// The word of the JSON's `status`.
    pub fn word(&self) -> &'static str {
        match self {
            Status::Passed | Status::Updated => "passed",
            Status::Failed(_) => "failed",
            Status::Skipped(_) => "skipped",
        }
    }

    /// Why it failed or was skipped (the JSON's `reason`), for people.
    pub fn reason(&self) -> Option<String> {
        match self {
            Status::Passed => None,
            Status::Updated => Some("the expected snapshot was written (UPDATE_EXPECT)".to_owned()),
            Status::Failed(f) => Some(f.reason().to_owned()),
            Status::Skipped(dep) => {
                Some(format!("needs step {}, which did not pass", dep.number()))
            }
        }
    }
}

/// How a [`Status`] is written in the reports, and read back.
///
/// Results written before the typed fields (the checker of 2026-12-04 and
/// earlier) have only `status` and `reason`: [`legacy`] reads those
/// sentences, frozen as they were. A skipped step's `needs` there is the
/// needed step's name, which only its [`crate::report::LabResult`] can
/// turn into a number (see [`crate::report::LabResult`]'s steps).
#[derive(Serialize, Deserialize)]
struct StatusRecord {
    status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failure: Option<Failure>,
    /// 1-based, as the reports number steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    needs: Option<usize>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    updated: bool,
    reason: Option<String>,
}

impl From<Status> for StatusRecord {
    fn from(s: Status) -> StatusRecord {
        StatusRecord {
            status: s.word().to_owned(),
            failure: match s {
                Status::Failed(f) => Some(f),
                _ => None,
            },
            needs: match s {
                Status::Skipped(dep) => Some(dep.number()),
                _ => None,
            },
            updated: s == Status::Updated,
            reason: s.reason(),
        }
    }
}

impl TryFrom<StatusRecord> for Status {
    type Error = String;

    fn try_from(r: StatusRecord) -> Result<Status, String> {
        let reason = r.reason.as_deref();
        match (r.status.as_str(), r.failure, r.needs) {
            ("passed", None, None) if r.updated || reason == Some(legacy::UPDATED) => {
                Ok(Status::Updated)
            }
            ("passed", None, None) => Ok(Status::Passed),
            ("failed", Some(f), None) => Ok(Status::Failed(f)),
            ("failed", None, None) => legacy::failure(reason)
                .map(Status::Failed)
                .ok_or_else(|| format!("a failed step without its failure: {reason:?}")),
            ("skipped", None, Some(n)) if n >= 1 => Ok(Status::Skipped(StepId(n - 1))),
            ("skipped", None, None) => Err(format!(
                "a skipped step without the number of the step it needs: {reason:?}"
            )),
            (status, ..) => Err(format!(
                "step status {status:?} with failure {:?} and needs {:?}",
                r.failure, r.needs
            )),
        }
    }
}

/// The `reason` sentences of results written before the typed fields,
/// frozen: rewording [`Failure::reason`] must not change how an old
/// results.json reads.
pub mod legacy {
    use super::Failure;

    /// The reason of an updated step.
    pub const UPDATED: &str = "the expected snapshot was written (UPDATE_EXPECT)";

    /// Each failure's sentence.
    const FAILURES: [(Failure, &str); 10] = [
        (
            Failure::Mismatch,
            "the output differs from the expected snapshot",
        ),
        (Failure::MissingExpected, "no expected snapshot"),
        (Failure::BuildFailed, "the module did not build"),
        (Failure::BuildTimedOut, "the build timed out"),
        (Failure::BuildCpuTime, "the build used too much CPU time"),
        (Failure::BuildOutOfMemory, "the build used too much memory"),
        (Failure::TimedOut, "the time limit expired during this step"),
        (Failure::GuestStopped, "the guest stopped during this step"),
        (
            Failure::NotRun,
            "not run: an earlier step stopped the guest",
        ),
        (
            Failure::KernelReport,
            "the kernel reported a problem during this step",
        ),
    ];

    /// The failure an old `reason` names.
    pub fn failure(reason: Option<&str>) -> Option<Failure> {
        FAILURES
            .iter()
            .find(|(_, sentence)| Some(*sentence) == reason)
            .map(|(f, _)| *f)
    }

    /// The name of the step an old skipped step's `reason` says it needs
    /// (`needs step "load", which did not pass`).
    pub fn needs(reason: &str) -> Option<String> {
        let quoted = reason
            .strip_prefix("needs step ")?
            .strip_suffix(", which did not pass")?;
        serde_json::from_str(quoted).ok()
    }
}

/// One graded step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepGrade {
    /// The step.
    pub id: StepId,
    /// Step name.
    pub name: String,
    /// Guest time the step took, in seconds.
    pub time: Option<f64>,
    /// The actual snapshot text, when the step completed.
    pub actual: Option<String>,
    /// The expected text, when it differs from `actual`
    /// ([`Failure::Mismatch`]).
    pub expected: Option<String>,
    /// The expected file.
    pub expected_path: PathBuf,
    /// The status.
    pub status: Status,
    /// The full output of a host step.
    pub log: Option<PathBuf>,
    /// The step's weight (`points` in `lab.toml`).
    pub points: u32,
    /// The lab's hint for this step, shown when it fails.
    pub hint: Option<String>,
    /// An unloading step (`rmmod`) whose command failed: the module
    /// refused to unload.
    pub unload_refused: bool,
}

/// Points earned of the points there were: of a step, all or none; of a
/// lab or a submission, the sum of its steps'.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Score {
    /// Points earned.
    pub earned: u32,
    /// Points there were.
    pub points: u32,
}

impl std::fmt::Display for Score {
    /// `earned/points`, as every report writes a score.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.earned, self.points)
    }
}

impl std::iter::Sum for Score {
    fn sum<I: Iterator<Item = Score>>(scores: I) -> Score {
        scores.fold(Score::default(), |a, b| Score {
            earned: a.earned + b.earned,
            points: a.points + b.points,
        })
    }
}

impl StepGrade {
    /// Passed (or updated).
    pub fn passed(&self) -> bool {
        self.status.passed()
    }

    /// The step's score: all its points when passed, else none.
    pub fn score(&self) -> Score {
        let earned = if self.passed() { self.points } else { 0 };
        Score {
            earned,
            points: self.points,
        }
    }

    /// `NN (name)`, as verdicts name a step.
    pub fn label(&self) -> String {
        format!("{:02} ({})", self.id.number(), self.name)
    }
}

/// Marks every step whose `depends` step did not pass (or was skipped
/// itself) as [`Status::Skipped`], so one mistake is reported once.
pub fn apply_depends(lab: &Lab, grades: &mut [StepGrade]) {
    for i in 0..grades.len() {
        let Some(dep) = lab
            .config
            .steps
            .get(grades[i].id.0)
            .and_then(|s| s.depends.as_deref())
        else {
            continue;
        };
        if let Some(needed) = grades[..i].iter().find(|g| g.name == dep && !g.passed()) {
            grades[i].status = Status::Skipped(needed.id);
        }
    }
}

/// Fails the step `crash` happened in, when its snapshot matched: a step
/// whose output is right but which oopsed, warned or (on the debug kernel)
/// leaked or used freed memory has not passed.
pub fn fail_reported_step(grades: &mut [StepGrade], crash: &Crash) {
    let Some((index, _)) = &crash.step else {
        return;
    };
    if let Some(g) = grades.iter_mut().find(|g| g.id.0 == *index) {
        if g.passed() {
            g.status = Status::Failed(Failure::KernelReport);
        }
    }
}

/// A crash or warning seen on the kernel console.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crash {
    /// The first matching console line.
    pub line: String,
    /// 0-based step index and name it happened in, if after a step started.
    pub step: Option<(usize, String)>,
    /// Console lines around it (~5 before, ~30 after).
    pub excerpt: String,
}

/// Whether `UPDATE_EXPECT` asks to rewrite the expected files.
pub fn update_requested() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some()
}

/// Every guest step failed because the build failed, or hit the
/// sandbox's `limit`.
pub fn build_failed(lab: &Lab, limit: Option<Limit>) -> Vec<StepGrade> {
    let why = limit.map_or(Failure::BuildFailed, Failure::of_limit);
    failed_as(lab, why, |s| s.guest().is_some())
}

/// Every step, host steps included, failed as when the build fails: what
/// a run stopped before anything was built gets (see `crate::spec::policy::gate`).
pub fn all_build_failed(lab: &Lab) -> Vec<StepGrade> {
    failed_as(lab, Failure::BuildFailed, |_| true)
}

fn failed_as(lab: &Lab, why: Failure, keep: impl Fn(&LabStep) -> bool) -> Vec<StepGrade> {
    lab.config
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| keep(s))
        .map(|(i, _)| StepGrade {
            hint: None,
            ..ungraded(lab, StepId(i), Status::Failed(why))
        })
        .collect()
}

/// A grade of step `id` with `status`, before anything of its run is known.
fn ungraded(lab: &Lab, id: StepId, status: Status) -> StepGrade {
    let step = &lab.config.steps[id.0];
    StepGrade {
        id,
        name: step.name.clone(),
        time: None,
        actual: None,
        expected: None,
        expected_path: lab.expected_path(id.0),
        status,
        log: None,
        points: step.points,
        hint: step.hint.clone(),
        unload_refused: false,
    }
}

/// What a host step did: its exit status and output (kept in full in
/// `log`), and how long it took.
#[derive(Debug, Clone)]
pub struct HostRun {
    /// Exit status (-1 when killed by a signal).
    pub status: i32,
    /// What it printed (for a compile-fail step: the normalised errors).
    pub output: String,
    /// The full output.
    pub log: PathBuf,
    /// Seconds.
    pub time: f64,
}

/// Grades the host step `id` of `lab` from its run.
pub fn grade_host(lab: &Lab, id: StepId, run: &HostRun, update: bool) -> StepGrade {
    let step = &lab.config.steps[id.0];
    let actual = match (step.compile_fail(), step.check_disk()) {
        (Some(case), _) => snapshot::render_compile_fail(case, run.status, &run.output),
        (None, Some(disk)) => snapshot::render_check_disk(disk, run.status, &run.output),
        (None, None) => snapshot::render_host(step.command(), run.status, &run.output),
    };
    let mut g = ungraded(lab, id, Status::Passed);
    (g.status, g.expected) = compare(&g.expected_path, &actual, update);
    StepGrade {
        time: Some(run.time),
        actual: Some(actual),
        log: Some(run.log.clone()),
        ..g
    }
}

/// Grades each guest step of `lab` (run as `plan` says) from the
/// transcript. `timed_out` tells how an unfinished step ended. With
/// `update`, completed steps' expected files are written through
/// `expect-test`.
pub fn grade_steps(
    lab: &Lab,
    plan: &Plan,
    t: &Transcript,
    timed_out: bool,
    update: bool,
) -> Vec<StepGrade> {
    let modules = &lab.config.modules;
    plan.guest
        .iter()
        .enumerate()
        .filter_map(|(n, run)| match run {
            Slot::Step(id) => Some((n, *id)),
            Slot::Reference(_) => None,
        })
        .map(|(n, id)| {
            let mut g = ungraded(lab, id, Status::Failed(Failure::NotRun));
            let record = t.step(n);
            g.time = record.and_then(|r| r.duration());
            let command = lab.shown_command(id.0);
            // A differential step's reference run: after the guest steps.
            let reference = lab.config.steps[id.0]
                .differential
                .then(|| plan.number_of(Slot::Reference(id)).and_then(|r| t.step(r)));
            if reference.is_some() {
                g.expected_path = match &lab.config.inputs {
                    Some(inputs) => {
                        PathBuf::from(format!("(the reference solution, seed {})", inputs.seed))
                    }
                    None => PathBuf::from("(the reference solution)"),
                };
            }
            let Some(r) = record else {
                return g;
            };
            let Some(status) = r.status else {
                g.status = Status::Failed(if timed_out {
                    Failure::TimedOut
                } else {
                    Failure::GuestStopped
                });
                return g;
            };
            let kmsg = r.kmsg.as_deref().unwrap_or("");
            // The `WARN` the step expects keeps its message line only.
            let kmsg = match &lab.config.steps[id.0].warns {
                Some(w) => ::vm::console::without_expected_warnings(kmsg, |_| Some(w.as_str())),
                None => kmsg.to_owned(),
            };
            let actual = snapshot::render(
                &command,
                status,
                r.output.as_deref().unwrap_or(""),
                &kmsg,
                modules,
            );
            (g.status, g.expected) = match reference {
                None => compare(&g.expected_path, &actual, update),
                Some(reference) => compare_reference(&command, reference, &actual, modules),
            };
            g.unload_refused = lab.config.steps[id.0].unloads() && status != 0;
            g.actual = Some(actual);
            g
        })
        .collect()
}

/// The status of a differential step: its snapshot `actual` must be the
/// reference solution's, rendered the same way (the reference module's
/// path, which an error message may name, read as the student's).
fn compare_reference(
    command: &str,
    reference: Option<&::vm::StepRecord>,
    actual: &str,
    modules: &[String],
) -> (Status, Option<String>) {
    let ref_dir = format!("{}/", crate::spec::lab::REF_DIR);
    let expected = match reference.and_then(|r| Some((r, r.status?))) {
        // Not a reference to compare with: the step itself must be wrong.
        Some((_, status)) if status != 0 => format!(
            "(the reference solution's run of this step failed, status {status}: the lab's \
             step must succeed with the reference solution)\n"
        ),
        Some((r, status)) => snapshot::render(
            command,
            status,
            &r.output.as_deref().unwrap_or("").replace(&ref_dir, "/lab/"),
            &r.kmsg.as_deref().unwrap_or("").replace(&ref_dir, "/lab/"),
            modules,
        ),
        None => "(the reference solution's run of this step did not finish)\n".into(),
    };
    if expected == actual {
        (Status::Passed, None)
    } else {
        (Status::Failed(Failure::Mismatch), Some(expected))
    }
}

/// The status of a snapshot `actual` against the file `path`, and the
/// expected text when they differ.
fn compare(path: &Path, actual: &str, update: bool) -> (Status, Option<String>) {
    let expected = std::fs::read_to_string(path)
        .ok()
        .map(|s| s.replace("\r\n", "\n"));
    if expected.as_deref() == Some(actual) {
        return (Status::Passed, None);
    }
    if update {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        // expect-test writes the file when UPDATE_EXPECT is set.
        expect_test::ExpectFile {
            path: path.to_path_buf(),
            position: file!(),
        }
        .assert_eq(actual);
        return (Status::Updated, None);
    }
    match expected {
        None => (Status::Failed(Failure::MissingExpected), None),
        Some(expected) => (Status::Failed(Failure::Mismatch), Some(expected)),
    }
}

/// Looks for the first crash or warning on the console (see
/// [`console::Finding::in_line`]).
pub fn find_crash(console: &str) -> Option<Crash> {
    let lines: Vec<&str> = console.lines().map(|l| l.trim_end_matches('\r')).collect();
    let first = lines
        .iter()
        .position(|l| console::Finding::in_line(l).is_some())?;
    let step = lines[..first]
        .iter()
        .rev()
        .find_map(|l| console::parse_step_marker(l));
    let from = first.saturating_sub(5);
    let to = (first + 31).min(lines.len());
    Some(Crash {
        line: lines[first].to_owned(),
        step,
        excerpt: lines[from..to].join("\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    /// The result channel's token in these tests.
    const TOKEN: &str = "0123456789abcdef";

    /// [`grade_steps`] of `lab` on the result channel's `text`.
    fn graded(lab: &Lab, text: &str, timed_out: bool, update: bool) -> Vec<StepGrade> {
        let t = ::vm::channel::parse(TOKEN, text);
        grade_steps(lab, &Plan::of(lab), &t, timed_out, update)
    }

    /// One line per grade, as `line` shows it.
    fn shown(grades: &[StepGrade], line: impl Fn(&StepGrade) -> String) -> String {
        grades.iter().map(line).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn crash_in_step() {
        let console = "[    0.0] Linux version 6.1.0\r\n\
                       [    2.0] checker: step 1 load\r\n\
                       [    2.1] hello: Hello\r\n\
                       [    2.5] checker: step 2 read\r\n\
                       [    2.6] BUG: kernel NULL pointer dereference, address: 0000000000000000\r\n\
                       [    2.6] #PF: supervisor read access in kernel mode\r\n\
                       [    2.6] Oops: 0000 [#1] PREEMPT SMP NOPTI\r\n\
                       [    2.6] Call Trace:\r\n\
                       [    2.6]  <TASK>\r\n";
        let c = find_crash(console).unwrap();
        expect![[r#"
            Crash {
                line: "[    2.6] BUG: kernel NULL pointer dereference, address: 0000000000000000",
                step: Some(
                    (
                        1,
                        "read",
                    ),
                ),
                excerpt: "[    0.0] Linux version 6.1.0\n[    2.0] checker: step 1 load\n[    2.1] hello: Hello\n[    2.5] checker: step 2 read\n[    2.6] BUG: kernel NULL pointer dereference, address: 0000000000000000\n[    2.6] #PF: supervisor read access in kernel mode\n[    2.6] Oops: 0000 [#1] PREEMPT SMP NOPTI\n[    2.6] Call Trace:\n[    2.6]  <TASK>",
            }"#]]
        .assert_eq(&format!("{c:#?}"));
    }

    #[test]
    fn crash_before_steps_and_none() {
        let c = find_crash("a\nb\nKernel panic - not syncing: No working init found.\n").unwrap();
        assert_eq!(c.step, None);
        assert_eq!(c.excerpt.lines().count(), 3);
        assert!(
            find_crash("[ 1.0] checker: step 1 load\n[ 1.1] hello: WARNING is a word\n").is_none()
        );
        assert!(find_crash("").is_none());
    }

    #[test]
    fn excerpt_is_bounded() {
        let mut console = String::new();
        for i in 0..100 {
            console.push_str(&format!("line {i}\n"));
        }
        console.push_str("WARNING: CPU: 0 PID: 1\n");
        for i in 0..100 {
            console.push_str(&format!("after {i}\n"));
        }
        let c = find_crash(&console).unwrap();
        let lines: Vec<&str> = c.excerpt.lines().collect();
        assert_eq!(lines.len(), 36);
        assert_eq!(lines[0], "line 95");
        assert_eq!(lines[35], "after 29");
    }

    #[test]
    fn differential_steps_compare_with_the_reference_run() {
        let (dir, lab) = crate::testutil::lab_on_disk(
            "title='t'\nchapter='c.md'\nmodules=['hello']\n[random]\nn = { int = [1, 3] }\n\
             [[step]]\nname='same'\nrun='insmod {ko} n={n}'\ndifferential=true\n\
             [[step]]\nname='other'\nrun='insmod {ko} n={n}'\ndifferential=true\n\
             [[step]]\nname='ref-failed'\nrun='insmod {ko}'\ndifferential=true\n",
        );
        let lab = lab.with_inputs(9);
        let step = |n: usize, out: &str, log: &str, status: i32| {
            format!(
                "{TOKEN} start {n} 1.0\n{TOKEN} begin {n}\n{out}\n{TOKEN} kmsg {n}\n{log}{TOKEN} end {n} {status} 1.5\n"
            )
        };
        let text = [
            step(1, "", "[ 1.1] hello: n=2\n", 0),
            step(2, "", "[ 1.1] hello: n=7\n", 0),
            step(
                3,
                "insmod: can't insert '/lab/hello.ko': File exists\n",
                "",
                1,
            ),
            // The reference runs: the path of its module reads as the student's.
            step(4, "", "[ 2.1] hello: n=2\n", 0),
            step(5, "", "[ 2.1] hello: n=2\n", 0),
            step(
                6,
                "insmod: can't insert '/lab/ref/hello.ko': File exists\n",
                "",
                1,
            ),
        ]
        .concat();
        let grades = graded(&lab, &text, false, true);
        let shown = shown(&grades, |g| {
            format!(
                "{} {} {:?} {:?}",
                g.name,
                g.expected_path.display(),
                g.status,
                g.expected
            )
        });
        expect![[r#"
            same (the reference solution, seed 9) Passed None
            other (the reference solution, seed 9) Passed None
            ref-failed (the reference solution, seed 9) Failed(Mismatch) Some("(the reference solution's run of this step failed, status 1: the lab's step must succeed with the reference solution)\n")"#]]
        .assert_eq(&shown);
        // UPDATE_EXPECT writes no snapshot for them.
        assert!(!dir.path().join("expected").exists());
    }

    #[test]
    fn grading_from_transcript() {
        let (dir, lab) = crate::testutil::lab_on_disk(
            "title='t'\nchapter='c.md'\nmodules=['hello']\n\
             [[step]]\nname='load'\nrun='insmod /lab/hello.ko'\n\
             [[step]]\nname='read'\nrun='cat /proc/hello'\n\
             [[step]]\nname='hang'\nrun='sleep 100'\n\
             [[step]]\nname='unload'\nrun='rmmod hello'\n",
        );
        std::fs::create_dir(dir.path().join("expected")).unwrap();
        std::fs::write(
            lab.expected_path(0),
            "$ insmod /lab/hello.ko\nstatus: 0\n--- output\n--- kernel log\nhello: Hello\n",
        )
        .unwrap();
        let text = format!(
            "{TOKEN} start 1 1.0\n{TOKEN} begin 1\n\n{TOKEN} kmsg 1\n[ 1.1] hello: Hello\n{TOKEN} end 1 0 1.25\n\
             {TOKEN} start 2 1.3\n{TOKEN} begin 2\nhi\n\n{TOKEN} kmsg 2\n{TOKEN} end 2 0 1.4\n\
             {TOKEN} start 3 1.5\n"
        );
        let grades = graded(&lab, &text, true, false);
        let shown = shown(&grades, |g| {
            format!(
                "{} {} {:?} {:?} {:?}",
                g.id.0, g.name, g.time, g.status, g.expected
            )
        });
        expect![[r#"
            0 load Some(0.25) Failed(Mismatch) Some("$ insmod /lab/hello.ko\nstatus: 0\n--- output\n--- kernel log\nhello: Hello\n")
            1 read Some(0.09999999999999987) Failed(MissingExpected) None
            2 hang None Failed(TimedOut) None
            3 unload None Failed(NotRun) None"#]]
        .assert_eq(&shown);
        let grades = graded(&lab, &text, false, false);
        assert_eq!(grades[2].status, Status::Failed(Failure::GuestStopped));
    }

    #[test]
    fn a_per_kernel_step_is_graded_against_its_series_snapshot() {
        let (dir, mut lab) = crate::testutil::lab_on_disk(
            "title='t'\nchapter='c.md'\nmodules=['hello']\n\
             [[step]]\nname='opt'\nrun='cat /sys/block/x/queue/optimal_io_size'\n\
             per_kernel='6.12 leaves io_opt 0 when NOWS is 0'\n",
        );
        let snapshot = |n| {
            format!("$ cat /sys/block/x/queue/optimal_io_size\nstatus: 0\n--- output\n{n}\n--- kernel log\n")
        };
        crate::testutil::write(
            dir.path(),
            &[
                ("expected/01-opt.6.1.txt", &snapshot(512)),
                ("expected/01-opt.6.12.txt", &snapshot(0)),
            ],
        );
        let text = format!(
            "{TOKEN} start 1 1.0\n{TOKEN} begin 1\n|0\n|\n{TOKEN} kmsg 1\n{TOKEN} end 1 0 1.25\n"
        );
        let status = |lab: &Lab| {
            let g = &graded(lab, &text, false, false)[0];
            format!(
                "{} {:?}",
                g.expected_path.file_name().unwrap().to_string_lossy(),
                g.status
            )
        };
        // The default series (6.1): its snapshot says 512.
        expect!["01-opt.6.1.txt Failed(Mismatch)"].assert_eq(&status(&lab));
        lab.config.kernel_series = Some("6.12".into());
        expect!["01-opt.6.12.txt Passed"].assert_eq(&status(&lab));
        lab.config.kernel_series = Some("6.18".into());
        expect!["01-opt.6.18.txt Failed(MissingExpected)"].assert_eq(&status(&lab));
    }

    #[test]
    fn a_reported_problem_fails_its_step_and_skips_its_dependents() {
        let lab = crate::testutil::lab(
            "lab",
            "title='t'\nchapter='c.md'\nmodules=['m']\n\
             [[step]]\nname='load'\nrun='insmod /lab/m.ko'\n\
             [[step]]\nname='use'\nrun='cat /dev/m'\n\
             [[step]]\nname='unload'\nrun='rmmod m'\ndepends='use'\n",
        );
        let mut grades: Vec<StepGrade> = (0..3)
            .map(|index| StepGrade {
                hint: None,
                ..ungraded(&lab, StepId(index), Status::Passed)
            })
            .collect();
        let crash = Crash {
            line: "KASAN: BUG: KASAN: use-after-free in m_read".into(),
            step: Some((1, "use".into())),
            excerpt: String::new(),
        };
        fail_reported_step(&mut grades, &crash);
        apply_depends(&lab, &mut grades);
        let shown = shown(&grades, |g| {
            format!("{} {:?} {}", g.name, g.status, g.score().earned)
        });
        expect![[r#"
            load Passed 1
            use Failed(KernelReport) 0
            unload Skipped(StepId(1)) 0"#]]
        .assert_eq(&shown);

        // A report before the first step (or after the last one) has no step.
        let mut untouched = grades.clone();
        untouched[0].status = Status::Passed;
        fail_reported_step(
            &mut untouched,
            &Crash {
                step: None,
                ..crash
            },
        );
        assert_eq!(untouched[0].status, Status::Passed);
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;

    #[test]
    fn every_status_reads_back_from_its_report() {
        let all = [Status::Passed, Status::Updated, Status::Skipped(StepId(2))]
            .into_iter()
            .chain(Failure::ALL.map(Status::Failed));
        for status in all {
            let json = serde_json::to_string(&status).unwrap();
            let back: Status = serde_json::from_str(&json).unwrap();
            assert_eq!(back, status, "{json}");
        }
        expect_test::expect![[
            r#"{"status":"skipped","needs":3,"reason":"needs step 3, which did not pass"}"#
        ]]
        .assert_eq(&serde_json::to_string(&Status::Skipped(StepId(2))).unwrap());
        expect_test::expect![[
            r#"{"status":"failed","failure":"guest-stopped","reason":"the guest stopped during this step"}"#
        ]]
        .assert_eq(&serde_json::to_string(&Status::Failed(Failure::GuestStopped)).unwrap());
    }
}
