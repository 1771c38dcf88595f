//! `checker chroot-check` (`make chroot-check`): the workbook set up from
//! nothing on a fresh Debian 13 (trixie) root, in a chroot, then lab 01
//! graded there: its skeleton must fail (exit 1, `FAIL` lines) and its
//! reference solution pass.
//!
//! The phases, each timed:
//!
//! 1. `debootstrap --variant=minbase trixie` into `<cache>/chroot/trixie`,
//!    once: the folder is reused while its completion marker is there
//!    (`--fresh` makes a new one). `debootstrap` itself is installed on the
//!    host first when missing, through the set-up's apt path.
//! 2. A copy of it, `<cache>/chroot/trixie-run`, for this run (so every run
//!    starts from nothing), with the host's `resolv.conf` and local
//!    certificate authorities (a TLS-inspecting proxy's), the usual trixie
//!    source lines, and a clean `git clone` of this repository's `HEAD` at
//!    `/work` (uncommitted changes are not in it).
//! 3. Mounts: the root on itself (`pivot_root` needs the new root to be
//!    a mount point), `/proc`, `/sys`, `/dev`, `/dev/pts`, and the host's
//!    `~/.cargo` and `~/.rustup` read-only (the Rust toolchain cannot be
//!    downloaded on the machines this was written on; glibc is newer in
//!    trixie, so the host's toolchain runs there).
//! 4. `.devcontainer/bootstrap.sh` inside (what the Containerfile and the
//!    dev container run), then `make lab-01` and `make lab-01 SOLUTION=1`
//!    (or those of the labs `--labs` names; a `drivers/NAME` there is
//!    graded once, by `checker lab drivers/NAME`, and must pass;
//!    `UPDATE_EXPECT` set on the host is passed in, so that snapshots of
//!    Debian 13's QEMU are recorded in the root's clone),
//!    each `chroot . /usr/bin/env -i ... /bin/bash -lc ...` in a private
//!    mount namespace whose root is ROOT (`pivot_root`): in a plain chroot
//!    the kernel refuses bubblewrap its user namespace. make exits
//!    2 when a recipe fails: the checker's own code is read from make's
//!    `Error N` line ([`checker_code`]).
//!
//! Whatever happens, the mounts are undone, in reverse order, lazily when
//! a process still holds one (a guard's `Drop`, also after Ctrl-C), and the
//! command says whether anything is still mounted under the root. No
//! folder is removed while anything is mounted below it: a bind mount under
//! a folder being removed would have the host's files removed with it.
//!
//! Exit codes: 0 when both verdicts are as expected; 1 when the set-up
//! inside the chroot or a verdict is not (the project fails on Debian 13);
//! 2 when the check itself could not run (not root, debootstrap, a mount).

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::tools::setup::{self, PackageSet};

/// The Debian release the check sets up.
pub const SUITE: &str = "trixie";

/// Debian's mirror for `debootstrap` and the root's source list.
pub const MIRROR: &str = "http://deb.debian.org/debian";

/// What the check needs on the host.
pub const HOST_PACKAGES: PackageSet = PackageSet {
    what: "chroot-check tools",
    packages: &["debootstrap"],
    retry: "make chroot-check",
};

/// Where the repository is inside the root.
pub const WORK: &str = "/work";

/// The root's `PATH` (Debian's root `PATH`, cargo's first).
pub const PATH: &str =
    "/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Options of `checker chroot-check`.
#[derive(Debug, Clone, clap::Args)]
pub struct ChrootArgs {
    /// Make a new debootstrap root instead of the cached one.
    #[arg(long)]
    pub fresh: bool,
    /// The labs graded inside, each skeleton then solution (comma
    /// separated).
    #[arg(long, value_delimiter = ',', default_value = "lab-01", value_parser = lab_name)]
    pub labs: Vec<String>,
    /// Then pretend to be Ubuntu 24.04 (its `/etc/os-release` over the
    /// Debian 13 userland) and set up and grade lab 01 again: the route of
    /// a host that is not Debian (the kernel from Debian's archive into
    /// the cache, its GCC), as Gradescope's images take it.
    #[arg(long)]
    pub as_ubuntu: bool,
}

/// Ubuntu 24.04's `/etc/os-release`, as `--as-ubuntu` writes it.
pub const UBUNTU_OS_RELEASE: &str = "PRETTY_NAME=\"Ubuntu 24.04 LTS\"\nNAME=\"Ubuntu\"\n\
    VERSION_ID=\"24.04\"\nVERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\n";

