//! The sandbox of every build of a student's code
//! (`checker::tools::sandbox`), on tiny host crates: a build reads nothing
//! outside its workspace and reaches no network; a build that never ends
//! is killed at its limit with its own verdict, and so is one that wants
//! too much memory. A control run without the sandbox shows that the
//! probe would see what leaks.
//!
//! They run bubblewrap; without it (no `make setup`) they say so and
//! pass, except under CI (`CI` set), where they fail.

use std::fs;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

mod common;

use checker::spec::lab::Lab;
use checker::tools::sandbox::{Limit, Sandbox};
use checker::tools::setup::Toolchain;

/// bwrap runs here (installed, and user namespaces allowed).
fn sandbox_available() -> bool {
    let ok = Command::new("bwrap")
        .args(["--unshare-all", "--ro-bind", "/", "/", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "bwrap does not run: `make setup` installs bubblewrap"
        );
        eprintln!("skipped: bwrap does not run (run `make setup`)");
    }
    ok
}

/// A workspace in `dir` (a `Cargo.toml` and `labs/`) whose lab `probe`
/// is a crate with `files` (`src/lib.rs`, `build.rs`) and the limits in
/// `limits` (`lab.toml` lines).
fn workspace(dir: &Path, files: &[(&str, &str)], limits: &str) -> (PathBuf, Lab) {
    let ws = dir.join("ws");
    let lab = ws.join("labs/probe");
    fs::create_dir_all(lab.join("src")).unwrap();
    fs::write(
        ws.join("Cargo.toml"),
        "[workspace]\nmembers = [\"labs/probe\"]\nresolver = \"2\"\n",
    )
    .unwrap();
    fs::write(
        lab.join("Cargo.toml"),
        "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    fs::write(lab.join("src/lib.rs"), "").unwrap();
    for (name, text) in files {
        fs::write(lab.join(name), text).unwrap();
    }
    fs::write(
        lab.join("lab.toml"),
        format!(
            "title='t'\nchapter='c.md'\nmodules=['m']\n{limits}\n[[step]]\nname='a'\nrun='true'\n"
        ),
    )
    .unwrap();
    (ws.clone(), Lab::load(&lab).unwrap())
}

fn toolchain(dir: &Path) -> Toolchain {
    Toolchain {
        abi: "none".into(),
        kdir: dir.join("no-kernel-tree"),
        vmlinuz: dir.join("none"),
        boot_kernel: dir.join("none"),
        modules_dir: dir.join("none"),
        cache: dir.join("cache"),
        debug: false,
        // As the debug kernel's on its first build: not made yet.
        rust_target_dir: Some(dir.join("ws/target/kernel-debug")),
    }
}

fn cargo_build(ws: &Path) -> Command {
    let mut cmd = Command::new("cargo");
    cmd.args(["build", "--offline", "--quiet"]).current_dir(ws);
    cmd
}

#[test]
fn a_build_reads_nothing_outside_its_workspace_and_reaches_no_network() {
    if !sandbox_available() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // Another student's folder beside this one, a file of the host.
    let secret = d.path().join("other-student/secret.txt");
    fs::create_dir_all(secret.parent().unwrap()).unwrap();
    fs::write(&secret, "the other student's answer").unwrap();
    let marker = d.path().join("marker");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let build_rs = format!(
        r#"fn main() {{
    let kind = |r: std::io::Result<String>| r.map(|t| t.len()).map_err(|e| e.kind());
    eprintln!("PROBE sibling={{:?}}", kind(std::fs::read_to_string({secret:?})));
    eprintln!("PROBE passwd={{:?}}", kind(std::fs::read_to_string("/etc/passwd")));
    let tcp = |a: &str| std::net::TcpStream::connect(a).map(|_| ()).map_err(|e| e.kind());
    eprintln!("PROBE loopback={{:?}}", tcp("127.0.0.1:{port}"));
    eprintln!("PROBE internet={{:?}}", tcp("1.1.1.1:53"));
    let sh = std::process::Command::new("/bin/sh").arg("-c").arg("echo x > {marker}").status();
    eprintln!("PROBE sh={{:?}}", sh.map(|s| s.success()).map_err(|e| e.kind()));
    std::process::exit(1);
}}
"#,
        marker = marker.display()
    );
    let (ws, lab) = workspace(d.path(), &[("build.rs", &build_rs)], "");
    let sandbox = Sandbox::for_lab(&ws, &lab.dir, lab.build_limits(), &toolchain(d.path()));
    let log = d.path().join("build.log");
    let done = sandbox.run(&cargo_build(&ws), &log).unwrap();
    let out = fs::read_to_string(&log).unwrap();
    assert!(!done.success() && done.limit.is_none(), "{done:?}\n{out}");
    for want in [
        "PROBE sibling=Err(NotFound)",
        "PROBE passwd=Err(NotFound)",
        "PROBE loopback=Err(ConnectionRefused)",
        "PROBE internet=Err(NetworkUnreachable)",
    ] {
        assert!(out.contains(want), "{want} in:\n{out}");
    }
    assert!(
        !marker.exists(),
        "the sandboxed shell wrote {}",
        marker.display()
    );
    assert_eq!(
        listener.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock),
        "the sandboxed build reached the host's loopback"
    );

    // The control: the same build outside the sandbox sees it all.
    let control = cargo_build(&ws).output().unwrap();
    let out = String::from_utf8_lossy(&control.stderr);
    assert!(
        out.contains("PROBE sibling=Ok(26)") && out.contains("PROBE loopback=Ok(())"),
        "{out}"
    );
    assert!(marker.exists());
}

