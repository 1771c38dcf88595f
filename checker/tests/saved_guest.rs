//! `checker lab` restores a saved, booted guest (`vm::snapshot`) and
//! `--cold` boots one: lab 01's solution must pass and its skeleton fail
//! both ways, with the same verdict for every step (the same `--seed`).
//!
//! The runs build and boot lab 01, so they need the set-up of `make
//! setup`; without its kernel headers they say so and pass, except under
//! CI (`CI` set), where they fail.

use std::process::Output;
use std::sync::Mutex;

mod common;
use common::{run, set_up};

/// Lab 01's runs build in its folder: one at a time.
static LAB_01: Mutex<()> = Mutex::new(());

/// What `--cold` prints neither; a restored run says it on its boot line.
const RESTORED: &str = "restored from a saved, booted guest";

/// Each step's verdict line without its time: `PASS  01 modinfo`.
fn verdicts(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("PASS") || l.starts_with("FAIL"))
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .collect()
}

/// Runs lab 01 (`solution` or the skeleton) restored and cold; checks
/// the exit code and returns both runs' verdicts.
fn both_ways(solution: bool, code: i32) {
    let mut args = vec!["lab", "lab-01", "--seed", "7"];
    if solution {
        args.push("--solution");
    }
    let restored = run(&args);
    args.push("--cold");
    let cold = run(&args);
    let text = |o: &Output| String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(restored.status.code(), Some(code));
    assert_eq!(cold.status.code(), Some(code));
    assert!(
        text(&restored).contains(RESTORED),
        "the run was not restored"
    );
    assert!(!text(&cold).contains(RESTORED), "--cold restored");
    let v = verdicts(&restored);
    assert!(!v.is_empty(), "no verdicts");
    assert_eq!(v, verdicts(&cold), "restored and cold verdicts differ");
}

#[test]
fn the_solution_passes_restored_and_cold() {
    if !set_up() {
        return;
    }
    let _lab = LAB_01.lock().unwrap_or_else(|e| e.into_inner());
    both_ways(true, 0);
}

#[test]
fn the_skeleton_fails_restored_and_cold() {
    if !set_up() {
        return;
    }
    let _lab = LAB_01.lock().unwrap_or_else(|e| e.into_inner());
    both_ways(false, 1);
}
