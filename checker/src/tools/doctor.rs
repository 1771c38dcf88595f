//! `checker doctor`: checks the set-up without changing anything, and
//! says for each problem what is wrong and how to fix it. It finds things
//! out the way `setup` does ([`crate::tools::probe`], [`crate::tools::setup`]'s package
//! sets, `vm::accel::cached_probe`).
//!
//! Checks: the host tools (QEMU, static busybox, make, gcc, clang); every
//! Debian package of the set-up's package sets (missing ones fail when a
//! lab needs them, warn when only the debug kernel does); the
//! kernel ABI and its headers; the guest kernel in the cache and whether
//! it is the same release as the headers (else modules will not load);
//! the Rust toolchain (`rust-src`, rustfmt, clippy, the
//! `x86_64-unknown-none` target);
//! KVM (present, openable, and what the cached probe found); stale caches
//! (guest kernels of older ABIs, an unpacked `vmlinux` older than its
//! `vmlinuz`, old `checker-vm-*` temporary folders).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use anyhow::Result;

use crate::{tools::probe, tools::setup};

/// How one check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Fine.
    Ok,
    /// Works, but could be better.
    Warn,
    /// Labs will not run.
    Fail,
}

/// One check's result: what was checked, what was found, and the fix.
#[derive(Debug, Clone)]
pub struct Check {
    /// How it went.
    pub status: Status,
    /// What was checked.
    pub what: String,
    /// What was found.
    pub found: String,
    /// How to fix it (empty when fine).
    pub fix: String,
}

fn check(status: Status, what: &str, found: impl Into<String>, fix: &str) -> Check {
    Check {
        status,
        what: what.to_owned(),
        found: found.into(),
        fix: fix.to_owned(),
    }
}

fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd
        .stderr(Stdio::null())
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_owned()
}

