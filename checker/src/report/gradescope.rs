//! Gradescope's autograder format: `checker gradescope RESULTS.json`
//! turns one submission's entries of a `checker grade` (or `checker run`)
//! report into the `results.json` that Gradescope reads from
//! `/autograder/results/` (see `checker/gradescope/` and the book's chapter
//! for instructors).
//!
//! One Gradescope test per step, named `lab-04 3 unload`, with its points
//! as `max_score` and what it earned as `score`; its `output` holds the
//! failure reason, the hint and the diff, as the terminal shows them. A lab
//! that did not run (a build failure, a rule broken) still lists every step
//! with score 0, so the student sees what was at stake. [`validate`] checks
//! a document against the rules of Gradescope's specification.

use std::fmt::Write as _;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::report::{Entry, StepResult};

/// Test and top-level visibilities Gradescope knows.
pub const VISIBILITIES: [&str; 4] = ["hidden", "after_due_date", "after_published", "visible"];
/// Test statuses Gradescope knows.
pub const STATUSES: [&str; 2] = ["passed", "failed"];
/// Output formats Gradescope knows.
pub const OUTPUT_FORMATS: [&str; 5] = ["text", "html", "simple_format", "md", "ansi"];

/// The Gradescope document for one submission's `entries` (every entry
/// must be the same student's). `visibility` applies to every test.
pub fn from_entries(entries: &[Entry], visibility: &str) -> Result<Value> {
    if let Some(first) = entries.first() {
        if let Some(other) = entries.iter().find(|e| e.student != first.student) {
            bail!(
                "the report has more than one submission ({:?} and {:?}): Gradescope grades one \
                 at a time; pick one with --student",
                first.student,
                other.student
            );
        }
    }
    let mut tests = Vec::new();
    let mut output = String::new();
    let mut time = 0.0;
    for entry in entries {
        let r = &entry.result;
        let seed = r
            .seed
            .map(|s| format!(" (inputs drawn with seed {s})"))
            .unwrap_or_default();
        let _ = writeln!(
            output,
            "{}: {} points, {}{seed}",
            r.lab,
            r.score,
            r.verdict.short()
        );
        time += r.wall;
        tests.extend(r.steps.iter().map(|step| test(&r.lab, step, visibility)));
    }
    let doc = json!({
        "execution_time": time.round() as u64,
        "output": output.trim_end(),
        "output_format": "text",
        "stdout_visibility": "hidden",
        "tests": tests,
    });
    validate(&doc)?;
    Ok(doc)
}

/// The Gradescope test of `step` of `lab`: its output is the failure
/// reason, the hint and the diff, as the terminal shows them.
fn test(lab: &str, step: &StepResult, visibility: &str) -> Value {
    let mut text = String::new();
    if let Some(reason) = step.status.reason() {
        let _ = writeln!(text, "{reason}");
    }
    if let Some(hint) = &step.hint {
        if step.score.earned < step.score.points {
            let _ = writeln!(text, "hint: {hint}");
        }
    }
    if let Some(diff) = &step.diff {
        let _ = writeln!(text, "{diff}");
    }
    json!({
        "name": format!("{lab} {} {}", step.number, step.name),
        "number": format!("{}.{}", lab_number(lab), step.number),
        "score": step.score.earned,
        "max_score": step.score.points,
        "status": if step.status.passed() { "passed" } else { "failed" },
        "output": text.trim_end(),
        "tags": [lab],
        "visibility": visibility,
    })
}

