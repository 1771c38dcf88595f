//! Machine-readable results: one [`LabResult`] per lab run, the one-line
//! [`Verdict`] of a run, the JSON and JUnit XML reports of `checker run`
//! and `checker grade`, and the summary table.
//!
//! A [`LabResult`] is the record the reports keep of a [`RunResult`]:
//! what `results.json` holds, and what `checker gradescope` reads back
//! from it. The JSON report is a list of [`Entry`]s (student, lab,
//! result); the JUnit report (written by `quick-junit`) has one
//! `<testsuite>` per entry and one `<testcase>` per step, so a CI server
//! shows each step.

pub mod diff;
pub mod gradescope;
pub mod style;
pub mod terminal;

use std::path::Path;
use std::time::Duration;

use ::vm::console;
use anyhow::{Context, Result};
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};
use serde::{Deserialize, Serialize};

use crate::grade::{Failure, Score, Status, StepGrade};
use crate::run::RunResult;
use crate::tools::sandbox::Limit;

/// What happened to a whole lab run, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Every step passed.
    Passed,
    /// A step's snapshot differs (the module ran, the answer is wrong).
    Failed,
    /// The module did not build.
    BuildFailed,
    /// The build (or a host step) hit the sandbox's wall-clock limit.
    BuildTimedOut,
    /// A process of the build used up its CPU time.
    BuildCpuTime,
    /// A process of the build could not get the memory it asked for.
    BuildOutOfMemory,
    /// The kernel reported an oops, BUG, WARNING or panic.
    Crash,
    /// The run hit its time limit.
    TimedOut,
    /// The guest stopped (powered off) with no crash on the console, during
    /// a step or between two ([`Failure::GuestStopped`],
    /// [`crate::run::events::Event::GuestStopped`]). Written
    /// `guest-exited` before it had one name.
    #[serde(alias = "guest-exited")]
    GuestStopped,
    /// `rmmod` failed: the module refused to unload.
    UnloadRefused,
    /// The checker itself could not run the lab.
    Error,
}

impl Kind {
    /// The kebab-case word, as in the JSON.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Passed => "passed",
            Kind::Failed => "failed",
            Kind::BuildFailed => "build-failed",
            Kind::BuildTimedOut => "build-timed-out",
            Kind::BuildCpuTime => "build-cpu-time",
            Kind::BuildOutOfMemory => "build-out-of-memory",
            Kind::Crash => "crash",
            Kind::TimedOut => "timed-out",
            Kind::GuestStopped => "guest-stopped",
            Kind::UnloadRefused => "unload-refused",
            Kind::Error => "error",
        }
    }
}

/// The verdict of a lab run: what happened and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// What happened.
    pub kind: Kind,
    /// The step it happened in, when there is one.
    pub step: Option<StepRef>,
    /// The console line that tells (a crash, a lockup), timestamp removed.
    pub line: Option<String>,
}

impl Verdict {
    /// `kind at step NN (name)`: stable across runs (the crash line, which
    /// holds addresses and times, is left out).
    pub fn short(&self) -> String {
        let word = match (self.kind, &self.line) {
            (Kind::Crash, Some(line)) => crash_kind(line),
            (kind, _) => kind.word(),
        };
        match &self.step {
            Some(step) => format!("{word} at step {step}"),
            None => word.to_owned(),
        }
    }

    /// The console line between `open` and `close`, or nothing when
    /// there is none: for appending to a line about the run.
    pub fn line_in(&self, open: &str, close: &str) -> String {
        self.line
            .as_deref()
            .map_or_else(String::new, |l| format!("{open}{l}{close}"))
    }
}

/// A step a verdict names: `{"number": 2, "name": "load"}` in the JSON,
/// `02 (load)` for people. Results of the first format wrote the latter;
/// it still reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "StepRefRecord")]
pub struct StepRef {
    /// 1-based, as the reports number steps.
    pub number: usize,
    /// The step's name.
    pub name: String,
}

impl StepRef {
    /// The step `id`, named `name`.
    pub fn new(id: crate::plan::StepId, name: &str) -> StepRef {
        StepRef {
            number: id.number(),
            name: name.to_owned(),
        }
    }
}

impl std::fmt::Display for StepRef {
    /// `NN (name)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:02} ({})", self.number, self.name)
    }
}