/// Runs every check.
pub fn checks() -> Vec<Check> {
    use Status::*;
    let mut v = Vec::new();

    // Host tools.
    for (tool, args, pkg) in [
        ("qemu-system-x86_64", "--version", "qemu-system-x86"),
        ("make", "--version", "make"),
        ("gcc", "--version", "gcc"),
        ("clang", "--version", "clang"),
        ("cpio", "--version", "cpio"),
    ] {
        match output(Command::new(tool).arg(args)) {
            Some(out) => v.push(check(Ok, tool, first_line(&out), "")),
            None => v.push(check(
                Fail,
                tool,
                "not found",
                &format!("`make setup` (or apt-get install {pkg})"),
            )),
        }
    }
    match probe::busybox() {
        probe::Busybox::Missing => v.push(check(
            Fail,
            "busybox",
            "missing",
            "`make setup` (busybox-static)",
        )),
        probe::Busybox::Dynamic => v.push(check(
            Fail,
            "busybox",
            "dynamically linked: the guest has no libc",
            "apt-get install busybox-static",
        )),
        probe::Busybox::Static => v.push(check(Ok, "busybox", "static", "")),
    }

    // Debian packages: a lab's are needed now, the debug kernel's only by
    // `make vm-debug` and `KERNEL=debug`, which install them.
    match setup::missing_from_sets() {
        Err(e) => v.push(check(Fail, "debian packages", format!("{e:#}"), "")),
        Result::Ok(missing) if missing.is_empty() => v.push(check(
            Ok,
            "debian packages",
            format!(
                "installed ({})",
                setup::PACKAGE_SETS
                    .iter()
                    .map(|s| s.what)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "",
        )),
        Result::Ok(missing) => {
            for (set, package) in missing {
                let (status, found) = if set.retry == setup::LAB_PACKAGES.retry {
                    (Fail, format!("{package} is missing ({})", set.what))
                } else {
                    (
                        Warn,
                        format!(
                            "{package} is missing ({}, needed by `{}`)",
                            set.what, set.retry
                        ),
                    )
                };
                v.push(check(
                    status,
                    "debian package",
                    found,
                    &format!("`{}` installs it (or apt-get install {package})", set.retry),
                ));
            }
        }
    }

    // Kernel ABI, headers, guest kernel.
    let cache = vm::cache_root();
    match probe::kernel_abi() {
        Err(e) => v.push(check(Fail, "kernel ABI", format!("{e:#}"), "`make setup`")),
        Result::Ok(abi) => {
            let kdir = probe::headers_dir(&abi);
            let release = probe::headers_release(&kdir);
            match &release {
                Some(r) => v.push(check(
                    Ok,
                    "kernel headers",
                    format!("{} ({r})", kdir.display()),
                    "",
                )),
                None => v.push(check(
                    Fail,
                    "kernel headers",
                    format!("{} is missing or incomplete", kdir.display()),
                    &format!("`make setup` (apt-get install linux-headers-{abi})"),
                )),
            }
            let guest = probe::GuestKernel::locate(&cache, &abi);
            let (abi_dir, vmlinuz) = (&guest.dir, &guest.vmlinuz);
            let guest_release = fs::read_dir(guest.dir.join("lib/modules"))
                .ok()
                .and_then(|d| d.flatten().next())
                .map(|e| e.file_name().to_string_lossy().into_owned());
            if !vmlinuz.is_file() {
                v.push(check(
                    Fail,
                    "guest kernel",
                    format!("{} is missing", vmlinuz.display()),
                    "`make setup` downloads it",
                ));
            } else if guest_release.is_some() && release.is_some() && guest_release != release {
                v.push(check(
                    Fail,
                    "guest kernel",
                    format!(
                        "{} but the headers are {}: modules will not load",
                        guest_release.unwrap_or_default(),
                        release.clone().unwrap_or_default()
                    ),
                    &format!("rm -rf {} && make setup", abi_dir.display()),
                ));
            } else {
                v.push(check(Ok, "guest kernel", vmlinuz.display().to_string(), ""));
            }
            let vmlinux = &guest.vmlinux;
            let mtime = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
            match (mtime(vmlinux), mtime(vmlinuz)) {
                (None, Some(_)) => v.push(check(
                    Warn,
                    "unpacked vmlinux",
                    "missing: boots take about 4 s longer",
                    "`make setup` unpacks it",
                )),
                (Some(a), Some(b)) if a < b => v.push(check(
                    Warn,
                    "unpacked vmlinux",
                    "older than vmlinuz (stale)",
                    &format!("rm {} && make setup", vmlinux.display()),
                )),
                _ => {}
            }
            // Guest kernels of other ABIs: left over from an older kernel.
            for e in fs::read_dir(&cache).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if e.path().is_dir() && name.ends_with("-amd64") && name != abi {
                    v.push(check(
                        Warn,
                        "stale cache",
                        format!("{} is for an older kernel ABI", e.path().display()),
                        &format!("rm -rf {}", e.path().display()),
                    ));
                }
            }
        }
    }

    // Rust.
    let root = crate::tools::workspace::root().ok();
    match probe::rust_sysroot() {
        Err(e) => v.push(check(
            Fail,
            "rust",
            format!("{e:#}"),
            "install rustup (https://rustup.rs), then `make setup`",
        )),
        Result::Ok(sys) => {
            let version = output(
                Command::new("rustc")
                    .arg("--version")
                    .current_dir(root.clone().unwrap_or_else(|| PathBuf::from("."))),
            )
            .unwrap_or_default();
            v.push(check(Ok, "rustc", version, ""));
            let (components, target_missing) = probe::rust_missing(&sys);
            for component in probe::RUST_COMPONENTS {
                if components.contains(component) {
                    v.push(check(
                        Fail,
                        component,
                        "missing",
                        &format!("rustup component add {component} (in the project folder)"),
                    ));
                } else {
                    v.push(check(Ok, component, "present", ""));
                }
            }
            let target = format!("target {}", probe::RUST_TARGET);
            if target_missing {
                v.push(check(
                    Fail,
                    &target,
                    "missing: core cannot be built for the kernel",
                    &format!(
                        "rustup target add {} (in the project folder)",
                        probe::RUST_TARGET
                    ),
                ));
            } else {
                v.push(check(Ok, &target, "present", ""));
            }
        }
    }

    // KVM.
    if !Path::new("/dev/kvm").exists() {
        v.push(check(
            Warn,
            "kvm",
            "no /dev/kvm: guests run under TCG (slower, still correct)",
            "enable virtualisation (or nested virtualisation) for this machine",
        ));
    } else if let Err(e) = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
    {
        v.push(check(
            Warn,
            "kvm",
            format!("/dev/kvm cannot be opened ({e}): guests run under TCG"),
            "add yourself to the kvm group (adduser $USER kvm), log in again",
        ));
    } else {
        match vm::accel::cached_probe(&cache) {
            Some(vm::accel::Accel::Tcg) => v.push(check(
                Warn,
                "kvm",
                "present but unusable: a KVM guest did not boot (cached probe); guests run under TCG",
                "nothing to do on machines whose KVM hangs; elsewhere check `dmesg` for kvm errors",
            )),
            Some(vm::accel::Accel::Kvm) => v.push(check(Ok, "kvm", "usable (cached probe)", "")),
            None => v.push(check(
                Ok,
                "kvm",
                "/dev/kvm opens; the first lab run probes whether guests boot with it",
                "",
            )),
        }
    }

    // Leftover temporary folders of killed runs.
    let old = SystemTime::now() - Duration::from_secs(3600);
    let stale: Vec<PathBuf> = fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("checker-vm-"))
        .filter(|e| {
            e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t < old)
        })
        .map(|e| e.path())
        .collect();
    if !stale.is_empty() {
        v.push(check(
            Warn,
            "temporary folders",
            format!(
                "{} checker-vm-* folders older than an hour (from killed runs)",
                stale.len()
            ),
            &format!("rm -rf {}/checker-vm-*", std::env::temp_dir().display()),
        ));
    }
    v
}

/// Prints the checks; true when none failed.
pub fn print(checks: &[Check]) -> bool {
    let width = checks.iter().map(|c| c.what.len()).max().unwrap_or(0);
    for c in checks {
        let word = match c.status {
            Status::Ok => "ok",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        };
        println!("{word:<4} {:<width$}  {}", c.what, c.found);
        if !c.fix.is_empty() {
            println!("     {:<width$}  fix: {}", "", c.fix);
        }
    }
    let fails = checks.iter().filter(|c| c.status == Status::Fail).count();
    let warns = checks.iter().filter(|c| c.status == Status::Warn).count();
    println!("doctor: {fails} problem(s), {warns} warning(s)");
    fails == 0
}

/// `checker doctor`.
pub fn run() -> Result<bool> {
    Ok(print(&checks()))
}