/// A lab's name as `--labs` takes it: `lab-` and two digits (it becomes
/// part of a shell command inside the root).
fn lab_name(s: &str) -> std::result::Result<String, String> {
    let digits = s.strip_prefix("lab-").unwrap_or("");
    let driver = s.strip_prefix("drivers/").unwrap_or("");
    let is_driver = !driver.is_empty()
        && driver
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if (digits.len() == 2 && digits.bytes().all(|b| b.is_ascii_digit())) || is_driver {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "{s:?} is not a lab's name (lab-NN) or a driver's folder (drivers/NAME)"
        ))
    }
}

/// The phases inside the root: the set-up, then for each lab its
/// skeleton (a graded failure) and its solution (a pass): what each is,
/// its log's name, its command, and the verdict it must give.
pub fn phases(labs: &[String], as_ubuntu: bool) -> Vec<(String, String, String, Expect)> {
    let mut out = vec![(
        "set-up inside (bootstrap.sh)".to_owned(),
        "setup".to_owned(),
        ".devcontainer/bootstrap.sh".to_owned(),
        Expect::Success,
    )];
    for lab in labs {
        if let Some(driver) = lab.strip_prefix("drivers/") {
            // A finished driver has no skeleton: it must pass. (A login
            // shell's PATH has no cargo: the Makefile adds it for `make`.)
            out.push((
                format!("checker lab {lab} (must pass)"),
                format!("drivers-{driver}"),
                format!(
                    "PATH=\"$HOME/.cargo/bin:$PATH\" cargo run --quiet --package checker -- lab {lab}"
                ),
                Expect::Passed,
            ));
            continue;
        }
        out.push((
            format!("make {lab} (skeleton: must fail)"),
            lab.clone(),
            format!("make {lab}"),
            Expect::GradedFailure,
        ));
        out.push((
            format!("make {lab} SOLUTION=1 (must pass)"),
            format!("{lab}-solution"),
            format!("make {lab} SOLUTION=1"),
            Expect::Passed,
        ));
    }
    if as_ubuntu {
        out.push((
            "as Ubuntu 24.04: set-up again (its os-release over Debian 13)".to_owned(),
            "ubuntu-setup".to_owned(),
            format!(
                "rm -f /etc/os-release && printf '{}' > /etc/os-release && make setup NO_BOOK=1",
                UBUNTU_OS_RELEASE.replace('\n', "\\n")
            ),
            Expect::Success,
        ));
        out.push((
            "as Ubuntu 24.04: make lab-01 (skeleton: must fail)".to_owned(),
            "ubuntu-lab-01".to_owned(),
            "make lab-01".to_owned(),
            Expect::GradedFailure,
        ));
        out.push((
            "as Ubuntu 24.04: make lab-01 SOLUTION=1 (must pass)".to_owned(),
            "ubuntu-lab-01-solution".to_owned(),
            "make lab-01 SOLUTION=1".to_owned(),
            Expect::Passed,
        ));
    }
    out
}

/// The folders of the check under the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct Folders {
    /// The debootstrap root, kept between runs: `<cache>/chroot/trixie`.
    pub base: PathBuf,
    /// Written once `base` is complete.
    pub marker: PathBuf,
    /// This run's copy of `base`: `<cache>/chroot/trixie-run`.
    pub run: PathBuf,
    /// The phases' logs: `<cache>/chroot/logs`.
    pub logs: PathBuf,
}

impl Folders {
    /// The folders under `cache`.
    pub fn under(cache: &Path) -> Folders {
        let dir = cache.join("chroot");
        Folders {
            base: dir.join(SUITE),
            marker: dir.join(format!("{SUITE}.complete")),
            run: dir.join(format!("{SUITE}-run")),
            logs: dir.join("logs"),
        }
    }
}

/// `debootstrap`'s command line for a minimal root of [`SUITE`] in `dir`.
pub fn debootstrap_command(dir: &Path) -> Vec<String> {
    vec![
        "debootstrap".into(),
        "--variant=minbase".into(),
        SUITE.into(),
        dir.display().to_string(),
        MIRROR.into(),
    ]
}

/// The root's `/etc/apt/sources.list`: a Debian 13 installation's suites.
pub fn sources_list() -> String {
    format!(
        "deb {MIRROR} {SUITE} main\n\
         deb {MIRROR} {SUITE}-updates main\n\
         deb http://deb.debian.org/debian-security {SUITE}-security main\n"
    )
}