/// A [`StepRef`] as read: typed, or the first format's `NN (name)`.
#[derive(Deserialize)]
#[serde(untagged)]
enum StepRefRecord {
    Typed { number: usize, name: String },
    Label(String),
}

impl TryFrom<StepRefRecord> for StepRef {
    type Error = String;

    fn try_from(r: StepRefRecord) -> Result<StepRef, String> {
        match r {
            StepRefRecord::Typed { number, name } => Ok(StepRef { number, name }),
            StepRefRecord::Label(label) => label
                .split_once(" (")
                .and_then(|(n, rest)| Some((n.parse().ok()?, rest.strip_suffix(')')?)))
                .map(|(number, name)| StepRef {
                    number,
                    name: name.to_owned(),
                })
                .ok_or_else(|| format!("not a step: {label:?}")),
        }
    }
}

/// What kind of crash a crash line reports, in one word: the debug
/// kernel's tool when one of them made the report, else what the kernel
/// said (see [`console::Finding::verdict_word`]); `crash` when nothing
/// recognisable.
pub fn crash_kind(line: &str) -> &'static str {
    console::Finding::of_verdict_line(line).map_or("crash", console::Finding::verdict_word)
}

/// One step of a [`LabResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// 1-based step number.
    pub number: usize,
    /// Step name.
    pub name: String,
    /// `passed`, `failed` or `skipped`, and why (`status` and `reason`).
    #[serde(flatten)]
    pub status: Status,
    /// Points earned of the step's (`earned` and `points`).
    #[serde(flatten)]
    pub score: Score,
    /// Guest (or host) seconds the step took.
    pub time: Option<f64>,
    /// The lab's hint, when the step failed.
    pub hint: Option<String>,
    /// Expected/actual line diff of a mismatch, uncoloured.
    pub diff: Option<String>,
}

/// Everything about one lab run, as the reports hold it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabResult {
    /// Lab name.
    pub lab: String,
    /// The reference solution was graded.
    pub solution: bool,
    /// The verdict.
    pub verdict: Verdict,
    /// Points earned of the lab's (`earned` and `points`).
    #[serde(flatten)]
    pub score: Score,
    /// The steps.
    #[serde(deserialize_with = "read_steps")]
    pub steps: Vec<StepResult>,
    /// The console lines around a crash.
    pub crash_excerpt: Option<String>,
    /// The build log.
    pub build_log: Option<String>,
    /// The guest's console log.
    pub console_log: Option<String>,
    /// The full output of the run (`checker run` and `checker grade` only).
    pub output_log: Option<String>,
    /// Wall time of the run, seconds.
    pub wall: f64,
    /// The seed of the run's `[random]` inputs, for a lab with differential
    /// steps (`checker lab --seed N` reproduces the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl LabResult {
    /// Every step passed and nothing crashed.
    pub fn passed(&self) -> bool {
        self.verdict.kind == Kind::Passed
    }

    /// A result for a lab the checker could not run at all.
    pub fn error(lab: &str, message: &str, output_log: Option<&Path>) -> LabResult {
        LabResult {
            lab: lab.to_owned(),
            solution: false,
            verdict: Verdict {
                kind: Kind::Error,
                step: None,
                line: Some(message.to_owned()),
            },
            score: Score::default(),
            steps: Vec::new(),
            crash_excerpt: None,
            build_log: None,
            console_log: None,
            output_log: output_log.map(|p| p.display().to_string()),
            wall: 0.0,
            seed: None,
        }
    }

    /// The record of the run `r`.
    pub fn from_run(r: &RunResult) -> LabResult {
        LabResult {
            lab: r.lab.clone(),
            solution: r.solution,
            verdict: verdict(r),
            score: r.score(),
            steps: r.steps.iter().map(step_result).collect(),
            crash_excerpt: r.crash.as_ref().map(|c| c.excerpt.clone()),
            build_log: Some(r.build.log.display().to_string()),
            console_log: r
                .console_log
                .as_ref()
                .filter(|p| p.is_file())
                .map(|p| p.display().to_string()),
            output_log: None,
            wall: (r.wall.as_secs_f64() * 100.0).round() / 100.0,
            seed: r.seed,
        }
    }

    /// Reads a result written by [`LabResult::write`].
    pub fn read(path: &Path) -> Result<LabResult> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("invalid {}", path.display()))
    }

    /// Writes the result as JSON.
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// Reads a result's steps. A results.json written before the typed
/// fields names the step a skipped step needs in its `reason` (see
/// [`crate::grade::legacy`]); this gives it that step's number.
fn read_steps<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<StepResult>, D::Error> {
    let mut steps: Vec<serde_json::Value> = Deserialize::deserialize(d)?;
    let numbers: Vec<(String, serde_json::Value)> = steps
        .iter()
        .filter_map(|s| {
            Some((
                s.get("name")?.as_str()?.to_owned(),
                s.get("number")?.clone(),
            ))
        })
        .collect();
    for step in &mut steps {
        let Some(obj) = step.as_object_mut() else {
            continue;
        };
        let old_skip = obj.get("status").and_then(|v| v.as_str()) == Some("skipped")
            && !obj.contains_key("needs");
        let needed = (obj.get("reason").and_then(|r| r.as_str()))
            .filter(|_| old_skip)
            .and_then(crate::grade::legacy::needs)
            .and_then(|name| numbers.iter().find(|(n, _)| *n == name));
        if let Some((_, number)) = needed {
            obj.insert("needs".into(), number.clone());
        }
    }
    steps
        .into_iter()
        .map(|s| serde_json::from_value(s).map_err(serde::de::Error::custom))
        .collect()
}