#[test]
fn a_build_that_never_ends_is_killed_at_its_limit() {
    if !sandbox_available() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let lib = "#![allow(long_running_const_eval)]\n\
               const fn spin() -> u64 {\n    let mut i = 1u64;\n    \
               while i != 0 {\n        i = i.wrapping_mul(3);\n    }\n    i\n}\n\
               pub const NEVER: u64 = spin();\n";
    let (ws, lab) = workspace(d.path(), &[("src/lib.rs", lib)], "build_timeout = 4");
    let sandbox = Sandbox::for_lab(&ws, &lab.dir, lab.build_limits(), &toolchain(d.path()));
    let log = d.path().join("build.log");
    let done = sandbox.run(&cargo_build(&ws), &log).unwrap();
    let out = fs::read_to_string(&log).unwrap();
    assert_eq!(done.limit, Some(Limit::WallClock), "{done:?}\n{out}");
    assert!(done.time < Duration::from_secs(6), "{done:?}");
    assert!(
        out.ends_with("checker: build timed out (killed after 4 s)\n"),
        "{out}"
    );
    // Nothing of the build is left running.
    std::thread::sleep(Duration::from_millis(200));
    let left: Vec<String> = fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&ws.display().to_string()) || c.contains("--crate-name probe"))
        .collect();
    assert!(left.is_empty(), "still running: {left:?}");
}

#[test]
fn a_build_that_wants_too_much_memory_gets_its_own_verdict() {
    if !sandbox_available() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // 3 GiB: more than the limit, less than the control's machine gives.
    let build_rs = "fn main() {\n    let v: Vec<u8> = Vec::with_capacity(3 << 30);\n    \
                    std::hint::black_box(&v);\n}\n";
    let (ws, lab) = workspace(d.path(), &[("build.rs", build_rs)], "build_memory = 2048");
    let sandbox = Sandbox::for_lab(&ws, &lab.dir, lab.build_limits(), &toolchain(d.path()));
    let log = d.path().join("build.log");
    let done = sandbox.run(&cargo_build(&ws), &log).unwrap();
    let out = fs::read_to_string(&log).unwrap();
    assert_eq!(done.limit, Some(Limit::Memory), "{done:?}\n{out}");
    assert!(out.contains("checker: build used too much memory (memory limit 2048 MiB)"));
}

