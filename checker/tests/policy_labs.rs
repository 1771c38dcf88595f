//! Every lab declares the files its student edits, and those files pass the
//! student-file policy both in the exercise and in the reference solution:
//! the rules a student learns from `make lab-NN` are ones the course's own
//! code keeps.

use std::time::Instant;

use checker::spec::lab::{all_labs, all_samples, Lab};
use checker::spec::policy;

use checker::tools::workspace::source_root as root;

#[test]
fn every_lab_declares_its_student_files() {
    for dir in all_labs(&root()).expect("labs/ is readable") {
        let lab = Lab::load(&dir).expect("lab.toml loads");
        let exercise = lab.student_files().expect("student files");
        assert!(
            !exercise.is_empty(),
            "{}: lab.toml declares no `student` files",
            lab.name
        );
        let solution = lab.solution_files().expect("solution files");
        assert_eq!(
            exercise, solution,
            "{}: the same files on both sides",
            lab.name
        );
    }
}

/// The table of student files the book shows (`book/src/instructors.md`).
#[test]
fn student_files_for_the_book() {
    let mut table = String::from(
        "| Lab | Student files | The reference solution's copies | Rules lifted (`allow`) |\n|---|---|---|---|\n",
    );
    for dir in all_labs(&root()).expect("labs/ is readable") {
        let lab = Lab::load(&dir).expect("lab.toml loads");
        let code = |items: Vec<String>| {
            items
                .iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let solution = policy::files_of_run(&lab, true)
            .expect("solution files")
            .iter()
            .map(|f| policy::shown(&lab, f))
            .collect();
        let allow = lab
            .config
            .allow
            .iter()
            .map(|r| r.name().to_owned())
            .collect();
        table.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            lab.name,
            code(lab.student_files().expect("student files")),
            code(solution),
            match code(allow) {
                a if a.is_empty() => "none".to_owned(),
                a => a,
            }
        ));
    }
    expect_test::expect_file!["snapshots/student-files.md"].assert_eq(&table);
}

#[test]
fn every_exercise_and_solution_keeps_the_rules() {
    let mut bad = Vec::new();
    for dir in all_labs(&root()).expect("labs/ is readable") {
        let lab = Lab::load(&dir).expect("lab.toml loads");
        for solution in [false, true] {
            let started = Instant::now();
            let checked = policy::check_run(&lab, solution).expect("student files readable");
            bad.extend(checked.violations.iter().map(|v| v.to_string()));
            // Well under a build's time: the check runs before every build.
            assert!(
                started.elapsed().as_secs_f64() < 2.0,
                "{}: the policy check took {:?}",
                lab.name,
                started.elapsed()
            );
        }
    }
    assert!(
        bad.is_empty(),
        "student files break the rules:\n{}",
        bad.join("\n")
    );
}

/// Samples and fixtures have no exercise: nothing of theirs is checked.
#[test]
fn samples_have_no_student_files() {
    for dir in all_samples(&root()).expect("drivers/ is readable") {
        let lab = Lab::load(&dir).expect("lab.toml loads");
        assert!(lab.config.student.is_empty(), "{}", lab.name);
    }
}
