//! The sandbox around every process that compiles or runs a student's
//! code on the host: a lab's build (cargo, rustc, proc macros, build
//! scripts, Kbuild), its host steps and its compile-fail builds all go
//! through [`Sandbox::run`].
//!
//! It is [bubblewrap](https://github.com/containers/bubblewrap) (`bwrap`,
//! the Debian package `bubblewrap`, which `make setup` installs) under
//! `prlimit` (util-linux):
//!
//! - new user, pid, network, IPC, UTS and cgroup namespaces
//!   (`--unshare-all`): uid and gid 65534 inside, no capabilities, no
//!   network but a loopback of its own, its own `/proc` that shows only
//!   its own processes, a new session (no controlling terminal to inject
//!   keystrokes into), killed with the checker (`--die-with-parent`);
//! - a root that holds only what a build needs: `/usr` (compilers,
//!   binutils, make, the kernel headers), the few files of `/etc` that the
//!   dynamic linker and Debian's alternatives need, a minimal `/dev`;
//!   read-only: the Rust toolchain (`RUSTUP_HOME`; of `CARGO_HOME` only
//!   `bin/`, the registry's sources and the configuration, never its
//!   credentials), the checker's cache (the guest kernels, the debug
//!   kernel's tree), the kernel tree of the run, and the course folders the
//!   workspace links to; read-write: the workspace itself, the lab folder
//!   and the cargo target folder. Nothing else of the host exists inside:
//!   not the other students' workspaces, not the snapshots that grading
//!   moved out of the workspace, not `--extra`, not the instructor's home;
//! - an environment emptied to `PATH`, `HOME` (a scratch folder), the
//!   toolchain's `RUSTUP_HOME`/`CARGO_HOME`/`RUSTUP_TOOLCHAIN` and what the
//!   caller sets on its command;
//! - [`Limits`]: a wall-clock limit (the process is killed, and with it
//!   the whole pid namespace), and per process a CPU-time, an
//!   address-space and a file-size limit (`prlimit`). A limit hit is a
//!   [`Limit`], which the reports name ("build timed out").
//!
//! Dependencies are fetched before the sandbox starts ([`fetch`]): inside,
//! cargo works offline.
//!
//! What it does not do: outside its namespaces the processes keep the
//! checker's uid (without capabilities), so grading is best run as an
//! unprivileged user; the limits are per process (rlimits: these machines
//! have cgroups v1 and no systemd to delegate a cgroup), so the number of
//! processes and the disk a build fills inside its workspace are bounded
//! only by the wall clock. The threat model is in the book's "For
//! instructors" chapter.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::tools::setup::Toolchain;

/// A build's wall-clock limit when its `lab.toml` sets none
/// (`build_timeout`): a lab's cold build (the `core` crate and the kernel
/// crate from scratch) takes 1-3 minutes on a busy 2-core machine.
pub const DEFAULT_BUILD_TIMEOUT_SECS: u64 = 600;
/// A process's address-space limit when its `lab.toml` sets none
/// (`build_memory`), MiB. Address space, not memory used: the allocator
/// reserves far more than it touches, and more on a machine with more
/// cores (an arena and a stack per thread); labs 01, 02 and 04 build
/// with half of it on 2 cores.
pub const DEFAULT_BUILD_MEMORY_MIB: u64 = 8192;
/// The largest file a sandboxed process may write, MiB: a module and its
/// cargo artefacts are a few MiB each; the kernel crate's rlib about 60.
pub const FILE_SIZE_MIB: u64 = 1024;
/// The uid and gid inside the sandbox (`nobody`).
pub const SANDBOX_ID: u32 = 65534;

/// The limits of one sandboxed command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time of the whole command.
    pub wall: Duration,
    /// CPU time of each process (`RLIMIT_CPU`).
    pub cpu: Duration,
    /// Address space of each process, MiB (`RLIMIT_AS`).
    pub memory_mib: u64,
}