/// The submissions of `checker/tests/submissions` that attack the build
/// itself, in workspaces made as `checker grade` makes them (snapshots
/// moved out, the other student's workspace beside):
///
/// - `hostile-macro-lab-02`: lab 02's macro, which runs on the host with
///   `std`, tries to read the snapshots, the course's reference solution,
///   the other students' folders and `/etc/passwd`, and to run a shell
///   that leaves a marker outside the workspace. Built without the policy
///   gate (the sandbox must hold where a policy misses something), the
///   build fails with the sandbox's errors and no marker exists.
/// - `endless-build`: lab 01 with a constant that never finishes
///   evaluating: the run (policy, build, grade) ends at its limit with the
///   verdict "build-timed-out" and no point.
#[test]
fn hostile_submissions_are_stopped_by_the_sandbox() {
    use checker::batch::gradedir::{find_submissions, prepare};
    use checker::report::{Kind, LabResult};
    use checker::run::LabRequest;

    if !sandbox_available() || !common::set_up() {
        return;
    }
    let root = checker::tools::workspace::source_root();
    let subs = find_submissions(&root.join("checker/tests/submissions")).unwrap();
    let sub = |name: &str| subs.iter().find(|s| s.student == name).unwrap().clone();
    // Where `checker grade` puts them: `<course>/target/checker/grade/work`.
    let scratch = root.join("target/checker");
    fs::create_dir_all(&scratch).unwrap();
    let work = tempfile::tempdir_in(&scratch).unwrap();
    let work_dir = work.path().join("work");
    let hostile = prepare(&root, &sub("hostile-macro-lab-02"), &work_dir, &[]).unwrap();
    let endless = prepare(&root, &sub("endless-build"), &work_dir, &[]).unwrap();
    let markers = [
        hostile.workspace.parent().unwrap().join("pwned"),
        root.join("pwned-lab-02"),
    ];
    let tc = checker::run::ensure_quiet().unwrap();

    let lab = Lab::load(&hostile.workspace.join("labs/lab-02")).unwrap();
    let log = work.path().join("lab-02-build.log");
    let built = checker::run::build(&lab, &tc, false, false, &log).unwrap();
    let out = fs::read_to_string(&log).unwrap();
    let leaked: Vec<_> = markers.iter().filter(|m| m.exists()).collect();
    for m in &leaked {
        let _ = fs::remove_file(m);
    }
    assert!(
        leaked.is_empty(),
        "the macro's shell wrote {leaked:?}:\n{out}"
    );
    assert!(!built.ok, "{out}");
    let nothing = "No such file or directory (os error 2)";
    for want in [
        format!("sandbox probe: expected: {nothing}"),
        format!("solution: {nothing}"),
        format!("passwd: {nothing}"),
        "other students: none seen".to_owned(),
    ] {
        assert!(out.contains(&want), "{want} in:\n{out}");
    }

    // The run as `checker grade` runs it, with a short build limit and
    // stand-ins for the reference modules (a failed build never loads them).
    let reference = work.path().join("reference");
    fs::create_dir_all(&reference).unwrap();
    fs::write(reference.join("hello.ko"), "").unwrap();
    let req = LabRequest {
        name: "lab-01".into(),
        root: Some(endless.workspace.clone()),
        expected_dir: Some(endless.expected.join("lab-01")),
        reference: Some(reference),
        build_timeout: Some(30),
        ..LabRequest::default()
    };
    let mut shown = Vec::new();
    let started = std::time::Instant::now();
    let run = {
        let mut term = checker::report::terminal::Terminal::new(&mut shown, false);
        checker::run::run_request(&req, &mut term).unwrap()
    };
    let took = started.elapsed();
    let shown = String::from_utf8_lossy(&shown);
    let result = LabResult::from_run(&run);
    assert_eq!(result.verdict.kind, Kind::BuildTimedOut, "{shown}");
    assert_eq!(result.score.earned, 0, "{shown}");
    assert!(took < Duration::from_secs(30 + 15), "{took:?}");
    assert!(
        shown.contains("checker: build timed out (killed after 30 s)"),
        "{shown}"
    );
    assert!(result
        .steps
        .iter()
        .all(|s| s.status.reason().as_deref() == Some("the build timed out")));
}
