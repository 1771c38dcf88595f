//! What the machine has, found one way for both `setup` (which then
//! installs what is missing) and `doctor` (which reports it): the kernel
//! ABI and its headers (the `KDIR` every build uses, which `module.mk`
//! asks for with `checker kdir`), the guest kernel in the cache, the Rust
//! toolchain's components and tools' versions, the static busybox, KVM and
//! the accelerator probe's verdict, and what is stale (an unpacked kernel
//! older than its image, other ABIs' guest kernels, killed runs' folders).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};

/// The metapackage whose dependency names the current kernel ABI.
pub const HEADERS_METAPACKAGE: &str = "linux-headers-amd64";

/// Extracts the kernel ABI from the `Depends` field of `linux-headers-amd64`,
/// e.g. `linux-headers-6.1.0-57-amd64 (= 6.1.192-1)` gives `6.1.0-57-amd64`.
pub fn abi_from_depends(depends: &str) -> Option<String> {
    depends
        .split([',', '|'])
        .map(|alt| alt.split_whitespace().next().unwrap_or(""))
        .filter_map(|name| name.strip_prefix("linux-headers-"))
        .find(|abi| {
            abi.starts_with(|c: char| c.is_ascii_digit())
                && abi
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
        })
        .map(str::to_owned)
}

/// Whether the host is Debian itself (`ID=debian` in `/etc/os-release`),
/// whose apt installs Debian's kernel headers (`linux-headers-amd64`).
/// Elsewhere (Ubuntu, Gradescope's images) the kernel is Debian's default
/// guest series, taken from Debian's archive into the cache as `--guest`
/// takes another series (see [`crate::tools::guest::host_abi`]).
pub fn host_is_debian() -> bool {
    os_release_id(&fs::read_to_string("/etc/os-release").unwrap_or_default()) == "debian"
}

/// The `ID` of an `/etc/os-release` text (`debian`, `ubuntu`), unquoted.
pub fn os_release_id(text: &str) -> &str {
    text.lines()
        .find_map(|l| l.strip_prefix("ID="))
        .map(|v| v.trim().trim_matches('"'))
        .unwrap_or("")
}

/// The kernel ABI the installed headers metapackage points at (a Debian
/// host's; [`crate::tools::guest::host_abi`] is any host's).
pub fn kernel_abi() -> Result<String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Depends}", HEADERS_METAPACKAGE])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .context("cannot run dpkg-query (is this a Debian system?)")?;
    let depends = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        anyhow::bail!("{HEADERS_METAPACKAGE} is not installed");
    }
    abi_from_depends(&depends).with_context(|| {
        format!("cannot find the kernel ABI in the Depends of {HEADERS_METAPACKAGE}: {depends:?}")
    })
}

/// The Kbuild tree of Debian's headers for `abi`, installed on a Debian host.
pub fn headers_dir(abi: &str) -> PathBuf {
    PathBuf::from(format!("/usr/src/linux-headers-{abi}"))
}

/// The `UTS_RELEASE` of a Kbuild tree (`include/generated/utsrelease.h`;
/// Debian's `include/config/kernel.release` holds the upstream version).
pub fn headers_release(kdir: &Path) -> Option<String> {
    let text = fs::read_to_string(kdir.join("include/generated/utsrelease.h")).ok()?;
    let (_, rest) = text.split_once("UTS_RELEASE \"")?;
    Some(rest.split('"').next()?.to_owned())
}

/// Where the guest kernel of one ABI lives in the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct GuestKernel {
    /// `<cache>/<abi>`: the unpacked `linux-image-<abi>-unsigned`.
    pub dir: PathBuf,
    /// `<dir>/boot/vmlinuz-<abi>`.
    pub vmlinuz: PathBuf,
    /// `<dir>/vmlinux`, the ELF kernel unpacked from `vmlinuz`.
    pub vmlinux: PathBuf,
    /// `<dir>/lib/modules/<abi>`.
    pub modules_dir: PathBuf,
}