fn step_result(g: &StepGrade) -> StepResult {
    let failed = matches!(g.status, Status::Failed(_));
    StepResult {
        number: g.id.number(),
        name: g.name.clone(),
        status: g.status.clone(),
        score: g.score(),
        time: g.time.map(|t| (t * 100.0).round() / 100.0),
        hint: if failed { g.hint.clone() } else { None },
        diff: diff::step_diff(g, false),
    }
}

/// Classifies a run (see [`Kind`]); the first that applies wins: build
/// failed, time-out (a lockup the kernel reported is its `line`), crash,
/// guest exited, unload refused, a failed step, passed.
pub fn verdict(r: &RunResult) -> Verdict {
    let first = |f: &dyn Fn(&StepGrade) -> bool| {
        (r.steps.iter().find(|g| f(g))).map(|g| StepRef::new(g.id, &g.name))
    };
    let failed = |why: Failure| move |g: &StepGrade| g.status == Status::Failed(why);
    let crash_line = r
        .crash
        .as_ref()
        .map(|c| console::strip_prefix(&c.line).to_owned());
    let crash_step = r
        .crash
        .as_ref()
        .and_then(|c| c.step.as_ref())
        .map(|(i, name)| StepRef::new(crate::plan::StepId(*i), name));
    let v = |kind, step, line| Verdict { kind, step, line };
    let limit_kind = |l: Limit| match l {
        Limit::WallClock => Kind::BuildTimedOut,
        Limit::CpuTime => Kind::BuildCpuTime,
        Limit::Memory => Kind::BuildOutOfMemory,
    };
    if let (false, Some(limit)) = (r.build.ok, r.build.limit) {
        return v(limit_kind(limit), None, None);
    }
    // A host step (a compile-fail build, a host test) that hit a limit.
    let limit_hit = |g: &StepGrade| match g.status {
        Status::Failed(Failure::BuildTimedOut) => Some(Kind::BuildTimedOut),
        Status::Failed(Failure::BuildCpuTime) => Some(Kind::BuildCpuTime),
        Status::Failed(Failure::BuildOutOfMemory) => Some(Kind::BuildOutOfMemory),
        _ => None,
    };
    if let Some((kind, g)) = (r.steps.iter()).find_map(|g| limit_hit(g).map(|k| (k, g))) {
        return v(kind, Some(StepRef::new(g.id, &g.name)), None);
    }
    if !r.build.ok {
        return v(Kind::BuildFailed, None, None);
    }
    if r.timed_out {
        return v(
            Kind::TimedOut,
            first(&failed(Failure::TimedOut)),
            crash_line,
        );
    }
    if r.crash.is_some() {
        return v(Kind::Crash, crash_step, crash_line);
    }
    // Stopped during a step, or between two steps.
    if let Some(step) =
        first(&failed(Failure::GuestStopped)).or_else(|| first(&failed(Failure::NotRun)))
    {
        return v(Kind::GuestStopped, Some(step), None);
    }
    if let Some(step) =
        first(&|g| g.unload_refused && g.status == Status::Failed(Failure::Mismatch))
    {
        return v(Kind::UnloadRefused, Some(step), None);
    }
    if let Some(step) = first(&|g| matches!(g.status, Status::Failed(_))) {
        return v(Kind::Failed, Some(step), None);
    }
    if !r.passed() {
        return v(Kind::Failed, None, None);
    }
    v(Kind::Passed, None, None)
}

