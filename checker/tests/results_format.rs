//! results.json: a step's failure is read from its typed fields, never
//! from the sentence for people; and a results.json of the first format
//! (`results-format-1.json`, written by the checker of 2026-12-04: a
//! `status` word and a `reason` sentence, a skipped step naming the step
//! it needs, the verdict `guest-exited` at a step `09 (name)`) still
//! reads, to the same values.

use checker::grade::{Failure, Status};
use checker::plan::StepId;
use checker::report::{self, Entry, Kind, Verdict};
use checker::tools::workspace::source_root as root;
use serde::Deserialize;

#[derive(Deserialize)]
struct Doc {
    entries: Vec<Entry>,
}

fn read(text: &str) -> Vec<Entry> {
    serde_json::from_str::<Doc>(text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .entries
}

fn statuses(e: &Entry) -> Vec<Status> {
    e.result.steps.iter().map(|s| s.status.clone()).collect()
}

fn legacy() -> Vec<Entry> {
    let path = root().join("checker/tests/results-format-1.json");
    read(&std::fs::read_to_string(path).expect("the fixture"))
}

#[test]
fn a_results_json_of_the_first_format_still_reads() {
    let entries = legacy();
    let [alice, bob, carol] = &entries[..] else {
        panic!("three entries")
    };
    assert!(alice.result.passed());
    assert_eq!(
        statuses(bob),
        [
            Status::Passed,
            Status::Failed(Failure::Mismatch),
            Status::Skipped(StepId(1)),
        ]
    );
    let expected: Vec<Status> = std::iter::once(Status::Updated)
        .chain(Failure::ALL.map(Status::Failed))
        .chain([Status::Skipped(StepId(8))])
        .collect();
    assert_eq!(statuses(carol), expected);
    assert_eq!(carol.result.verdict.kind, Kind::GuestStopped);
    let step = carol.result.verdict.step.as_ref().expect("a step");
    assert_eq!((step.number, step.name.as_str()), (9, "guest_stopped"));
    assert_eq!(
        carol.result.verdict.short(),
        "guest-stopped at step 09 (guest_stopped)"
    );
    assert_eq!(carol.result.seed, Some(42));
}

#[test]
fn the_typed_fields_are_what_is_read() {
    let entries = legacy();
    let json = report::to_json(&entries);
    assert!(json.contains(r#""failure": "build-cpu-time""#), "{json}");
    assert!(json.contains(r#""needs": 2"#) && json.contains(r#""updated": true"#));
    assert!(json.contains(r#""kind": "guest-stopped""#));
    assert!(json.contains(r#""number": 9,"#) && !json.contains(r#""step": "09"#));
    assert_eq!(read(&json), entries);
    // The sentences are for people: reworded or gone, nothing changes.
    let mut doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    for entry in doc["entries"].as_array_mut().unwrap() {
        for step in entry["result"]["steps"].as_array_mut().unwrap() {
            step["reason"] = "reworded".into();
        }
    }
    assert_eq!(read(&doc.to_string()), entries);
}

#[test]
fn a_verdict_names_its_step_by_number_and_name() {
    for bad in [r#""9 guest""#, r#""(x)""#, r#"{"number": 9}"#, "9"] {
        let json = format!(r#"{{"kind": "failed", "step": {bad}, "line": null}}"#);
        assert!(serde_json::from_str::<Verdict>(&json).is_err(), "{json}");
    }
}

#[test]
fn a_status_without_its_typed_detail_is_refused() {
    for bad in [
        r#"{"status":"failed","reason":"?"}"#,
        r#"{"status":"failed","failure":"no-such-failure","reason":null}"#,
        r#"{"status":"skipped","reason":"?"}"#,
        r#"{"status":"skipped","needs":0,"reason":null}"#,
        r#"{"status":"passed","failure":"mismatch","reason":null}"#,
        r#"{"status":"won","reason":null}"#,
    ] {
        assert!(serde_json::from_str::<Status>(bad).is_err(), "{bad}");
    }
}