impl Limits {
    /// The limits of a lab's builds: its `build_timeout` (seconds) and
    /// `build_memory` (MiB), else the defaults (see
    /// [`crate::spec::lab::Lab::build_limits`]). A process may use at most
    /// twice the wall-clock limit in CPU time (rustc and LLVM are
    /// multi-threaded); the wall clock normally stops it first.
    pub fn new(build_timeout: Option<u64>, build_memory: Option<u64>) -> Limits {
        let wall = build_timeout.unwrap_or(DEFAULT_BUILD_TIMEOUT_SECS);
        Limits {
            wall: Duration::from_secs(wall),
            cpu: Duration::from_secs(wall * 2),
            memory_mib: build_memory.unwrap_or(DEFAULT_BUILD_MEMORY_MIB),
        }
    }
}

/// The limit a sandboxed command hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// The wall-clock limit: the sandbox was killed.
    WallClock,
    /// A process used up its CPU time (`SIGXCPU`).
    CpuTime,
    /// A process could not get the memory it asked for.
    Memory,
}

impl Limit {
    /// What the reports say, e.g. "build timed out".
    pub fn verdict(self) -> &'static str {
        match self {
            Limit::WallClock => "build timed out",
            Limit::CpuTime => "build used too much CPU time",
            Limit::Memory => "build used too much memory",
        }
    }
}

/// How a sandboxed command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// Its exit status; -1 when killed by a signal.
    pub code: i32,
    /// The limit it hit, if one.
    pub limit: Option<Limit>,
    /// Wall time.
    pub time: Duration,
}

impl Finished {
    /// It exited with status 0.
    pub fn success(&self) -> bool {
        self.code == 0 && self.limit.is_none()
    }
}

/// What a sandboxed command may see, and its limits. Paths are bound at
/// the same place inside as outside.
#[derive(Debug, Clone, PartialEq)]
pub struct Sandbox {
    /// Folders it may write (the workspace, the lab folder, the target
    /// folder).
    pub writable: Vec<PathBuf>,
    /// Folders and files it may read (toolchain, kernel tree, cache, the
    /// course folders the workspace links to).
    pub readable: Vec<PathBuf>,
    /// Where each command gets its `/tmp` and `$HOME`: a new folder in
    /// here, removed after it (runs of a batch share a workspace).
    pub scratch: PathBuf,
    /// Environment variables besides `PATH` and `HOME`.
    pub env: Vec<(String, OsString)>,
    /// `PATH` inside.
    pub path: OsString,
    /// Its limits.
    pub limits: Limits,
}

/// The Rust toolchain's folders: `RUSTUP_HOME` and `CARGO_HOME` as the
/// checker sees them (`~/.rustup`, `~/.cargo` by default).
fn toolchain_homes() -> (PathBuf, PathBuf) {
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    let var = |name: &str, default: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map_or_else(|| home.join(default), PathBuf::from)
    };
    (var("RUSTUP_HOME", ".rustup"), var("CARGO_HOME", ".cargo"))
}

/// `path` made absolute (against the current folder), not resolved.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `path` and, when it differs, its resolved form: both are bound, so
/// that a path the caller spells either way works inside.
fn both_forms(path: &Path) -> Vec<PathBuf> {
    let abs = absolute(path);
    let mut v = vec![abs.clone()];
    if let Ok(real) = abs.canonicalize() {
        if real != abs {
            v.push(real);
        }
    }
    v
}

