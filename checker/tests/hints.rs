//! A step's hint names only what the student can see: code the student
//! writes (the reference solution's copy of the student files), the step's
//! own command and expected output, a file or another step of the lab, or a
//! command to run (`make ...`, `cargo ...`). A hint that
//! blames code the course wrote, or a name nobody wrote, sends a student
//! looking in the wrong place.

use std::fs;

use checker::spec::lab::{all_labs, Lab};
use checker::tools::workspace::source_root as root;

/// The `code` spans of a hint.
fn code_spans(hint: &str) -> Vec<&str> {
    hint.split('`').skip(1).step_by(2).collect()
}

/// What a span may name: the solution's student files, the step's command
/// and snapshot, the lab's files by path, its steps by name, a command.
fn named_in(lab: &Lab, index: usize, span: &str) -> bool {
    let step = &lab.config.steps[index];
    if step.command().contains(span)
        || lab.dir.join(span).exists()
        || lab.config.steps.iter().any(|s| s.name == span)
        || span.starts_with("make ")
        || span.starts_with("cargo ")
    {
        return true;
    }
    let expected = fs::read_to_string(lab.expected_path(index)).unwrap_or_default();
    if expected.contains(span) {
        return true;
    }
    let solution = lab.solution_dir();
    lab.solution_files()
        .expect("the solution's files are listed")
        .iter()
        .any(|f| fs::read_to_string(solution.join(f)).is_ok_and(|text| text.contains(span)))
}

#[test]
fn every_hint_names_only_what_the_student_sees() {
    let mut bad = Vec::new();
    for dir in all_labs(&root()).expect("labs/ is readable") {
        let lab = Lab::load(&dir).expect("lab.toml parses");
        for (index, step) in lab.config.steps.iter().enumerate() {
            for span in code_spans(step.hint.as_deref().unwrap_or("")) {
                if !named_in(&lab, index, span) {
                    bad.push(format!("{}: {}: `{span}`", lab.name, step.name));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "hints name code that is neither the student's nor in the step's command or output:\n{}",
        bad.join("\n")
    );
}

#[test]
fn code_spans_are_the_backquoted_parts() {
    assert_eq!(code_spans("Give `a` and `b c`."), ["a", "b c"]);
    assert!(code_spans("no code").is_empty());
}