/// `4` for `lab-04`; 0 for a name without a number (a sample).
fn lab_number(lab: &str) -> u32 {
    lab.rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Checks `doc` against Gradescope's specification of `results.json`:
/// a score somewhere (top-level, or on every test); numbers where numbers
/// go; known statuses, visibilities and output formats; every test named.
pub fn validate(doc: &Value) -> Result<()> {
    let obj = doc.as_object().context("results.json is not an object")?;
    for (key, value) in obj {
        match key.as_str() {
            "score" | "execution_time" => number(value, key)?,
            "output" => string(value, key)?,
            "output_format" => one_of(value, &OUTPUT_FORMATS, key)?,
            "visibility" | "stdout_visibility" => one_of(value, &VISIBILITIES, key)?,
            "tests" | "leaderboard" | "extra_data" => {}
            other => bail!("unknown top-level key {other:?}"),
        }
    }
    let tests = match obj.get("tests") {
        None => &Vec::new(),
        Some(t) => t.as_array().context("tests is not a list")?,
    };
    let top_score = obj.contains_key("score");
    if !top_score && tests.is_empty() {
        bail!("neither a top-level score nor any test");
    }
    for (i, test) in tests.iter().enumerate() {
        validate_test(i, test, top_score)?;
    }
    Ok(())
}

/// Checks test `i` of `results.json`; `top_score`: the document has a
/// top-level score, so the test need not have one.
fn validate_test(i: usize, test: &Value, top_score: bool) -> Result<()> {
    let t = test
        .as_object()
        .with_context(|| format!("test {i} is not an object"))?;
    if !top_score && !t.contains_key("score") {
        bail!("test {i} has no score and there is no top-level score");
    }
    for (key, value) in t {
        let what = format!("test {i}'s {key}");
        match key.as_str() {
            "score" | "max_score" => number(value, &what)?,
            "name" | "name_format" | "number" | "output" => string(value, &what)?,
            "output_format" => one_of(value, &OUTPUT_FORMATS, &what)?,
            "status" => one_of(value, &STATUSES, &what)?,
            "visibility" => one_of(value, &VISIBILITIES, &what)?,
            "tags" => {
                let tags = value
                    .as_array()
                    .with_context(|| format!("{what} is not a list"))?;
                if tags.iter().any(|t| !t.is_string()) {
                    bail!("{what} must hold strings");
                }
            }
            "extra_data" => {}
            other => bail!("test {i} has an unknown key {other:?}"),
        }
    }
    if t.get("name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        bail!("test {i} has no name");
    }
    Ok(())
}

/// `what`, a value of `results.json`, is a number.
fn number(v: &Value, what: &str) -> Result<()> {
    if v.is_number() {
        Ok(())
    } else {
        bail!("{what} is not a number: {v}")
    }
}

/// `what` is a string.
fn string(v: &Value, what: &str) -> Result<()> {
    v.as_str()
        .with_context(|| format!("{what} is not a string"))?;
    Ok(())
}

/// `what` is one of the strings `allowed`.
fn one_of(v: &Value, allowed: &[&str], what: &str) -> Result<()> {
    match v.as_str() {
        Some(s) if allowed.contains(&s) => Ok(()),
        _ => bail!("{what} must be one of {allowed:?}, not {v}"),
    }
}

/// `checker gradescope`: reads a report, keeps `student`'s entries (all
/// when `None`), returns the Gradescope document as text.
pub fn convert(report: &str, student: Option<&str>, visibility: &str) -> Result<String> {
    let doc: Value = serde_json::from_str(report).context("the report is not JSON")?;
    let entries: Vec<Entry> = serde_json::from_value(doc["entries"].clone())
        .context("the report has no entries (is it a checker results.json?)")?;
    let entries: Vec<Entry> = match student {
        Some(s) => entries.into_iter().filter(|e| e.student == s).collect(),
        None => entries,
    };
    if entries.is_empty() {
        bail!(
            "no entries{}",
            student.map(|s| format!(" for {s:?}")).unwrap_or_default()
        );
    }
    Ok(serde_json::to_string_pretty(&from_entries(&entries, visibility)?)? + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> String {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/snapshots/report-sample.json"
        );
        std::fs::read_to_string(path).expect("the report sample")
    }

    #[test]
    fn one_submission_becomes_gradescope_results() {
        let out = convert(&sample(), Some("bob"), "visible").expect("convert");
        expect_test::expect_file!["../../tests/snapshots/gradescope-sample.json"].assert_eq(&out);
        validate(&serde_json::from_str(&out).expect("json")).expect("valid");
    }

    #[test]
    fn several_submissions_need_a_choice() {
        let err = convert(&sample(), None, "visible").expect_err("two students");
        assert!(
            err.to_string().contains("more than one submission"),
            "{err}"
        );
        assert!(convert(&sample(), Some("nobody"), "visible").is_err());
    }

    #[test]
    fn validation_follows_the_specification() {
        let ok = json!({"tests": [{"name": "a", "score": 1, "max_score": 2, "status": "failed"}]});
        validate(&ok).expect("valid");
        for (bad, why) in [
            (json!({}), "neither"),
            (json!({"tests": [{"name": "a"}]}), "no score"),
            (json!({"score": "10"}), "not a number"),
            (
                json!({"score": 1, "tests": [{"name": "a", "status": "ok"}]}),
                "status",
            ),
            (json!({"score": 1, "visibility": "public"}), "visibility"),
            (json!({"score": 1, "tests": [{"score": 1}]}), "no name"),
            (json!({"score": 1, "grade": 3}), "unknown"),
        ] {
            let err = validate(&bad).expect_err(why).to_string();
            assert!(err.contains(why), "{why}: {err}");
        }
    }
}
