//! The checker's exit codes, one test each, on the real binary: 0 when
//! lab 01's solution passes, 1 when its skeleton fails, 2 when the checker
//! cannot do its job (a lab that does not exist, a refused command, a
//! wrong command line), 130 after Ctrl-C (SIGINT) during a run. `--help`
//! lists them.
//!
//! The lab runs build and boot lab 01, so they need the set-up of `make
//! setup`; without its kernel headers they say so and pass, except under
//! CI (`CI` set), where they fail.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

mod common;
use common::{checker, run, set_up};

/// Lab 01's runs build in its folder: one at a time.
static LAB_01: Mutex<()> = Mutex::new(());

/// The exit code (`run` has shown the output).
fn code(out: &Output) -> i32 {
    out.status.code().expect("the checker exited")
}

#[test]
fn a_passing_lab_exits_0() {
    if !set_up() {
        return;
    }
    let _lab = LAB_01.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(&["lab", "lab-01", "--solution"]);
    assert_eq!(code(&out), 0);
}

#[test]
fn a_failing_lab_exits_1() {
    if !set_up() {
        return;
    }
    let _lab = LAB_01.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(&["lab", "lab-01"]);
    assert_eq!(code(&out), 1);
    assert!(String::from_utf8_lossy(&out.stdout).contains("-- failed"));
}

#[test]
fn a_checker_error_exits_2() {
    let out = run(&["lab", "no-such-lab"]);
    assert_eq!(code(&out), 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("checker: error:"));
    // reset-packages refuses without --yes, before it reads its list (a
    // list that does not exist: were the refusal gone, nothing is purged).
    let out = run(&["reset-packages", "--image", "/nonexistent/packages.txt"]);
    assert_eq!(code(&out), 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --yes"));
    // A command line clap refuses, too.
    assert_eq!(code(&run(&["lab", "lab-01", "--no-such-flag"])), 2);
}

#[test]
fn an_interrupted_run_exits_130() {
    if !set_up() {
        return;
    }
    let _lab = LAB_01.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = checker()
        .args(["lab", "lab-01", "--solution"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot run the checker");
    let stdout = child.stdout.take().expect("piped");
    // The policy line comes before the build, which checks for Ctrl-C
    // when it ends, and the guest after it.
    let mut seen = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("the checker's output");
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("policy ") {
            let sent = Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status()
                .expect("cannot run kill");
            assert!(sent.success());
        }
    }
    let out = child.wait_with_output().expect("the checker exits");
    eprint!(
        "--- stdout\n{seen}--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(code(&out), 130);
    assert!(String::from_utf8_lossy(&out.stderr).contains("checker: interrupted"));
    assert!(!seen.contains("-- passed"), "the run went on after Ctrl-C");
}

#[test]
fn help_lists_the_exit_codes() {
    let out = run(&["--help"]);
    assert_eq!(code(&out), 0);
    let help = String::from_utf8_lossy(&out.stdout);
    for line in [
        "0    passed",
        "1    graded and failed",
        "2    the checker",
        "130  interrupted",
    ] {
        assert!(help.contains(line), "--help does not say {line:?}");
    }
}