impl GuestKernel {
    /// The paths for `abi` under `cache`.
    pub fn locate(cache: &Path, abi: &str) -> GuestKernel {
        let dir = cache.join(abi);
        GuestKernel {
            vmlinuz: dir.join("boot").join(format!("vmlinuz-{abi}")),
            vmlinux: dir.join("vmlinux"),
            modules_dir: dir.join("lib/modules").join(abi),
            dir,
        }
    }

    /// Makes `lib` a link to `usr/lib` when the image put its modules
    /// under `usr/lib/modules` only (Debian 13's packages, merged `/usr`),
    /// so that `lib/modules/<abi>` holds them on every release. Nothing
    /// happens when `lib` exists or there is no `usr/lib/modules`.
    pub fn merge_usr_lib(&self) -> Result<()> {
        let lib = self.dir.join("lib");
        if lib.symlink_metadata().is_err() && self.dir.join("usr/lib/modules").is_dir() {
            std::os::unix::fs::symlink("usr/lib", &lib)
                .with_context(|| format!("cannot link {} to usr/lib", lib.display()))?;
        }
        Ok(())
    }

    /// The kernel release its modules are for (the one folder of
    /// `lib/modules`), when it is unpacked.
    pub fn release(&self) -> Option<String> {
        fs::read_dir(self.dir.join("lib/modules"))
            .ok()?
            .flatten()
            .next()
            .map(|e| e.file_name().to_string_lossy().into_owned())
    }

    /// How the `vmlinux` unpacked from `vmlinuz` is.
    pub fn unpacked(&self) -> Unpacked {
        let mtime = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
        match (mtime(&self.vmlinux), mtime(&self.vmlinuz)) {
            (None, Some(_)) => Unpacked::Missing,
            (Some(unpacked), Some(packed)) if unpacked < packed => Unpacked::Stale,
            _ => Unpacked::Fresh,
        }
    }
}

/// The state of a guest kernel's unpacked `vmlinux`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unpacked {
    /// Not unpacked (boots decompress the kernel in the guest).
    Missing,
    /// Older than the `vmlinuz` it came from.
    Stale,
    /// Up to date, or there is no `vmlinuz` to unpack.
    Fresh,
}

/// Guest kernels in `cache` of ABIs other than `abi`: left over from an
/// older kernel.
pub fn other_guest_kernels(cache: &Path, abi: &str) -> Vec<PathBuf> {
    fs::read_dir(cache)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            e.path().is_dir() && name.ends_with("-amd64") && name != abi
        })
        .map(|e| e.path())
        .collect()
}

/// The first line of `tool --version`, when the tool runs.
pub fn version(tool: &str) -> Option<String> {
    let out = Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    out.status
        .success()
        .then(|| text.lines().next().unwrap_or("").trim().to_owned())
}

/// The major version of the host's `qemu-system-x86_64` (`7` for
/// "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18)"), asked
/// once per process; `None` when it does not run.
pub fn qemu_major() -> Option<u32> {
    static MAJOR: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *MAJOR.get_or_init(|| version("qemu-system-x86_64").and_then(|v| parse_qemu_major(&v)))
}

/// The major version in the first line of `qemu-system-x86_64 --version`.
pub fn parse_qemu_major(line: &str) -> Option<u32> {
    let rest = line.split("version ").nth(1)?;
    rest.split('.').next()?.trim().parse().ok()
}

/// `rustc --version` of the toolchain `rust-toolchain.toml` selects (run
/// from the workspace root when there is one); empty when it fails.
pub fn rustc_version() -> String {
    let mut c = Command::new("rustc");
    c.arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    if let Ok(root) = crate::tools::workspace::root() {
        c.current_dir(root);
    }
    match c.output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        _ => String::new(),
    }
}