/// One mount of the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// What is mounted (a host path).
    pub source: PathBuf,
    /// Where (a path on the host, under the root).
    pub target: PathBuf,
    /// Read-only (a bind mount remounted read-only).
    pub read_only: bool,
}

impl Mount {
    /// The `mount` commands that make it.
    pub fn commands(&self) -> Vec<Vec<String>> {
        let (s, t) = (
            self.source.display().to_string(),
            self.target.display().to_string(),
        );
        let mut cmds = vec![vec!["mount".into(), "--bind".into(), s, t.clone()]];
        if self.source == self.target {
            // The root on itself: nothing mounted below it shows elsewhere
            // (on a host whose `/` is shared, as systemd makes it).
            cmds.push(vec!["mount".into(), "--make-private".into(), t.clone()]);
        }
        if self.read_only {
            cmds.push(vec![
                "mount".into(),
                "-o".into(),
                "remount,bind,ro".into(),
                t,
            ]);
        }
        cmds
    }
}

/// The mounts of a run in `root`, in the order they are made (and undone
/// in reverse): the root on itself, `/proc`, `/sys`, `/dev`, `/dev/pts`,
/// then the host's cargo and rustup homes at `/root/.cargo` and
/// `/root/.rustup`, read-only.
pub fn mount_plan(root: &Path, cargo_home: &Path, rustup_home: &Path) -> Vec<Mount> {
    let bind = |source: &Path, inside: &str, read_only| Mount {
        source: source.to_path_buf(),
        target: root.join(inside.trim_start_matches('/')),
        read_only,
    };
    vec![
        Mount {
            source: root.to_path_buf(),
            target: root.to_path_buf(),
            read_only: false,
        },
        bind(Path::new("/proc"), "/proc", false),
        bind(Path::new("/sys"), "/sys", false),
        bind(Path::new("/dev"), "/dev", false),
        bind(Path::new("/dev/pts"), "/dev/pts", false),
        bind(cargo_home, "/root/.cargo", true),
        bind(rustup_home, "/root/.rustup", true),
    ]
}

/// What enters the root: a private mount namespace whose root mount
/// becomes `root` (`pivot_root . .`, then the old root detached), then
/// `chroot .`. A plain chroot would do for everything but the sandbox: the
/// kernel refuses a user namespace (bubblewrap's `--uid`) to a process
/// whose root is not its mount namespace's (EPERM, user_namespaces(7)).
const ENTER: &str = "cd \"$0\" && pivot_root . . && umount -l . && exec chroot . \"$@\"";

/// The command that runs `script` in `root` as root (see `ENTER`), with
/// a login shell and a clean environment: `HOME`, [`PATH`], `TERM`, a
/// UTF-8 locale, non-interactive apt.
pub fn chroot_command(root: &Path, term: &str, script: &str) -> Vec<String> {
    let mut cmd: Vec<String> = vec![
        "unshare".into(),
        "--mount".into(),
        "--propagation".into(),
        "private".into(),
        "/bin/sh".into(),
        "-c".into(),
        ENTER.into(),
        root.display().to_string(),
        "/usr/bin/env".into(),
        "-i".into(),
        "HOME=/root".into(),
        format!("PATH={PATH}"),
        format!("TERM={term}"),
        "LANG=C.UTF-8".into(),
        "DEBIAN_FRONTEND=noninteractive".into(),
    ];
    // Snapshots for Debian 13 (its QEMU's, `per_qemu`) are recorded inside:
    // they land in the root's clone, `<root>/work`.
    if let Some(update) = std::env::var_os("UPDATE_EXPECT") {
        cmd.push(format!("UPDATE_EXPECT={}", update.to_string_lossy()));
    }
    cmd.extend(["/bin/bash".into(), "-lc".into()]);
    cmd.push(format!("exec 2>&1; cd {WORK} && {script}"));
    cmd
}

/// Undoes the octal escapes of `/proc/self/mountinfo` (`\040` a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if let Some(d) = octal {
            out.push(d.iter().fold(0u8, |n, c| n.wrapping_mul(8) + (c - b'0')));
            i += 4;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount points at or below `dir` in a `/proc/self/mountinfo` text,
/// deepest first (the order to unmount them).
pub fn mounts_below(mountinfo: &str, dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|p| PathBuf::from(unescape(p)))
        .filter(|p| p.starts_with(dir))
        .collect();
    // Deepest first; a folder mounted twice is listed twice.
    found.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    found
}

fn mounted_below(dir: &Path) -> Result<Vec<PathBuf>> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .context("cannot read /proc/self/mountinfo")?;
    Ok(mounts_below(&text, dir))
}

