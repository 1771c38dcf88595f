//! What the integration tests share: the checker binary run from the
//! course's root, and the set-up check of the tests that build modules.
//!
//! Each test binary includes this module (`mod common;`) and uses only
//! part of it.
#![allow(dead_code)]

use std::process::{Command, Output};

pub(crate) use checker::tools::workspace::source_root as root;

/// The checker binary at the course's root, without colours, booting or
/// restoring as the run decides (`CHECKER_COLD_BOOT` unset).
pub(crate) fn checker() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_checker"));
    cmd.current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("CHECKER_COLD_BOOT");
    cmd
}

/// Runs the checker with `args` and shows what it printed on the test's
/// stderr (cargo test shows it when the test fails).
pub(crate) fn run(args: &[&str]) -> Output {
    let out = checker()
        .args(args)
        .output()
        .expect("cannot run the checker");
    eprintln!(
        "checker {}: {:?}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Whether `make setup` installed the kernel headers that building a
/// module needs. Without them a test says it is skipped and passes, except
/// under CI (`CI` set), where it fails.
pub(crate) fn set_up() -> bool {
    let ok = Command::new("dpkg-query")
        .args(["-W", "-f=${db:Status-Status}", "linux-headers-amd64"])
        .output()
        .is_ok_and(|o| o.stdout == b"installed");
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "linux-headers-amd64 is not installed: run `make setup` first"
        );
        eprintln!("skipped: no kernel headers (run `make setup`)");
    }
    ok
}
