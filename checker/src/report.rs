//! Machine-readable results: one [`LabResult`] per lab run, the one-line
//! [`Verdict`] of a run, the JSON and JUnit XML reports of `checker run`
//! and `checker grade`, and the summary table.
//!
//! A [`LabResult`] is plain data made from a [`LabReport`]; `checker run`
//! and `checker grade` run each lab in a child `checker lab` process that
//! writes its result as JSON (`--result-json`), and the parent collects
//! them. The JSON report is a list of [`Entry`]s (student, lab, result);
//! the JUnit report has one `<testsuite>` per entry and one `<testcase>` per
//! step, so a CI server shows each step.

use std::fmt::Write as _;
use std::path::Path;

use ::vm::console;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::grade::{self, Failure, StepGrade, Verdict as StepVerdict};
use crate::run::LabReport;

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
    /// The kernel reported an oops, BUG, WARNING or panic.
    Crash,
    /// The run hit its time limit.
    TimedOut,
    /// The guest stopped (powered off) with no crash on the console.
    GuestExited,
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
            Kind::Crash => "crash",
            Kind::TimedOut => "timed-out",
            Kind::GuestExited => "guest-exited",
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
    /// The step it happened in, `NN (name)`, when there is one.
    pub step: Option<String>,
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
    /// `passed`, `failed` or `skipped`.
    pub status: String,
    /// Why it failed or was skipped.
    pub reason: Option<String>,
    /// Points earned.
    pub earned: u32,
    /// Points the step is worth.
    pub points: u32,
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
    /// Points earned.
    pub earned: u32,
    /// Points the lab is worth.
    pub points: u32,
    /// The steps.
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
            earned: 0,
            points: 0,
            steps: Vec::new(),
            crash_excerpt: None,
            build_log: None,
            console_log: None,
            output_log: output_log.map(|p| p.display().to_string()),
            wall: 0.0,
            seed: None,
        }
    }

    /// The result of `report`.
    pub fn from_report(r: &LabReport) -> LabResult {
        let (earned, points) = r.score();
        LabResult {
            lab: r.lab.clone(),
            solution: r.solution,
            verdict: verdict(r),
            earned,
            points,
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

fn step_label(g: &StepGrade) -> String {
    format!("{:02} ({})", g.index + 1, g.name)
}

fn step_result(g: &StepGrade) -> StepResult {
    let (status, reason) = match &g.verdict {
        StepVerdict::Pass | StepVerdict::Updated => ("passed", None),
        StepVerdict::Skipped(dep) => (
            "skipped",
            Some(format!("needs step {dep:?}, which did not pass")),
        ),
        StepVerdict::Fail(f) => (
            "failed",
            Some(
                match f {
                    Failure::Mismatch { .. } => "the output differs from the expected snapshot",
                    Failure::MissingExpected => "no expected snapshot",
                    Failure::BuildFailed => "the module did not build",
                    Failure::TimedOut => "the time limit expired during this step",
                    Failure::GuestStopped => "the guest stopped during this step",
                    Failure::NotRun => "not run: an earlier step stopped the guest",
                    Failure::KernelReport => "the kernel reported a problem during this step",
                }
                .to_owned(),
            ),
        ),
    };
    let diff = match &g.verdict {
        StepVerdict::Fail(Failure::Mismatch { expected }) => Some(grade::diff(
            expected,
            g.actual.as_deref().unwrap_or(""),
            false,
        )),
        _ => None,
    };
    StepResult {
        number: g.index + 1,
        name: g.name.clone(),
        status: status.to_owned(),
        reason,
        earned: g.earned(),
        points: g.points,
        time: g.time.map(|t| (t * 100.0).round() / 100.0),
        hint: if status == "failed" {
            g.hint.clone()
        } else {
            None
        },
        diff,
    }
}

/// Classifies a run (see [`Kind`]); the first that applies wins: build
/// failed, time-out (a lockup the kernel reported is its `line`), crash,
/// guest exited, unload refused, a failed step, passed.
pub fn verdict(r: &LabReport) -> Verdict {
    let first = |f: &dyn Fn(&StepGrade) -> bool| r.steps.iter().find(|g| f(g)).map(step_label);
    let crash_line = r
        .crash
        .as_ref()
        .map(|c| console::strip_prefix(&c.line).to_owned());
    let crash_step = r
        .crash
        .as_ref()
        .and_then(|c| c.step.as_ref())
        .map(|(i, name)| format!("{:02} ({name})", i + 1));
    let v = |kind, step, line| Verdict { kind, step, line };
    if !r.build.ok {
        return v(Kind::BuildFailed, None, None);
    }
    if r.timed_out {
        let step = first(&|g| g.verdict == StepVerdict::Fail(Failure::TimedOut));
        return v(Kind::TimedOut, step, crash_line);
    }
    if r.crash.is_some() {
        return v(Kind::Crash, crash_step, crash_line);
    }
    if let Some(step) = first(&|g| g.verdict == StepVerdict::Fail(Failure::GuestStopped)) {
        return v(Kind::GuestExited, Some(step), None);
    }
    if r.steps
        .iter()
        .any(|g| g.verdict == StepVerdict::Fail(Failure::NotRun))
    {
        // Stopped between two steps.
        let step = first(&|g| g.verdict == StepVerdict::Fail(Failure::NotRun));
        return v(Kind::GuestExited, step, None);
    }
    let unload = first(&|g| {
        matches!(g.verdict, StepVerdict::Fail(Failure::Mismatch { .. }))
            && g.actual.as_deref().is_some_and(|a| {
                let mut lines = a.lines();
                let cmd = lines.next().unwrap_or("");
                let status = lines.next().unwrap_or("");
                cmd.trim_start_matches("$ ")
                    .trim_start()
                    .starts_with("rmmod")
                    && status != "status: 0"
            })
    });
    if let Some(step) = unload {
        return v(Kind::UnloadRefused, Some(step), None);
    }
    if let Some(step) = first(&|g| matches!(g.verdict, StepVerdict::Fail(_))) {
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

/// Escapes text for XML 1.0 content and attribute values; characters XML
/// cannot hold (most control characters) become U+FFFD.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// The JUnit XML report: one `<testsuite>` per entry, one `<testcase>`
/// per step.
pub fn to_junit(entries: &[Entry]) -> String {
    let e = xml_escape;
    let count = |f: &dyn Fn(&StepResult) -> bool| -> usize {
        entries
            .iter()
            .map(|en| en.result.steps.iter().filter(|s| f(s)).count())
            .sum()
    };
    let tests = count(&|_| true);
    let failures = count(&|s| s.status == "failed");
    let skipped = count(&|s| s.status == "skipped");
    let errors = entries
        .iter()
        .filter(|en| en.result.verdict.kind == Kind::Error)
        .count();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"checker\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">"
    );
    for en in entries {
        let r = &en.result;
        let suite = if en.student.is_empty() {
            r.lab.clone()
        } else {
            format!("{}/{}", en.student, r.lab)
        };
        let class = suite.replace('/', ".");
        let sfail = r.steps.iter().filter(|s| s.status == "failed").count();
        let sskip = r.steps.iter().filter(|s| s.status == "skipped").count();
        let serr = usize::from(r.verdict.kind == Kind::Error);
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{sfail}\" errors=\"{serr}\" skipped=\"{sskip}\" time=\"{:.2}\">",
            e(&suite),
            r.steps.len(),
            r.wall
        );
        let _ = writeln!(x, "    <properties>");
        for (k, v) in [
            ("verdict", r.verdict.short()),
            ("points", format!("{}/{}", r.earned, r.points)),
        ] {
            let _ = writeln!(x, "      <property name=\"{k}\" value=\"{}\"/>", e(&v));
        }
        let _ = writeln!(x, "    </properties>");
        if r.verdict.kind == Kind::Error {
            let _ = writeln!(
                x,
                "    <error message=\"{}\"/>",
                e(r.verdict.line.as_deref().unwrap_or("error"))
            );
        }
        for s in &r.steps {
            let time = s
                .time
                .map(|t| format!(" time=\"{t:.2}\""))
                .unwrap_or_default();
            let name = format!("{:02}-{}", s.number, s.name);
            let _ = write!(
                x,
                "    <testcase classname=\"{}\" name=\"{}\"{time}",
                e(&class),
                e(&name)
            );
            match s.status.as_str() {
                "passed" => x.push_str("/>\n"),
                "skipped" => {
                    let _ = writeln!(
                        x,
                        ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                        e(s.reason.as_deref().unwrap_or(""))
                    );
                }
                _ => {
                    let mut body = String::new();
                    if let Some(d) = &s.diff {
                        body.push_str(d);
                    }
                    if let Some(h) = &s.hint {
                        let _ = writeln!(body, "hint: {h}");
                    }
                    let _ = writeln!(
                        x,
                        ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                        e(s.reason.as_deref().unwrap_or("failed")),
                        r.verdict.kind.word(),
                        e(&body)
                    );
                }
            }
        }
        let mut out = String::new();
        let _ = writeln!(out, "verdict: {}", r.verdict.short());
        if let Some(line) = &r.verdict.line {
            let _ = writeln!(out, "kernel: {line}");
        }
        if let Some(ex) = &r.crash_excerpt {
            let _ = writeln!(out, "{ex}");
        }
        for (what, log) in [
            ("build log", &r.build_log),
            ("console log", &r.console_log),
            ("output", &r.output_log),
        ] {
            if let Some(log) = log {
                let _ = writeln!(out, "{what}: {log}");
            }
        }
        let _ = writeln!(x, "    <system-out>{}</system-out>", e(&out));
        let _ = writeln!(x, "  </testsuite>");
    }
    x.push_str("</testsuites>\n");
    x
}

/// The summary table: one row per student (or one row for `checker run`),
/// one column per lab with `earned/points` and the verdict.
pub fn summary_table(entries: &[Entry]) -> String {
    if entries.iter().all(|e| e.student.is_empty()) {
        // `checker run` and `checker fixtures`: one row per lab.
        let rows: Vec<[String; 3]> = entries
            .iter()
            .map(|e| {
                let r = &e.result;
                let line = r.verdict.line.as_deref().unwrap_or("");
                [
                    r.lab.clone(),
                    format!("{}/{}", r.earned, r.points),
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
        let (earned, points) = entries.iter().fold((0, 0), |(a, b), e| {
            (a + e.result.earned, b + e.result.points)
        });
        out.push_str(&format!("{:<w0$}  {earned}/{points}\n", "total"));
        return out;
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
                    format!("{}/{} passed", r.earned, r.points)
                } else {
                    format!("{}/{} {}", r.earned, r.points, r.verdict.short())
                }
            }
        }
    };
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut head = vec!["student".to_owned()];
    head.extend(labs.iter().map(|l| (*l).to_owned()));
    head.push("total".to_owned());
    rows.push(head);
    for s in &students {
        let mut row = vec![if s.is_empty() {
            "(this tree)".to_owned()
        } else {
            (*s).to_owned()
        }];
        row.extend(labs.iter().map(|l| cell(s, l)));
        let (earned, points) = entries
            .iter()
            .filter(|e| e.student == *s)
            .fold((0, 0), |(a, b), e| {
                (a + e.result.earned, b + e.result.points)
            });
        row.push(format!("{earned}/{points}"));
        rows.push(row);
    }
    let cols = rows[0].len();
    let widths: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(v, w)| format!("{v:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
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

    fn step(number: usize, name: &str, status: &str, points: u32) -> StepResult {
        let passed = status == "passed";
        StepResult {
            number,
            name: name.into(),
            status: status.into(),
            reason: match status {
                "failed" => Some("the output differs from the expected snapshot".into()),
                "skipped" => Some("needs step \"load\", which did not pass".into()),
                _ => None,
            },
            earned: if passed { points } else { 0 },
            points,
            time: Some(0.02),
            hint: (status == "failed").then(|| "Does init print the greeting?".into()),
            diff: (status == "failed").then(|| {
                grade::diff(
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
        let logs = "target/checker/grade/work/bob/target/checker/lab-01-skeleton";
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
                    earned: 4,
                    points: 4,
                    steps: vec![
                        step(1, "modinfo", "passed", 1),
                        step(2, "load", "passed", 2),
                        step(3, "unload", "passed", 1),
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
                        step: Some("02 (load)".into()),
                        line: None,
                    },
                    earned: 1,
                    points: 4,
                    steps: vec![
                        step(1, "modinfo", "passed", 1),
                        step(2, "load", "failed", 2),
                        step(3, "unload", "skipped", 1),
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

    #[test]
    fn sample_reports() {
        let entries = sample();
        expect_file!["../tests/snapshots/report-sample.json"].assert_eq(&to_json(&entries));
        expect_file!["../tests/snapshots/report-sample.xml"].assert_eq(&to_junit(&entries));
        expect_file!["../tests/snapshots/report-sample-summary.txt"]
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
        expect![[r#"a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; é	ok
�x�"#]]
        .assert_eq(&xml_escape("a <b> & \"c\" 'd' é\tok\n\u{1b}x\u{0}"));
    }
}