impl Sandbox {
    /// The sandbox of a lab run in the workspace `root` (a student's
    /// workspace under `checker grade`, else the checkout), for the lab
    /// folder `lab_dir` (in `root`, or a folder elsewhere) built for `tc`
    /// within `limits`.
    ///
    /// Readable: the toolchain, `tc`'s kernel tree and cache, and every
    /// top-level entry of `root` that is a symbolic link (a graded
    /// workspace links the course's `kernel-crate/`, `module-macro/` ...);
    /// writable: `root`, the lab folder and `tc`'s cargo target folder.
    /// A driver of one's own (a lab folder outside `root`, or a `root`
    /// with no `kernel-crate/`) also reads the checker's own checkout,
    /// whose kernel crate it builds against.
    pub fn for_lab(root: &Path, lab_dir: &Path, limits: Limits, tc: &Toolchain) -> Sandbox {
        let (rustup, cargo) = toolchain_homes();
        let mut readable = vec![rustup.clone()];
        // Of CARGO_HOME only what builds read: never its credentials.
        for part in ["bin", "registry", "git", "config.toml", "config"] {
            readable.push(cargo.join(part));
        }
        readable.extend([tc.kdir.clone(), tc.cache.clone()]);
        if let Ok(entries) = fs::read_dir(root) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                    if let Ok(target) = entry.path().canonicalize() {
                        readable.push(target);
                    }
                }
            }
        }
        let mut writable = both_forms(root);
        let lab_dir = absolute(lab_dir);
        let outside = !lab_dir.starts_with(absolute(root));
        if outside {
            writable.extend(both_forms(&lab_dir));
        }
        // A driver of one's own (`checker new-driver`) is a workspace of
        // its own, which builds against this checkout's kernel crate (its
        // Makefile and Cargo.toml name it by path): it reads the checkout.
        // A course workspace (the checkout, a graded copy) has its own
        // `kernel-crate/`, and never sees another.
        if outside || !root.join("kernel-crate").is_dir() {
            if let Ok(course) = crate::tools::workspace::root() {
                readable.extend(both_forms(&course));
            }
        }
        if let Some(target) = &tc.rust_target_dir {
            writable.extend(both_forms(target));
        }
        let scratch = absolute(root).join("target");
        let mut env = vec![
            ("RUSTUP_HOME".to_owned(), rustup.into_os_string()),
            ("CARGO_HOME".to_owned(), cargo.clone().into_os_string()),
            ("TMPDIR".to_owned(), "/tmp".into()),
        ];
        if let Some(t) = std::env::var_os("RUSTUP_TOOLCHAIN") {
            env.push(("RUSTUP_TOOLCHAIN".to_owned(), t));
        }
        let mut path = cargo.join("bin").into_os_string();
        path.push(":/usr/local/bin:/usr/bin:/bin");
        Sandbox {
            writable,
            readable,
            scratch,
            env,
            path,
            limits,
        }
    }

    /// The `prlimit … bwrap … -- program args` command that runs `cmd`
    /// (its program, arguments, folder and the variables it sets) in the
    /// sandbox.
    pub fn wrap(&self, cmd: &Command) -> Command {
        self.wrap_with_tmp(cmd, &self.scratch.join("sandbox-tmp"))
    }

    /// [`Sandbox::wrap`] with `tmp` as the sandbox's `/tmp`.
    fn wrap_with_tmp(&self, cmd: &Command, tmp: &Path) -> Command {
        let l = &self.limits;
        let mut w = Command::new("prlimit");
        w.arg(format!("--cpu={}:{}", l.cpu.as_secs(), l.cpu.as_secs() + 5))
            .arg(format!("--as={}", l.memory_mib << 20))
            .arg(format!("--fsize={}", FILE_SIZE_MIB << 20))
            .arg("--core=0")
            .arg("--")
            .arg("bwrap")
            .args(["--unshare-all", "--die-with-parent", "--new-session"])
            .args(["--uid", &SANDBOX_ID.to_string()])
            .args(["--gid", &SANDBOX_ID.to_string()])
            .args(["--ro-bind", "/usr", "/usr"]);
        for (link, to) in [
            ("/bin", "usr/bin"),
            ("/sbin", "usr/sbin"),
            ("/lib", "usr/lib"),
            ("/lib64", "usr/lib64"),
        ] {
            w.args(["--symlink", to, link]);
        }
        // The dynamic linker's cache, Debian's alternatives (cc, awk).
        for etc in ["/etc/ld.so.cache", "/etc/alternatives"] {
            w.args(["--ro-bind-try", etc, etc]);
        }
        w.args(["--dev", "/dev", "--proc", "/proc"]);
        // First: the folders bound next may be under /tmp (a test's).
        w.arg("--bind").arg(tmp).arg("/tmp");
        for p in &self.readable {
            w.arg("--ro-bind-try").arg(p).arg(p);
        }
        for p in &self.writable {
            w.arg("--bind").arg(p).arg(p);
        }
        w.arg("--clearenv")
            .args(["--setenv", "HOME", "/tmp"])
            .args(["--setenv".as_ref(), "PATH".as_ref(), self.path.as_os_str()]);
        let set = self
            .env
            .iter()
            .map(|(k, v)| (OsString::from(k), Some(v.clone())));
        let given = cmd
            .get_envs()
            .map(|(k, v)| (k.to_owned(), v.map(|v| v.to_owned())));
        for (k, v) in set.chain(given) {
            if let Some(v) = v {
                w.arg("--setenv").arg(k).arg(v);
            }
        }
        if let Some(dir) = cmd.get_current_dir() {
            w.arg("--chdir").arg(absolute(dir));
        }
        w.arg("--").arg(cmd.get_program()).args(cmd.get_args());
        w
    }

    /// Runs `cmd` in the sandbox, its output (stdout and stderr) into
    /// `log`; kills it at the wall-clock limit. The limit it hit, if any,
    /// is in the result, and said at the end of `log`.
    pub fn run(&self, cmd: &Command, log: &Path) -> Result<Finished> {
        // A cargo target folder may not exist yet (the debug kernel's, on
        // its first build): bwrap binds only what is there.
        for dir in self.writable.iter().chain([&self.scratch]) {
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let tmp = tempfile::Builder::new()
            .prefix("sandbox-tmp-")
            .tempdir_in(&self.scratch)
            .with_context(|| format!("cannot create a folder in {}", self.scratch.display()))?;
        let file =
            fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
        let started = Instant::now();
        let mut child = self
            .wrap_with_tmp(cmd, tmp.path())
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .spawn()
            .context("cannot start the sandbox (prlimit, bwrap): run `make setup`")?;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break Some(status);
            }
            if started.elapsed() >= self.limits.wall || ::vm::interrupted() {
                // bwrap's death takes the sandbox's pid 1, and with it
                // every process of its pid namespace.
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(25));
        };
        let time = started.elapsed();
        if ::vm::interrupted() {
            return Err(::vm::Interrupted.into());
        }
        let output = fs::read(log).unwrap_or_default();
        let (code, limit) = match status {
            None => (-1, Some(Limit::WallClock)),
            Some(s) => {
                let code = s.code().unwrap_or(-1);
                let limit = (code != 0).then(|| limit_in(&String::from_utf8_lossy(&output)));
                (code, limit.flatten())
            }
        };
        if sandbox_failed(&output) {
            bail!(
                "the sandbox (bwrap) could not start (`make setup` installs it): {}",
                String::from_utf8_lossy(&output).trim()
            );
        }
        if let Some(limit) = limit {
            let mut f = fs::OpenOptions::new().append(true).open(log)?;
            let said = match limit {
                Limit::WallClock => {
                    format!("killed after {} s", self.limits.wall.as_secs())
                }
                Limit::CpuTime => format!("CPU limit {} s", self.limits.cpu.as_secs()),
                Limit::Memory => format!("memory limit {} MiB", self.limits.memory_mib),
            };
            std::io::Write::write_all(
                &mut f,
                format!("checker: {} ({said})\n", limit.verdict()).as_bytes(),
            )?;
        }
        Ok(Finished { code, limit, time })
    }
}