/// One graded lab of one student (`student` is empty for `checker run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The submission's name (its folder or patch file name).
    pub student: String,
    /// The result.
    pub result: LabResult,
}

/// The JSON report: `{"entries": [...]}`.
pub fn to_json(entries: &[Entry]) -> String {
    #[derive(Serialize)]
    struct Doc<'a> {
        entries: &'a [Entry],
    }
    serde_json::to_string_pretty(&Doc { entries }).expect("plain data serialises") + "\n"
}

/// The JUnit XML report: one `<testsuite>` per entry, one `<testcase>`
/// per step (a run the checker could not make is one erroring test case).
pub fn to_junit(entries: &[Entry]) -> String {
    let mut report = quick_junit::Report::new("checker");
    for en in entries {
        report.add_test_suite(junit_suite(en));
    }
    report.to_string().expect("plain data serialises")
}

fn junit_suite(en: &Entry) -> TestSuite {
    let r = &en.result;
    let suite_name = if en.student.is_empty() {
        r.lab.clone()
    } else {
        format!("{}/{}", en.student, r.lab)
    };
    let class = suite_name.replace('/', ".");
    let mut suite = TestSuite::new(suite_name);
    suite.set_time(Duration::from_secs_f64(r.wall.max(0.0)));
    suite.add_property(Property::new("verdict", r.verdict.short()));
    suite.add_property(Property::new("points", r.score.to_string()));
    if r.verdict.kind == Kind::Error {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_message(r.verdict.line.as_deref().unwrap_or("error"));
        let mut case = TestCase::new("checker", status);
        case.set_classname(class.as_str());
        suite.add_test_case(case);
    }
    for s in &r.steps {
        let status = match &s.status {
            Status::Passed | Status::Updated => TestCaseStatus::success(),
            Status::Skipped(_) => {
                let mut st = TestCaseStatus::skipped();
                st.set_message(s.status.reason().unwrap_or_default());
                st
            }
            Status::Failed(_) => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(s.status.reason().unwrap_or_default());
                st.set_type(r.verdict.kind.word());
                let mut body = s.diff.clone().unwrap_or_default();
                if let Some(h) = &s.hint {
                    body.push_str(&format!("hint: {h}\n"));
                }
                st.set_description(body);
                st
            }
        };
        let mut case = TestCase::new(format!("{:02}-{}", s.number, s.name), status);
        case.set_classname(class.as_str());
        if let Some(t) = s.time {
            case.set_time(Duration::from_secs_f64(t.max(0.0)));
        }
        suite.add_test_case(case);
    }
    suite.set_system_out(junit_output(r));
    suite
}

/// The `<system-out>` of a run: its verdict, crash and logs.
fn junit_output(r: &LabResult) -> String {
    let mut out = format!("verdict: {}\n", r.verdict.short());
    if let Some(line) = &r.verdict.line {
        out.push_str(&format!("kernel: {line}\n"));
    }
    if let Some(ex) = &r.crash_excerpt {
        out.push_str(&format!("{ex}\n"));
    }
    for (what, log) in [
        ("build log", &r.build_log),
        ("console log", &r.console_log),
        ("output", &r.output_log),
    ] {
        if let Some(log) = log {
            out.push_str(&format!("{what}: {log}\n"));
        }
    }
    out
}

