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

use std::path::Path;

use anyhow::Result;

use crate::{tools::probe, tools::setup};
use Health::{Fail, Warn};

/// How one check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
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
    pub status: Health,
    /// What was checked.
    pub what: String,
    /// What was found.
    pub found: String,
    /// How to fix it (empty when fine).
    pub fix: String,
}

fn check(status: Health, what: &str, found: impl Into<String>, fix: &str) -> Check {
    Check {
        status,
        what: what.to_owned(),
        found: found.into(),
        fix: fix.to_owned(),
    }
}

/// Runs every check.
pub fn checks() -> Vec<Check> {
    let cache = vm::cache_root();
    let mut v = host_tools();
    v.push(busybox());
    v.extend(debian_packages());
    v.extend(kernel(&cache));
    v.extend(rust());
    v.push(kvm(&cache));
    v.extend(temporary_folders());
    v
}

/// The host tools the build and the guest need.
fn host_tools() -> Vec<Check> {
    [
        ("qemu-system-x86_64", "qemu-system-x86"),
        ("make", "make"),
        ("gcc", "gcc"),
        ("clang", "clang"),
        ("cpio", "cpio"),
    ]
    .into_iter()
    .map(|(tool, pkg)| match probe::version(tool) {
        Some(version) => check(Health::Ok, tool, version, ""),
        None => check(
            Fail,
            tool,
            "not found",
            &format!("`make setup` (or apt-get install {pkg})"),
        ),
    })
    .collect()
}

/// The static busybox the initramfs is made of.
fn busybox() -> Check {
    match probe::busybox() {
        probe::Busybox::Missing => {
            check(Fail, "busybox", "missing", "`make setup` (busybox-static)")
        }
        probe::Busybox::Dynamic => check(
            Fail,
            "busybox",
            "dynamically linked: the guest has no libc",
            "apt-get install busybox-static",
        ),
        probe::Busybox::Static => check(Health::Ok, "busybox", "static", ""),
    }
}

/// The set-up's Debian packages: a lab's are needed now, the debug
/// kernel's only by `make vm-debug` and `KERNEL=debug`, which install them.
fn debian_packages() -> Vec<Check> {
    let missing = match setup::missing_from_sets() {
        Err(e) => return vec![check(Fail, "debian packages", format!("{e:#}"), "")],
        Ok(missing) => missing,
    };
    if missing.is_empty() {
        let sets: Vec<_> = setup::package_sets().iter().map(|s| s.what).collect();
        let found = format!("installed ({})", sets.join(", "));
        return vec![check(Health::Ok, "debian packages", found, "")];
    }
    missing
        .into_iter()
        .map(|(set, package)| {
            let (status, found) = if set.retry == setup::LAB_PACKAGES.retry {
                (Fail, format!("{package} is missing ({})", set.what))
            } else {
                let found = format!(
                    "{package} is missing ({}, needed by `{}`)",
                    set.what, set.retry
                );
                (Warn, found)
            };
            let fix = format!("`{}` installs it (or apt-get install {package})", set.retry);
            check(status, "debian package", found, &fix)
        })
        .collect()
}

/// The kernel ABI, its headers and the guest kernel of that ABI in the
/// cache.
fn kernel(cache: &Path) -> Vec<Check> {
    let abi = match crate::tools::guest::host_abi() {
        Err(e) => return vec![check(Fail, "kernel ABI", format!("{e:#}"), "`make setup`")],
        Ok(abi) => abi,
    };
    let kdir = crate::tools::guest::host_headers(&abi);
    let release = probe::headers_release(&kdir);
    let guest = probe::GuestKernel::locate(cache, &abi);
    let mut v = vec![headers(&kdir, &abi, release.as_deref())];
    v.push(guest_kernel(&guest, release.as_deref()));
    v.extend(unpacked_vmlinux(&guest));
    // The default is the host's series (Debian's headers), or on a host
    // that is not Debian a series of the cache's.
    let default = crate::tools::guest::series_of(&abi).unwrap_or_default();
    let others: Vec<_> = crate::tools::guest::cached(cache)
        .into_iter()
        .filter(|(_, a)| *a != abi)
        .collect();
    let mut names = vec![format!("{default}: {abi} (default)")];
    names.extend(others.iter().map(|(s, a)| format!("{}: {a}", s.arg())));
    if others.is_empty() {
        let other = if default == "6.12" { "6.1" } else { "6.12" };
        names.push(format!(
            "{other}: not downloaded (`GUEST={other}` fetches it)"
        ));
    }
    v.push(check(Health::Ok, "guest kernels", names.join(", "), ""));
    v.extend(
        probe::other_guest_kernels(cache, &abi)
            .into_iter()
            .filter(|dir| !others.iter().any(|(_, a)| dir.ends_with(a)))
            .map(|dir| {
                check(
                    Warn,
                    "stale cache",
                    format!("{} is for an older kernel ABI", dir.display()),
                    &format!("rm -rf {}", dir.display()),
                )
            }),
    );
    v
}

/// Debian's headers for `abi` in `kdir`, of kernel `release`.
fn headers(kdir: &Path, abi: &str, release: Option<&str>) -> Check {
    match release {
        Some(r) => check(
            Health::Ok,
            "kernel headers",
            format!("{} ({r})", kdir.display()),
            "",
        ),
        None => check(
            Fail,
            "kernel headers",
            format!("{} is missing or incomplete", kdir.display()),
            &format!("`make setup` (apt-get install linux-headers-{abi})"),
        ),
    }
}