/// What a passing check proved of `labs` (labs and drivers).
pub fn summary(labs: &[String]) -> String {
    let (drivers, labs): (Vec<&str>, Vec<&str>) = labs
        .iter()
        .map(String::as_str)
        .partition(|l| l.starts_with("drivers/"));
    let mut parts = Vec::new();
    if !labs.is_empty() {
        parts.push(format!(
            "the skeletons of {} failed and their solutions passed",
            labs.join(", ")
        ));
    }
    if !drivers.is_empty() {
        parts.push(format!("{} passed", drivers.join(", ")));
    }
    parts.join("; ")
}

/// What a phase inside the root must end with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// The set-up: exit 0.
    Success,
    /// The skeleton: graded and failed (exit 1), with `FAIL` lines.
    GradedFailure,
    /// The solution: passed (exit 0).
    Passed,
}

/// The checker's exit code behind `make`'s: make exits 2 whenever a
/// recipe fails, and says the recipe's code in its last `make: *** [..]
/// Error N` line.
pub fn checker_code(code: Option<i32>, output: &str) -> Option<i32> {
    if code != Some(2) {
        return code;
    }
    output
        .lines()
        .rev()
        .filter(|l| l.starts_with("make: *** ["))
        .find_map(|l| l.rsplit_once("] Error ")?.1.trim().parse().ok())
        .or(code)
}

/// Whether a phase ended as `expect` says, from the checker's exit code
/// (`None`: killed by a signal; see [`checker_code`]) and its output; `Err`
/// says why not.
pub fn verdict(expect: Expect, code: Option<i32>, output: &str) -> Result<(), String> {
    let fails = output
        .lines()
        .filter(|l| l.split_whitespace().next() == Some("FAIL"))
        .count();
    match (expect, code) {
        (_, None) => Err("killed by a signal".into()),
        (Expect::Success, Some(0)) => Ok(()),
        (Expect::Success, Some(c)) => Err(format!("exit {c}")),
        (Expect::Passed, Some(0)) if fails == 0 => Ok(()),
        (Expect::Passed, Some(0)) => Err(format!("exit 0 but {fails} FAIL lines")),
        (Expect::Passed, Some(1)) => Err(format!("graded and failed (exit 1, {fails} FAIL lines)")),
        (Expect::GradedFailure, Some(1)) if fails > 0 => Ok(()),
        (Expect::GradedFailure, Some(1)) => Err("exit 1 but no FAIL line".into()),
        (Expect::GradedFailure, Some(0)) => Err("the skeleton passed (exit 0)".into()),
        (_, Some(2)) => Err("the checker or the set-up failed (exit 2)".into()),
        (_, Some(c)) => Err(format!("exit {c}")),
    }
}

/// The mounts made so far; dropping it undoes them (see the module
/// documentation).
struct Mounted {
    root: PathBuf,
    targets: Vec<PathBuf>,
}

impl Mounted {
    fn mount(&mut self, m: &Mount) -> Result<()> {
        std::fs::create_dir_all(&m.target)
            .with_context(|| format!("cannot create {}", m.target.display()))?;
        for (i, cmd) in m.commands().iter().enumerate() {
            let done = host(cmd);
            if i == 0 && done.is_ok() {
                self.targets.push(m.target.clone());
            }
            done?;
        }
        Ok(())
    }