/// The summary table: one row per student (or one row for `checker run`),
/// one column per lab with `earned/points` and the verdict.
pub fn summary_table(entries: &[Entry]) -> String {
    if entries.iter().all(|e| e.student.is_empty()) {
        // `checker run` and `checker fixtures`: one row per lab.
        return lab_rows(entries);
    }
    let mut labs: Vec<&str> = entries.iter().map(|e| e.result.lab.as_str()).collect();
    labs.sort_unstable();
    labs.dedup();
    let mut students: Vec<&str> = Vec::new();
    for e in entries {
        if !students.contains(&e.student.as_str()) {
            students.push(&e.student);
        }
    }
    let cell = |student: &str, lab: &str| -> String {
        match entries
            .iter()
            .find(|e| e.student == student && e.result.lab == lab)
        {
            None => "-".to_owned(),
            Some(e) => {
                let r = &e.result;
                if r.passed() {
                    format!("{} passed", r.score)
                } else {
                    format!("{} {}", r.score, r.verdict.short())
                }
            }
        }
    };
    let mut head = vec!["student".to_owned()];
    head.extend(labs.iter().map(|l| (*l).to_owned()));
    head.push("total".to_owned());
    let mut rows = vec![head];
    for s in &students {
        let mut row = vec![if s.is_empty() {
            "(this tree)".to_owned()
        } else {
            (*s).to_owned()
        }];
        row.extend(labs.iter().map(|l| cell(s, l)));
        let total: Score = (entries.iter())
            .filter(|e| e.student == *s)
            .map(|e| e.result.score)
            .sum();
        row.push(total.to_string());
        rows.push(row);
    }
    align(&rows)
}