/// The sysroot of the toolchain `rust-toolchain.toml` selects (run from the
/// workspace root when there is one).
pub fn rust_sysroot() -> Result<PathBuf> {
    let mut c = Command::new("rustc");
    c.args(["--print", "sysroot"]).stdin(Stdio::null());
    if let Ok(root) = crate::tools::workspace::root() {
        c.current_dir(root);
    }
    let out = c.output().context("cannot run rustc --print sysroot")?;
    if !out.status.success() {
        anyhow::bail!(
            "rustc --print sysroot failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The kernel's Rust target.
pub const RUST_TARGET: &str = "x86_64-unknown-none";

/// The rustup components the labs need: `core`'s source (built for the
/// kernel), rustfmt and clippy.
pub const RUST_COMPONENTS: &[&str] = &["rust-src", "rustfmt", "clippy"];

/// What a Rust sysroot lacks: the [`RUST_COMPONENTS`] it has not, and
/// whether the kernel's target ([`RUST_TARGET`]) is missing.
pub fn rust_missing(sysroot: &Path) -> (Vec<&'static str>, bool) {
    let present = |component: &str| match component {
        "rust-src" => sysroot.join("lib/rustlib/src/rust/library/core").is_dir(),
        "rustfmt" => sysroot.join("bin/rustfmt").is_file(),
        _ => sysroot.join("bin/cargo-clippy").is_file(),
    };
    let components = RUST_COMPONENTS
        .iter()
        .copied()
        .filter(|c| !present(c))
        .collect();
    let target = !sysroot.join("lib/rustlib").join(RUST_TARGET).is_dir();
    (components, target)
}

/// How the static busybox the initramfs needs is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Busybox {
    /// Static: it runs in the guest.
    Static,
    /// Dynamically linked: the guest has no libc.
    Dynamic,
    /// Not there.
    Missing,
}

/// The state of [`vm::guest::BUSYBOX`].
pub fn busybox() -> Busybox {
    match fs::read(::vm::guest::BUSYBOX) {
        Err(_) => Busybox::Missing,
        Ok(data) if ::vm::guest::has_interpreter(&data) => Busybox::Dynamic,
        Ok(_) => Busybox::Static,
    }
}

/// What `/dev/kvm` is like.
#[derive(Debug)]
pub enum Kvm {
    /// There is no `/dev/kvm`.
    Missing,
    /// It cannot be opened for reading and writing.
    Closed(std::io::Error),
    /// It opens; the cached accelerator probe's verdict, when a run made one.
    Opens(Option<vm::accel::Accel>),
}

/// The state of `/dev/kvm`, and what the accelerator probe cached in `cache`
/// found.
pub fn kvm(cache: &Path) -> Kvm {
    let dev = Path::new("/dev/kvm");
    if !dev.exists() {
        return Kvm::Missing;
    }
    match fs::OpenOptions::new().read(true).write(true).open(dev) {
        Err(e) => Kvm::Closed(e),
        Ok(_) => Kvm::Opens(vm::accel::cached_probe(cache)),
    }
}

/// `checker-vm-*` temporary folders older than an hour: left by killed runs.
pub fn stale_guest_folders() -> Vec<PathBuf> {
    let old = SystemTime::now() - Duration::from_secs(3600);
    fs::read_dir(std::env::temp_dir())
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
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    fn check_abi(depends: &str, expect: Expect) {
        expect.assert_eq(&format!("{:?}", abi_from_depends(depends)));
    }

    #[test]
    fn os_release_ids() {
        assert_eq!(
            os_release_id("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n"),
            "debian"
        );
        assert_eq!(
            os_release_id("NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=noble\n"),
            "ubuntu"
        );
        assert_eq!(os_release_id("ID=\"fedora\"\n"), "fedora");
        assert_eq!(os_release_id(""), "");
    }

    #[test]
    fn qemu_major_from_version_line() {
        let major = |line| parse_qemu_major(line);
        assert_eq!(
            major("QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18)"),
            Some(7)
        );
        assert_eq!(
            major("QEMU emulator version 10.0.13 (Debian 1:10.0.13+ds-0+deb13u1)"),
            Some(10)
        );
        assert_eq!(major("QEMU emulator version 8.2.2"), Some(8));
        assert_eq!(major("qemu-system-x86_64: unknown option"), None);
        assert_eq!(major(""), None);
    }

    #[test]
    fn abi_from_metapackage_depends() {
        check_abi(
            "linux-headers-6.1.0-57-amd64 (= 6.1.192-1)",
            expect![[r#"Some("6.1.0-57-amd64")"#]],
        );
        check_abi(
            "linux-headers-6.12.9+bpo-amd64 (= 6.12.9-1~bpo12+1)",
            expect![[r#"Some("6.12.9+bpo-amd64")"#]],
        );
        check_abi(
            "libc6, linux-headers-6.1.0-58-amd64",
            expect![[r#"Some("6.1.0-58-amd64")"#]],
        );
        check_abi("", expect![["None"]]);
        check_abi("linux-headers-amd64-foo", expect![["None"]]);
    }

    #[test]
    fn release_from_utsrelease_h() {
        let d = crate::testutil::tree(&[(
            "include/generated/utsrelease.h",
            "#define UTS_RELEASE \"6.1.0-57-amd64\"\n",
        )]);
        assert_eq!(headers_release(d.path()).as_deref(), Some("6.1.0-57-amd64"));
        assert_eq!(headers_release(&d.path().join("nothing")), None);
    }

    #[test]
    fn what_a_sysroot_lacks() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(
            rust_missing(d.path()),
            (vec!["rust-src", "rustfmt", "clippy"], true)
        );
        fs::create_dir_all(d.path().join("lib/rustlib/src/rust/library/core")).unwrap();
        fs::create_dir_all(d.path().join("lib/rustlib").join(RUST_TARGET)).unwrap();
        crate::testutil::write(d.path(), &[("bin/rustfmt", "")]);
        assert_eq!(rust_missing(d.path()), (vec!["clippy"], false));
    }

    #[test]
    fn guest_kernel_paths() {
        let g = GuestKernel::locate(Path::new("/c"), "6.1.0-57-amd64");
        assert_eq!(g.dir, Path::new("/c/6.1.0-57-amd64"));
        assert_eq!(
            g.vmlinuz,
            Path::new("/c/6.1.0-57-amd64/boot/vmlinuz-6.1.0-57-amd64")
        );
        assert_eq!(g.vmlinux, Path::new("/c/6.1.0-57-amd64/vmlinux"));
        assert_eq!(
            g.modules_dir,
            Path::new("/c/6.1.0-57-amd64/lib/modules/6.1.0-57-amd64")
        );
    }

    #[test]
    fn debian_13_modules_under_usr_are_found_through_lib() {
        let d = tempfile::tempdir().unwrap();
        let abi = "6.12.118+deb13-amd64";
        let g = GuestKernel::locate(d.path(), abi);
        crate::testutil::write(
            &g.dir,
            &[(&format!("usr/lib/modules/{abi}/modules.dep"), "")],
        );
        assert!(!g.modules_dir.is_dir());
        g.merge_usr_lib().unwrap();
        assert!(g.modules_dir.join("modules.dep").is_file());
        assert_eq!(g.release().as_deref(), Some(abi));
        // Again, and for an image with /lib/modules: nothing changes.
        g.merge_usr_lib().unwrap();
        let old = GuestKernel::locate(d.path(), "6.1.0-57-amd64");
        crate::testutil::write(&old.dir, &[("lib/modules/6.1.0-57-amd64/modules.dep", "")]);
        old.merge_usr_lib().unwrap();
        assert!(!old.dir.join("lib").is_symlink());
    }
}