/// bwrap or prlimit itself failed (no user namespaces, a missing folder,
/// no bwrap): its one message starts with `bwrap: ` or `prlimit: ` and
/// nothing else ran.
fn sandbox_failed(output: &[u8]) -> bool {
    let text = String::from_utf8_lossy(output);
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let ours = |l: &str| l.starts_with("bwrap: ") || l.starts_with("prlimit: ");
    lines.next().is_some_and(ours) && lines.next().is_none()
}

/// The limit a failed command's output says a process hit: a process
/// killed by `SIGXCPU`, or an allocation that failed (Rust's, LLVM's, the
/// C library's). Only whole lines count, as the tools print them, not a
/// student's source line that rustc quotes (`12 | ...`).
pub fn limit_in(output: &str) -> Option<Limit> {
    // rustc quotes source lines as `12 | code` and `   | label`.
    let quoted = |line: &str| {
        line.split_once('|')
            .is_some_and(|(before, _)| before.trim().chars().all(|c| c.is_ascii_digit()))
    };
    let mut found = None;
    for line in output.lines().map(str::trim).filter(|l| !quoted(l)) {
        if line.contains("SIGXCPU") || line.ends_with("CPU time limit exceeded") {
            return Some(Limit::CpuTime);
        }
        if (line.starts_with("memory allocation of ") && line.ends_with(" bytes failed"))
            || line.starts_with("LLVM ERROR: out of memory")
            || line.starts_with("fatal runtime error: out of memory")
            || line.contains("Cannot allocate memory")
            || line.starts_with("terminate called after throwing an instance of 'std::bad_alloc'")
        {
            found = Some(Limit::Memory);
        }
    }
    found
}