    /// Undoes every mount, newest first; returns what is still mounted
    /// under the root.
    fn undo(&mut self) -> Vec<PathBuf> {
        while let Some(t) = self.targets.pop() {
            unmount(&t);
        }
        // Anything else below the root (a leftover, a mount made inside).
        for t in mounted_below(&self.root).unwrap_or_default() {
            unmount(&t);
        }
        mounted_below(&self.root).unwrap_or_else(|_| vec![self.root.clone()])
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let left = self.undo();
        if !left.is_empty() {
            eprintln!(
                "chroot-check: still mounted after umount -l: {}",
                left.iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}

/// `umount`, then `umount -l` when it is busy.
fn unmount(target: &Path) {
    let t = target.display().to_string();
    if host(&["umount".into(), t.clone()]).is_err() {
        let _ = host(&["umount".into(), "-l".into(), t]);
    }
}

/// Removes `dir` after undoing every mount below it; refuses while
/// anything is still mounted there.
fn remove_root(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    for t in mounted_below(dir)? {
        println!("chroot-check: unmounting the leftover {}", t.display());
        unmount(&t);
    }
    let left = mounted_below(dir)?;
    if !left.is_empty() {
        bail!(
            "refusing to remove {}: still mounted below it: {}",
            dir.display(),
            left.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    std::fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))
}

/// Runs a host command; its stderr is in the error.
fn host(cmd: &[String]) -> Result<()> {
    let out = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", cmd[0]))?;
    if !out.status.success() {
        bail!(
            "`{}` failed ({}): {}",
            cmd.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Runs `cmd`, its output going to the terminal and to `log`; returns
/// its exit code and output.
fn stream(cmd: &[String], log: &Path) -> Result<(Option<i32>, String)> {
    let mut child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {}", cmd[0]))?;
    let mut file =
        std::fs::File::create(log).with_context(|| format!("cannot write {}", log.display()))?;
    let mut reader = std::io::BufReader::new(child.stdout.take().context("no stdout")?);
    let mut all = String::new();
    let mut line = Vec::new();
    let stdout = std::io::stdout();
    while reader.read_until(b'\n', &mut line)? > 0 {
        let text = String::from_utf8_lossy(&line);
        let mut out = stdout.lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        let _ = file.write_all(&line);
        all.push_str(&text);
        line.clear();
    }
    let status = child.wait()?;
    Ok((status.code(), all))
}

/// One phase's line of the summary.
struct Timed {
    what: String,
    seconds: f64,
    result: Result<(), String>,
}

fn is_root() -> bool {
    // The check mounts and chroots: root only.
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        == Some("0")
}

fn home_dir(var: &str, default: &str) -> Result<PathBuf> {
    if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(v));
    }
    let home = std::env::var_os("HOME").context("HOME is not set")?;
    Ok(PathBuf::from(home).join(default))
}

/// `checker chroot-check`: see the module documentation. Ok(true) when
/// both verdicts are as expected, Ok(false) when the project failed in the
/// chroot, Err when the check could not run.
pub fn run(workspace: &Path, cache: &Path, args: &ChrootArgs) -> Result<bool> {
    if !is_root() {
        bail!("chroot-check needs root (it runs debootstrap, mount and chroot)");
    }
    let all = Instant::now();
    let dirs = Folders::under(cache);
    let cargo_home = home_dir("CARGO_HOME", ".cargo")?;
    let rustup_home = home_dir("RUSTUP_HOME", ".rustup")?;
    for dir in [&cargo_home, &rustup_home] {
        if !dir.is_dir() {
            bail!(
                "no {} on this machine: install Rust with rustup first",
                dir.display()
            );
        }
    }
    setup::ensure_packages(&HOST_PACKAGES, true)?;
    std::fs::create_dir_all(&dirs.logs)?;
    let mut times: Vec<Timed> = Vec::new();

    // 1. The debootstrap root, cached.
    let started = Instant::now();
    if args.fresh || !dirs.marker.is_file() {
        let _ = std::fs::remove_file(&dirs.marker);
        remove_root(&dirs.base)?;
        let cmd = debootstrap_command(&dirs.base);
        println!("chroot-check: {} (about 2 minutes)", cmd.join(" "));
        let (code, _) = stream(&cmd, &dirs.logs.join("debootstrap.log"))?;
        if code != Some(0) {
            bail!(
                "debootstrap failed (exit {code:?}); its log: {}",
                dirs.logs.join("debootstrap.log").display()
            );
        }
        std::fs::write(&dirs.marker, format!("{SUITE}\n"))?;
        times.push(timed("debootstrap (minbase)", started, Ok(())));
    } else {
        println!(
            "chroot-check: debootstrap root ... ok (cached in {}; --fresh makes a new one)",
            dirs.base.display()
        );
        times.push(timed("debootstrap (cached)", started, Ok(())));
    }
    check_interrupted()?;

    // 2. This run's root: a copy, with the repository.
    let started = Instant::now();
    remove_root(&dirs.run)?;
    host(&[
        "cp".into(),
        "-a".into(),
        "--reflink=auto".into(),
        dirs.base.display().to_string(),
        dirs.run.display().to_string(),
    ])?;
    std::fs::copy("/etc/resolv.conf", dirs.run.join("etc/resolv.conf"))
        .context("cannot copy /etc/resolv.conf into the root")?;
    std::fs::write(dirs.run.join("etc/apt/sources.list"), sources_list())?;
    copy_local_cas(&dirs.run)?;
    let head = git_head(workspace)?;
    let work = dirs.run.join(WORK.trim_start_matches('/'));
    host(&[
        "git".into(),
        "clone".into(),
        "--quiet".into(),
        "--no-hardlinks".into(),
        workspace.display().to_string(),
        work.display().to_string(),
    ])?;
    host(&[
        "git".into(),
        "-C".into(),
        work.display().to_string(),
        "checkout".into(),
        "--quiet".into(),
        "--detach".into(),
        head.clone(),
    ])?;
    println!(
        "chroot-check: {} with a clone of {} at {WORK}{}",
        dirs.run.display(),
        &head[..head.len().min(12)],
        if git_dirty(workspace) {
            " (uncommitted changes here are not in it)"
        } else {
            ""
        }
    );
    times.push(timed("copy of the root, git clone", started, Ok(())));
    check_interrupted()?;

    // 3. Mounts, undone whatever happens next.
    let mut mounted = Mounted {
        root: dirs.run.clone(),
        targets: Vec::new(),
    };
    for m in mount_plan(&dirs.run, &cargo_home, &rustup_home) {
        mounted.mount(&m)?;
    }

    // 4. The phases inside.
    let term = std::env::var("TERM")
        .ok()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "dumb".into());
    let mut passed = true;
    for (what, log, script, expect) in phases(&args.labs, args.as_ubuntu) {
        let started = Instant::now();
        println!("chroot-check: {what} ...");
        let cmd = chroot_command(&dirs.run, &term, &script);
        let (code, output) = stream(&cmd, &dirs.logs.join(format!("{log}.log")))?;
        check_interrupted()?;
        let result = verdict(expect, checker_code(code, &output), &output);
        println!(
            "chroot-check: {what} ... {} ({:.0} s)",
            match &result {
                Ok(()) => "ok".to_owned(),
                Err(e) => format!("WRONG: {e}"),
            },
            started.elapsed().as_secs_f64()
        );
        let setup_failed = expect == Expect::Success && result.is_err();
        passed &= result.is_ok();
        times.push(timed(&what, started, result));
        if setup_failed {
            break;
        }
    }

    // 5. Unmount, and say that nothing is left.
    let left = mounted.undo();
    drop(mounted);
    if !left.is_empty() {
        bail!(
            "still mounted under {}: {}",
            dirs.run.display(),
            left.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!(
        "chroot-check: unmounted; nothing is mounted under {}",
        dirs.run.display()
    );
    println!("chroot-check: times");
    for t in &times {
        println!(
            "  {:<40} {:>6.0} s  {}",
            t.what,
            t.seconds,
            match &t.result {
                Ok(()) => "ok".to_owned(),
                Err(e) => format!("WRONG: {e}"),
            }
        );
    }
    println!(
        "chroot-check: {} in {:.0} s (logs in {}; the root stays in {} until the next run)",
        if passed {
            format!(
                "Debian 13 set up from nothing; {}{}",
                summary(&args.labs),
                if args.as_ubuntu {
                    "; as Ubuntu 24.04, lab-01's skeleton failed and its solution passed"
                } else {
                    ""
                }
            )
        } else {
            "FAILED on Debian 13".to_owned()
        },
        all.elapsed().as_secs_f64(),
        dirs.logs.display(),
        dirs.run.display()
    );
    Ok(passed)
}

/// The host's own certificate authorities (`/usr/local/share/ca-certificates`,
/// e.g. a network's TLS-inspecting proxy) into the root, where the
/// `ca-certificates` that the set-up installs adds them to the trust store
/// (npm and curl need them behind such a proxy, as on the host).
fn copy_local_cas(root: &Path) -> Result<()> {
    const LOCAL: &str = "usr/local/share/ca-certificates";
    let Ok(entries) = std::fs::read_dir(Path::new("/").join(LOCAL)) else {
        return Ok(());
    };
    let dest = root.join(LOCAL);
    std::fs::create_dir_all(&dest)?;
    for e in entries.flatten() {
        if e.path().extension().is_some_and(|x| x == "crt") {
            std::fs::copy(e.path(), dest.join(e.file_name()))
                .with_context(|| format!("cannot copy {}", e.path().display()))?;
        }
    }
    Ok(())
}

fn timed(what: &str, started: Instant, result: Result<(), String>) -> Timed {
    Timed {
        what: what.to_owned(),
        seconds: started.elapsed().as_secs_f64(),
        result,
    }
}

fn check_interrupted() -> Result<()> {
    if vm::interrupted() {
        return Err(vm::Interrupted.into());
    }
    Ok(())
}

fn git_head(workspace: &Path) -> Result<String> {
    let out = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(workspace)
        .output()
        .context("cannot run git")?;
    if !out.status.success() {
        bail!("{} is not a git repository", workspace.display());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn git_dirty(workspace: &Path) -> bool {
    Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .current_dir(workspace)
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_labs_and_drivers_apart() {
        let labs = |l: &[&str]| summary(&l.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            labs(&["lab-01", "lab-11", "drivers/nvme"]),
            "the skeletons of lab-01, lab-11 failed and their solutions passed; drivers/nvme passed"
        );
        assert_eq!(labs(&["drivers/nvme"]), "drivers/nvme passed");
    }

    #[test]
    fn as_ubuntu_sets_up_and_grades_lab_01_again_last() {
        let got: Vec<(String, Expect)> = phases(&["lab-01".into()], true)
            .into_iter()
            .skip(3)
            .map(|(_, log, script, expect)| (format!("{log}: {script}"), expect))
            .collect();
        assert_eq!(got.len(), 3);
        assert!(got[0].0.starts_with("ubuntu-setup: rm -f /etc/os-release && printf 'PRETTY_NAME=\"Ubuntu 24.04 LTS\"\\nNAME="));
        assert!(got[0]
            .0
            .ends_with("ID=ubuntu\\nID_LIKE=debian\\n' > /etc/os-release && make setup NO_BOOK=1"));
        assert_eq!(
            got[1],
            ("ubuntu-lab-01: make lab-01".into(), Expect::GradedFailure)
        );
        assert_eq!(
            got[2],
            (
                "ubuntu-lab-01-solution: make lab-01 SOLUTION=1".into(),
                Expect::Passed
            )
        );
    }

    #[test]
    fn a_driver_is_graded_once_and_must_pass() {
        let got: Vec<(String, Expect)> = phases(&["drivers/nvme".into()], false)
            .into_iter()
            .skip(1)
            .map(|(_, log, script, expect)| (format!("{log}: {script}"), expect))
            .collect();
        assert_eq!(
            got,
            [(
                "drivers-nvme: PATH=\"$HOME/.cargo/bin:$PATH\" cargo run --quiet --package checker -- lab drivers/nvme".into(),
                Expect::Passed
            )]
        );
    }

    #[test]
    fn each_lab_is_graded_twice_after_the_set_up() {
        let got: Vec<(String, Expect)> = phases(&["lab-01".into(), "lab-11".into()], false)
            .into_iter()
            .map(|(_, log, script, expect)| (format!("{log}: {script}"), expect))
            .collect();
        assert_eq!(
            got,
            [
                ("setup: .devcontainer/bootstrap.sh".into(), Expect::Success),
                ("lab-01: make lab-01".into(), Expect::GradedFailure),
                (
                    "lab-01-solution: make lab-01 SOLUTION=1".into(),
                    Expect::Passed
                ),
                ("lab-11: make lab-11".into(), Expect::GradedFailure),
                (
                    "lab-11-solution: make lab-11 SOLUTION=1".into(),
                    Expect::Passed
                ),
            ]
        );
        assert_eq!(lab_name("lab-04"), Ok("lab-04".into()));
        assert_eq!(lab_name("drivers/nvme"), Ok("drivers/nvme".into()));
        for bad in [
            "lab-4",
            "lab-041",
            "lab-01; rm -rf /",
            "drivers/",
            "drivers/nvme; true",
            "drivers/../x",
            "",
        ] {
            assert!(lab_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn debootstrap_is_minbase_trixie() {
        assert_eq!(
            debootstrap_command(Path::new("/c/chroot/trixie")).join(" "),
            "debootstrap --variant=minbase trixie /c/chroot/trixie http://deb.debian.org/debian"
        );
        let f = Folders::under(Path::new("/c"));
        assert_eq!(f.base, Path::new("/c/chroot/trixie"));
        assert_eq!(f.run, Path::new("/c/chroot/trixie-run"));
        assert_eq!(f.marker, Path::new("/c/chroot/trixie.complete"));
        assert!(sources_list().contains("trixie-security main"));
    }

    #[test]
    fn the_mounts_in_order() {
        let plan = mount_plan(
            Path::new("/r"),
            Path::new("/home/u/.cargo"),
            Path::new("/home/u/.rustup"),
        );
        let cmds: Vec<String> = plan
            .iter()
            .flat_map(Mount::commands)
            .map(|c| c.join(" "))
            .collect();
        expect_test::expect![[r#"
            mount --bind /r /r
            mount --make-private /r
            mount --bind /proc /r/proc
            mount --bind /sys /r/sys
            mount --bind /dev /r/dev
            mount --bind /dev/pts /r/dev/pts
            mount --bind /home/u/.cargo /r/root/.cargo
            mount -o remount,bind,ro /r/root/.cargo
            mount --bind /home/u/.rustup /r/root/.rustup
            mount -o remount,bind,ro /r/root/.rustup"#]]
        .assert_eq(&cmds.join("\n"));
        // Every target is inside the root.
        assert!(plan.iter().all(|m| m.target.starts_with("/r")));
    }

    #[test]
    fn the_chroot_command_has_a_clean_environment() {
        let cmd = chroot_command(Path::new("/r"), "xterm", "make lab-01");
        assert_eq!(
            cmd[..8],
            [
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "/bin/sh",
                "-c",
                "cd \"$0\" && pivot_root . . && umount -l . && exec chroot . \"$@\"",
                "/r"
            ]
        );
        assert_eq!(cmd[8..10], ["/usr/bin/env", "-i"]);
        assert!(cmd.contains(&"HOME=/root".to_owned()));
        assert!(cmd.contains(&"TERM=xterm".to_owned()));
        assert!(cmd.iter().any(|a| a.starts_with("PATH=/root/.cargo/bin:")));
        assert_eq!(
            cmd[cmd.len() - 3..],
            ["/bin/bash", "-lc", "exec 2>&1; cd /work && make lab-01"]
        );
    }

    #[test]
    fn mounts_below_a_folder_deepest_first() {
        let info = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 0:5 / /c/chroot/trixie-run rw - ext4 /dev/vda rw
31 30 0:5 / /c/chroot/trixie-run/proc rw - proc proc rw
32 30 0:6 / /c/chroot/trixie-run/dev rw - devtmpfs udev rw
33 32 0:7 / /c/chroot/trixie-run/dev/pts rw - devpts devpts rw
34 22 0:8 / /c/chroot/trixie-run2 rw - ext4 /dev/vda rw
35 22 0:9 / /c/chroot/with\\040space rw - ext4 /dev/vda rw
";
        let found = mounts_below(info, Path::new("/c/chroot/trixie-run"));
        assert_eq!(found[0], Path::new("/c/chroot/trixie-run/dev/pts"));
        assert_eq!(found.last().unwrap(), Path::new("/c/chroot/trixie-run"));
        assert_eq!(found.len(), 4, "{found:?}");
        assert_eq!(
            mounts_below(info, Path::new("/c/chroot/with space")),
            [Path::new("/c/chroot/with space")]
        );
        assert!(mounts_below(info, Path::new("/elsewhere")).is_empty());
    }

    #[test]
    fn the_checkers_code_behind_makes() {
        let out = "FAIL  01 load\nmake: *** [Makefile:45: lab-01] Error 1\n";
        assert_eq!(checker_code(Some(2), out), Some(1));
        let err = "checker: error: x\nmake: *** [Makefile:45: lab-01] Error 2\n";
        assert_eq!(checker_code(Some(2), err), Some(2));
        assert_eq!(checker_code(Some(2), "no make line\n"), Some(2));
        assert_eq!(checker_code(Some(0), out), Some(0));
        assert_eq!(checker_code(None, out), None);
        assert_eq!(
            checker_code(Some(2), "make: *** [Makefile:45: lab-01] Interrupt\n"),
            Some(2)
        );
    }

    #[test]
    fn verdicts_from_exit_codes_and_output() {
        let fails = "building ...\nFAIL  01 load    (0.2 s)\nPASS  02 unload\nscore 0/10\n";
        let passes = "PASS  01 load\nPASS  02 unload\n";
        use Expect::*;
        assert_eq!(verdict(GradedFailure, Some(1), fails), Ok(()));
        assert!(verdict(GradedFailure, Some(1), passes).is_err());
        assert!(verdict(GradedFailure, Some(0), passes).is_err());
        assert!(verdict(GradedFailure, Some(2), "checker: error: x\n")
            .unwrap_err()
            .contains("exit 2"));
        assert_eq!(verdict(Passed, Some(0), passes), Ok(()));
        assert!(verdict(Passed, Some(0), fails).is_err());
        assert!(verdict(Passed, Some(1), fails).is_err());
        assert!(verdict(Passed, None, passes).is_err());
        assert_eq!(verdict(Success, Some(0), ""), Ok(()));
        assert!(verdict(Success, Some(100), "").is_err());
    }
}