/// `rows` as text: each column as wide as its widest cell, two spaces
/// between columns, no trailing blanks.
fn align(rows: &[Vec<String>]) -> String {
    let cols = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            (rows.iter())
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = (row.iter())
            .zip(&widths)
            .map(|(v, w)| format!("{v:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The summary of runs of one tree: one row per lab.
fn lab_rows(entries: &[Entry]) -> String {
    let rows: Vec<[String; 3]> = entries
        .iter()
        .map(|e| {
            let r = &e.result;
            let line = r.verdict.line.as_deref().unwrap_or("");
            [
                r.lab.clone(),
                r.score.to_string(),
                format!("{} {line}", r.verdict.short())
                    .trim_end()
                    .to_owned(),
            ]
        })
        .collect();
    let w0 = rows.iter().map(|r| r[0].len()).max().unwrap_or(0).max(3);
    let w1 = rows.iter().map(|r| r[1].len()).max().unwrap_or(0).max(6);
    let mut out = format!("{:<w0$}  {:<w1$}  verdict\n", "lab", "points");
    for r in &rows {
        out.push_str(&format!("{:<w0$}  {:<w1$}  {}\n", r[0], r[1], r[2]));
    }
    let total: Score = entries.iter().map(|e| e.result.score).sum();
    out.push_str(&format!("{:<w0$}  {total}\n", "total"));
    out
}

/// Writes `results.json`, `results.xml` and `summary.txt` into `dir`.
pub fn write_reports(dir: &Path, entries: &[Entry]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let w = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))
    };
    w("results.json", to_json(entries))?;
    w("results.xml", to_junit(entries))?;
    w("summary.txt", summary_table(entries))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, expect_file};

    fn step(number: usize, name: &str, status: Status, points: u32) -> StepResult {
        let failed = matches!(status, Status::Failed(_));
        StepResult {
            number,
            name: name.into(),
            score: Score {
                earned: if status.passed() { points } else { 0 },
                points,
            },
            status,
            time: Some(0.02),
            hint: failed.then(|| "Does init print the greeting?".into()),
            diff: failed.then(|| {
                diff::diff(
                    "$ insmod /lab/hello.ko\nstatus: 0\n--- output\n--- kernel log\nhello: Hello, world\n",
                    "$ insmod /lab/hello.ko\nstatus: 0\n--- output\n--- kernel log\nhello: Hello <world>\n",
                    false,
                )
            }),
        }
    }

    /// Two students of lab-01: one passes, one fails the load step, so
    /// the step that depends on it is skipped.
    fn sample() -> Vec<Entry> {
        let logs = "target/checker/grade/work/bob/target/checker/lab-01-student";
        vec![
            Entry {
                student: "alice".into(),
                result: LabResult {
                    lab: "lab-01".into(),
                    solution: false,
                    verdict: Verdict {
                        kind: Kind::Passed,
                        step: None,
                        line: None,
                    },
                    score: Score {
                        earned: 4,
                        points: 4,
                    },
                    steps: vec![
                        step(1, "modinfo", Status::Passed, 1),
                        step(2, "load", Status::Passed, 2),
                        step(3, "unload", Status::Passed, 1),
                    ],
                    crash_excerpt: None,
                    build_log: None,
                    console_log: None,
                    output_log: None,
                    wall: 9.1,
                    seed: None,
                },
            },
            Entry {
                student: "bob".into(),
                result: LabResult {
                    lab: "lab-01".into(),
                    solution: false,
                    verdict: Verdict {
                        kind: Kind::Failed,
                        step: Some(StepRef {
                            number: 2,
                            name: "load".into(),
                        }),
                        line: None,
                    },
                    score: Score {
                        earned: 1,
                        points: 4,
                    },
                    steps: vec![
                        step(1, "modinfo", Status::Passed, 1),
                        step(2, "load", Status::Failed(Failure::Mismatch), 2),
                        step(3, "unload", Status::Skipped(crate::plan::StepId(1)), 1),
                    ],
                    crash_excerpt: None,
                    build_log: Some(format!("{logs}/build.log")),
                    console_log: Some(format!("{logs}/console.log")),
                    output_log: Some("target/checker/grade/logs/bob-lab-01.txt".into()),
                    wall: 8.7,
                    seed: None,
                },
            },
        ]
    }

    /// A build, or a host step, that hit a sandbox limit has the limit's
    /// verdict, not "build-failed" or "failed".
    #[test]
    fn a_limit_hit_is_a_verdict_of_its_own() {
        let lab = crate::testutil::lab(
            "/w/labs/lab-02",
            "title='t'\nchapter='c.md'\nmodules=['m']\n[[step]]\nname='tests'\nhost='cargo test'\n\
             [[step]]\nname='load'\nrun='insmod /lab/m.ko'\n",
        );
        let run = |ok, limit, steps| RunResult {
            lab: "lab-02".into(),
            solution: false,
            build: crate::run::BuildOutcome {
                ok,
                time: Duration::from_secs(30),
                log: "build.log".into(),
                limit,
            },
            steps,
            crash: None,
            timed_out: false,
            accel: None,
            boot_time: None,
            wall: Duration::from_secs(31),
            console_log: None,
            seed: None,
        };
        let all = crate::grade::all_build_failed(&lab);
        let r = run(
            false,
            Some(Limit::WallClock),
            crate::grade::build_failed(&lab, Some(Limit::WallClock)),
        );
        assert_eq!(verdict(&r).short(), "build-timed-out");
        assert_eq!(
            r.steps[0].status.reason().as_deref(),
            Some("the build timed out")
        );
        let r = run(false, Some(Limit::Memory), all.clone());
        assert_eq!(verdict(&r).short(), "build-out-of-memory");
        // The host step ran out of CPU time; the build went on and failed.
        let mut steps = all;
        steps[0].status = Status::Failed(Failure::of_limit(Limit::CpuTime));
        assert_eq!(
            verdict(&run(false, None, steps)).short(),
            "build-cpu-time at step 01 (tests)"
        );
    }

    #[test]
    fn sample_reports() {
        let entries = sample();
        expect_file!["../../tests/snapshots/report-sample.json"].assert_eq(&to_json(&entries));
        expect_file!["../../tests/snapshots/report-sample.xml"].assert_eq(&to_junit(&entries));
        expect_file!["../../tests/snapshots/report-sample-summary.txt"]
            .assert_eq(&summary_table(&entries));
        let back: serde_json::Value = serde_json::from_str(&to_json(&entries)).unwrap();
        let again: Vec<Entry> = serde_json::from_value(back["entries"].clone()).unwrap();
        assert_eq!(again, entries);
    }

    #[test]
    fn summary_of_one_tree() {
        let entries: Vec<Entry> = sample()
            .into_iter()
            .map(|mut e| {
                e.result.lab = format!("{}-{}", e.result.lab, e.student);
                e.student.clear();
                e
            })
            .collect();
        expect![[r#"
            lab           points  verdict
            lab-01-alice  4/4     passed
            lab-01-bob    1/4     failed at step 02 (load)
            total         5/8
        "#]]
        .assert_eq(&summary_table(&entries));
    }

    #[test]
    fn escaping() {
        // What the XML cannot hold as it is: escaped, or left out.
        let mut entries = sample();
        entries[1].result.steps[1].hint = Some("a <b> & \"c\" 'd' é\tok\n\u{1b}x\u{0}".into());
        let xml = to_junit(&entries);
        let hint = xml
            .lines()
            .find(|l| l.starts_with("hint: a"))
            .unwrap_or_default();
        expect!["hint: a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; éok"].assert_eq(hint);
        assert!(!xml.contains(['\u{1b}', '\u{0}']));
    }
}