/// Fetches the crates the workspace at `root` needs, the `core` crate's
/// own included (`-Zbuild-std`), outside the sandbox, where the network
/// is: inside, cargo finds them in `CARGO_HOME` and works offline. A
/// failure is left for the build to report. Done once for each state of
/// the lock file and the toolchain pin (`fetch_key`), remembered in
/// `target/sandbox-fetched`: the two `cargo fetch` take most of the
/// sandbox's cost (0.1-0.8 s).
pub fn fetch(root: &Path) {
    let stamp = root.join("target").join("sandbox-fetched");
    let key = fetch_key(root);
    if fs::read_to_string(&stamp).is_ok_and(|k| k == key) {
        return;
    }
    let target = ["--target", "x86_64-unknown-none"];
    let mut ok = true;
    for args in [
        &[][..],
        &["-Zbuild-std=core,compiler_builtins", target[0], target[1]],
    ] {
        ok &= Command::new("cargo")
            .arg("fetch")
            .args(args)
            .current_dir(root)
            .env("RUSTC_BOOTSTRAP", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    }
    // Cargo may have written the lock file: the key after the fetch.
    if ok && fs::create_dir_all(stamp.parent().unwrap_or(root)).is_ok() {
        let _ = fs::write(&stamp, fetch_key(root));
    }
}

/// What the crates to fetch depend on: the lock file (its size and
/// modification time) and the toolchain pin (`rust-toolchain.toml`, whose
/// compiler's `core` has a lock file of its own).
fn fetch_key(root: &Path) -> String {
    let lock = fs::metadata(root.join("Cargo.lock"))
        .ok()
        .map(|m| (m.len(), m.modified().ok()));
    let pin = fs::read_to_string(root.join("rust-toolchain.toml")).unwrap_or_default();
    format!("{lock:?}\n{pin}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toolchain() -> Toolchain {
        Toolchain {
            abi: "6.1.0-57-amd64".into(),
            kdir: "/usr/src/linux-headers-6.1.0-57-amd64".into(),
            vmlinuz: "/cache/6.1/boot/vmlinuz".into(),
            boot_kernel: "/cache/6.1/vmlinux".into(),
            modules_dir: "/cache/6.1/lib/modules".into(),
            cache: "/cache".into(),
            debug: false,
            rust_target_dir: None,
        }
    }

    #[test]
    fn limits_come_from_the_lab_or_the_defaults() {
        assert_eq!(
            Limits::new(None, None),
            Limits {
                wall: Duration::from_secs(DEFAULT_BUILD_TIMEOUT_SECS),
                cpu: Duration::from_secs(2 * DEFAULT_BUILD_TIMEOUT_SECS),
                memory_mib: DEFAULT_BUILD_MEMORY_MIB,
            }
        );
        assert_eq!(Limits::new(Some(5), Some(512)).wall, Duration::from_secs(5));
        assert_eq!(Limits::new(Some(5), Some(512)).memory_mib, 512);
    }

    /// What a graded workspace's build sees: the workspace read-write, the
    /// course folders it links to read-only, never the course's root (its
    /// `labs/` holds the solutions, its `target/` the other students).
    #[test]
    fn a_graded_workspace_sees_itself_and_what_it_links_to() {
        let d = tempfile::tempdir().unwrap();
        let course = d.path().join("course");
        let ws = course.join("target/grade/work/alice/workspace");
        fs::create_dir_all(course.join("kernel-crate")).unwrap();
        fs::create_dir_all(ws.join("labs/lab-01")).unwrap();
        std::os::unix::fs::symlink(course.join("kernel-crate"), ws.join("kernel-crate")).unwrap();
        let lab_dir = ws.join("labs/lab-01");
        let sb = Sandbox::for_lab(&ws, &lab_dir, Limits::new(None, None), &toolchain());
        let course = course.canonicalize().unwrap();
        assert!(sb
            .writable
            .iter()
            .all(|p| p.starts_with(&ws) || p.starts_with(ws.canonicalize().unwrap())));
        assert!(sb.readable.contains(&course.join("kernel-crate")));
        assert!(!sb.readable.iter().chain(&sb.writable).any(|p| p == &course));
        assert!(sb
            .readable
            .contains(&PathBuf::from("/usr/src/linux-headers-6.1.0-57-amd64")));
        assert!(sb.readable.contains(&PathBuf::from("/cache")));
        // Of the cargo home, never the credentials.
        assert!(!sb
            .readable
            .iter()
            .any(|p| p.ends_with(".cargo") || p.ends_with("credentials.toml")));
    }

    #[test]
    fn the_command_runs_inside_with_an_empty_environment() {
        let sb = Sandbox::for_lab(
            Path::new("/w"),
            Path::new("/w/labs/lab-01"),
            Limits::new(Some(7), None),
            &toolchain(),
        );
        let mut cmd = Command::new("make");
        cmd.args(["-C", "/w/labs/lab-01"])
            .env("CARGO_TERM_COLOR", "never")
            .current_dir("/w");
        let w = sb.wrap(&cmd);
        let args: Vec<String> = w
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let line = args.join(" ");
        assert_eq!(w.get_program(), "prlimit");
        for want in [
            "--cpu=14:19 --as=8589934592",
            "-- bwrap --unshare-all --die-with-parent --new-session --uid 65534 --gid 65534",
            "--bind /w /w",
            "--clearenv --setenv HOME /tmp",
            "--setenv CARGO_TERM_COLOR never",
            "--chdir /w -- make -C /w/labs/lab-01",
        ] {
            assert!(line.contains(want), "{want:?} in {line}");
        }
        assert!(line.ends_with("-- make -C /w/labs/lab-01"), "{line}");
    }

    #[test]
    fn limits_are_read_from_whole_lines() {
        let cases = [
            (
                "memory allocation of 8589934592 bytes failed\n",
                Some(Limit::Memory),
            ),
            (
                "LLVM ERROR: out of memory\nAllocation failed\n",
                Some(Limit::Memory),
            ),
            (
                "error: could not compile `x`\nCaused by:\n  process didn't exit successfully: \
                 `rustc` (signal: 24, SIGXCPU: CPU time limit exceeded)\n",
                Some(Limit::CpuTime),
            ),
            ("make: *** [all] Error 2\n", None),
            // A student's line, quoted by rustc, is not the tool's.
            (
                "12 | // memory allocation of 1 bytes failed\n   | Cannot allocate memory\n",
                None,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(limit_in(text), want, "{text}");
        }
    }

    #[test]
    fn crates_are_fetched_again_when_the_lock_file_or_the_pin_changes() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("Cargo.lock"), "a").unwrap();
        let first = fetch_key(d.path());
        assert_eq!(fetch_key(d.path()), first);
        fs::write(d.path().join("Cargo.lock"), "ab").unwrap();
        let second = fetch_key(d.path());
        assert_ne!(second, first);
        fs::write(d.path().join("rust-toolchain.toml"), "channel = \"1.95.0\"").unwrap();
        assert_ne!(fetch_key(d.path()), second);
    }

    #[test]
    fn a_failure_of_bwrap_itself_is_told_apart() {
        assert!(sandbox_failed(
            b"bwrap: No permissions to creating new namespace\n"
        ));
        assert!(!sandbox_failed(b"bwrap: x\nmake: Entering directory\n"));
        assert!(!sandbox_failed(b"make: Entering directory\n"));
        assert!(sandbox_failed(
            b"prlimit: failed to execute bwrap: No such file or directory\n"
        ));
    }
}