/// The guest kernel, and that it is the headers' `release` (else modules
/// built against the headers do not load).
fn guest_kernel(guest: &probe::GuestKernel, release: Option<&str>) -> Check {
    let guest_release = guest.release();
    if !guest.vmlinuz.is_file() {
        check(
            Fail,
            "guest kernel",
            format!("{} is missing", guest.vmlinuz.display()),
            "`make setup` downloads it",
        )
    } else if let (Some(g), Some(h)) = (guest_release.as_deref(), release) {
        if g == h {
            check(
                Health::Ok,
                "guest kernel",
                guest.vmlinuz.display().to_string(),
                "",
            )
        } else {
            check(
                Fail,
                "guest kernel",
                format!("{g} but the headers are {h}: modules will not load"),
                &format!("rm -rf {} && make setup", guest.dir.display()),
            )
        }
    } else {
        check(
            Health::Ok,
            "guest kernel",
            guest.vmlinuz.display().to_string(),
            "",
        )
    }
}

/// The `vmlinux` unpacked from the guest kernel, which boots faster.
fn unpacked_vmlinux(guest: &probe::GuestKernel) -> Option<Check> {
    match guest.unpacked() {
        probe::Unpacked::Missing => Some(check(
            Warn,
            "unpacked vmlinux",
            "missing: boots take about 4 s longer",
            "`make setup` unpacks it",
        )),
        probe::Unpacked::Stale => Some(check(
            Warn,
            "unpacked vmlinux",
            "older than vmlinuz (stale)",
            &format!("rm {} && make setup", guest.vmlinux.display()),
        )),
        probe::Unpacked::Fresh => None,
    }
}

/// `rustc`, the labs' components and the kernel's target.
fn rust() -> Vec<Check> {
    let sys = match probe::rust_sysroot() {
        Err(e) => {
            return vec![check(
                Fail,
                "rust",
                format!("{e:#}"),
                "install rustup (https://rustup.rs), then `make setup`",
            )]
        }
        Ok(sys) => sys,
    };
    let mut v = vec![check(Health::Ok, "rustc", probe::rustc_version(), "")];
    let (components, target_missing) = probe::rust_missing(&sys);
    for component in probe::RUST_COMPONENTS {
        v.push(if components.contains(component) {
            check(
                Fail,
                component,
                "missing",
                &format!("rustup component add {component} (in the project folder)"),
            )
        } else {
            check(Health::Ok, component, "present", "")
        });
    }
    let target = format!("target {}", probe::RUST_TARGET);
    v.push(if target_missing {
        check(
            Fail,
            &target,
            "missing: core cannot be built for the kernel",
            &format!(
                "rustup target add {} (in the project folder)",
                probe::RUST_TARGET
            ),
        )
    } else {
        check(Health::Ok, &target, "present", "")
    });
    v
}

/// KVM: present, openable, and what the cached probe found.
fn kvm(cache: &Path) -> Check {
    match probe::kvm(cache) {
        probe::Kvm::Missing => check(
            Warn,
            "kvm",
            "no /dev/kvm: guests run under TCG (slower, still correct)",
            "enable virtualisation (or nested virtualisation) for this machine",
        ),
        probe::Kvm::Closed(e) => check(
            Warn,
            "kvm",
            format!("/dev/kvm cannot be opened ({e}): guests run under TCG"),
            "add yourself to the kvm group (adduser $USER kvm), log in again",
        ),
        probe::Kvm::Opens(Some(vm::accel::Accel::Tcg)) => check(
            Warn,
            "kvm",
            "present but unusable: a KVM guest did not boot (cached probe); guests run under TCG",
            "nothing to do on machines whose KVM hangs; elsewhere check `dmesg` for kvm errors",
        ),
        probe::Kvm::Opens(Some(vm::accel::Accel::Kvm)) => {
            check(Health::Ok, "kvm", "usable (cached probe)", "")
        }
        probe::Kvm::Opens(None) => check(
            Health::Ok,
            "kvm",
            "/dev/kvm opens; the first lab run probes whether guests boot with it",
            "",
        ),
    }
}

/// Leftover temporary folders of killed runs.
fn temporary_folders() -> Option<Check> {
    let stale = probe::stale_guest_folders();
    (!stale.is_empty()).then(|| {
        check(
            Warn,
            "temporary folders",
            format!(
                "{} checker-vm-* folders older than an hour (from killed runs)",
                stale.len()
            ),
            &format!("rm -rf {}/checker-vm-*", std::env::temp_dir().display()),
        )
    })
}

/// Prints the checks; true when none failed.
pub fn print(checks: &[Check]) -> bool {
    let width = checks.iter().map(|c| c.what.len()).max().unwrap_or(0);
    for c in checks {
        let word = match c.status {
            Health::Ok => "ok",
            Health::Warn => "WARN",
            Health::Fail => "FAIL",
        };
        println!("{word:<4} {:<width$}  {}", c.what, c.found);
        if !c.fix.is_empty() {
            println!("     {:<width$}  fix: {}", "", c.fix);
        }
    }
    let fails = checks.iter().filter(|c| c.status == Health::Fail).count();
    let warns = checks.iter().filter(|c| c.status == Health::Warn).count();
    println!("doctor: {fails} problem(s), {warns} warning(s)");
    fails == 0
}

/// `checker doctor`.
pub fn run() -> Result<bool> {
    Ok(print(&checks()))
}
