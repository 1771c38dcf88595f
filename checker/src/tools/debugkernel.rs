//! The debug guest kernel: `make vm-debug` and `checker lab --kernel debug`.
//!
//! Debian's kernel has none of the kernel's own bug detectors turned on. The
//! debug kernel is built here from Debian's kernel source of a series,
//! `linux-source-6.1` or `linux-source-6.12` (`--guest`; default the
//! host's series), downloaded from Debian's archive into the cache like the
//! 6.12 guest kernel (see [`crate::tools::guest::fetch_source`]), with the
//! options of `vm/debug/debug.config` (KASAN, lockdep, might-sleep checks,
//! kmemleak, failslab) merged onto `make allnoconfig`, and cached in
//! `<cache>/debug-<source version>-<key>/` where the key is a hash of the
//! fragment's option lines: a changed option means a new folder and a new
//! build, an unchanged one means no build at all.
//!
//! Modules for it are built against its own tree (`KDIR=<dir>/src`, after
//! `modules_prepare`): Debian's headers describe another kernel (vermagic,
//! symbol CRCs, and struct layouts that KASAN and lockdep change). The Rust
//! part of a module goes to its own cargo target folder per series,
//! `target/kernel-debug-<series>` (`RUST_TARGET_DIR`, see
//! `kernel-crate/kbuild/rust-module.mk`).
//!
//! The build and its cache are `vm::debugkernel`; reading the detectors'
//! reports is `vm::console`. See `book/src/debug-kernel.md`.

use std::path::Path;

use ::vm::debugkernel::{self, DebugKernel};
use anyhow::Result;

use crate::tools::guest::Linux;
use crate::tools::setup::Toolchain;

/// The series the debug kernel is built from when `--guest` does not say:
/// the host's (that of Debian's kernel ABI `abi`, as `--guest` defaults).
pub fn series(linux: Option<Linux>, abi: &str) -> Linux {
    linux.unwrap_or_else(|| Linux::of(abi).unwrap_or_default())
}

/// The series of the host's Debian kernel (`linux-headers-amd64`'s ABI),
/// 6.1 when it cannot be told: `make vm-debug` without `GUEST`.
pub fn host_series() -> Linux {
    crate::tools::guest::host_abi()
        .ok()
        .and_then(|abi| Linux::of(&abi))
        .unwrap_or_default()
}

/// Makes sure the debug kernel of `series` is built (see
/// [`vm::debugkernel::ensure`]), installing the build's tools
/// ([`crate::tools::setup::DEBUG_KERNEL_PACKAGES`]) and downloading the
/// source ([`crate::tools::guest::fetch_source`]) first when any is missing.
pub fn ensure(cache: &Path, series: Linux) -> Result<DebugKernel> {
    let dk = debugkernel::ensure(cache, series.arg(), &|| {
        crate::tools::setup::ensure_packages(&crate::tools::setup::DEBUG_KERNEL_PACKAGES, false)
            .map_err(|e| ::vm::Error::other("cannot install the debug kernel's build tools", e))?;
        crate::tools::guest::fetch_source(series, cache)
            .map_err(|e| ::vm::Error::other("cannot download the debug kernel's source", e))
    })?;
    Ok(dk)
}

/// The cargo target folder of modules for the debug kernel of `series`:
/// `<workspace>/target/kernel-debug-<series>` (the bindings follow the
/// tree, so each series has its own).
pub fn rust_target_dir(workspace: &Path, series: Linux) -> std::path::PathBuf {
    workspace
        .join("target")
        .join(format!("kernel-debug-{}", series.arg()))
}

/// The toolchain that builds modules for the debug kernel `dk` of
/// `series` and boots it: the same as `base` but for the tree, the images
/// and the cargo target folder ([`rust_target_dir`]).
pub fn toolchain(dk: &DebugKernel, series: Linux, base: &Toolchain, workspace: &Path) -> Toolchain {
    Toolchain {
        abi: format!("debug-{}", dk.version),
        kdir: dk.tree(),
        vmlinuz: dk.bzimage(),
        // QEMU's PVH entry did not boot this vmlinux (no output at all,
        // not investigated further): the bzImage it is.
        boot_kernel: dk.bzimage(),
        modules_dir: dk.tree(),
        cache: base.cache.clone(),
        debug: true,
        rust_target_dir: Some(rust_target_dir(workspace, series)),
    }
}

/// Which guest kernel a run uses (`--kernel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum KernelChoice {
    /// Debian's kernel, modules built against its headers.
    #[default]
    Debian,
    /// The debug kernel (`make vm-debug`), built first when not cached.
    Debug,
}

impl KernelChoice {
    /// The value of `--kernel` that selects it.
    pub fn arg(self) -> &'static str {
        match self {
            KernelChoice::Debian => "debian",
            KernelChoice::Debug => "debug",
        }
    }
}

/// The toolchain for `choice`: `base` itself for Debian's kernel; for the
/// debug kernel, the tree and images of the one of series `linux`
/// (`--guest`; default the series of `base`, the host's), built first when
/// not cached.
pub fn toolchain_for(
    choice: KernelChoice,
    linux: Option<Linux>,
    base: Toolchain,
    workspace: &Path,
) -> Result<Toolchain> {
    match choice {
        KernelChoice::Debian => Ok(base),
        KernelChoice::Debug => {
            let series = series(linux, &base.abi);
            let dk = match debugkernel::cached(&base.cache, series.arg()) {
                Some(dk) => dk,
                None => {
                    println!(
                        "--kernel debug: the debug kernel of Linux {} is not built yet; building \
                         it now",
                        series.arg()
                    );
                    ensure(&base.cache, series)?
                }
            };
            Ok(toolchain(&dk, series, &base, workspace))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::host_toolchain;
    use std::fs;

    #[test]
    fn series_defaults_to_the_hosts() {
        assert_eq!(series(None, "6.1.0-57-amd64"), Linux::V6_1);
        assert_eq!(series(None, "6.12.117+deb13-amd64"), Linux::V6_12);
        assert_eq!(series(Some(Linux::V6_12), "6.1.0-57-amd64"), Linux::V6_12);
        assert_eq!(
            series(Some(Linux::V6_1), "6.12.117+deb13-amd64"),
            Linux::V6_1
        );
        assert_eq!(series(None, "5.10.0-30-amd64"), Linux::V6_1);
    }

    #[test]
    fn toolchain_of_a_cached_debug_kernel_per_series() {
        let cache = tempfile::tempdir().unwrap();
        for version in ["6.1.192-3", "6.12.95-1~bpo12+1"] {
            let dk = DebugKernel::locate(cache.path(), version);
            fs::create_dir_all(dk.tree()).unwrap();
            fs::write(dk.vmlinux(), "").unwrap();
            fs::write(dk.dir.join("complete"), "built in 9:47\n").unwrap();
        }
        let w = Path::new("/w");
        let tc = toolchain_for(
            KernelChoice::Debug,
            Some(Linux::V6_12),
            host_toolchain(cache.path()),
            w,
        )
        .unwrap();
        let dk = DebugKernel::locate(cache.path(), "6.12.95-1~bpo12+1");
        assert_eq!(tc.abi, "debug-6.12.95-1~bpo12+1");
        assert_eq!(tc.kdir, dk.tree());
        assert_eq!(tc.modules_dir, dk.tree());
        assert_eq!(tc.boot_kernel, dk.bzimage());
        assert!(tc.debug);
        assert_eq!(
            tc.rust_target_dir.as_deref(),
            Some(Path::new("/w/target/kernel-debug-6.12"))
        );
        // Without --guest: the host's series (the base's, 6.1).
        let tc = toolchain_for(KernelChoice::Debug, None, host_toolchain(cache.path()), w).unwrap();
        assert_eq!(tc.abi, "debug-6.1.192-3");
        assert_eq!(
            tc.rust_target_dir.as_deref(),
            Some(Path::new("/w/target/kernel-debug-6.1"))
        );
        // Debian's kernel: the base as it is.
        let tc = toolchain_for(
            KernelChoice::Debian,
            Some(Linux::V6_12),
            host_toolchain(cache.path()),
            w,
        )
        .unwrap();
        assert_eq!(tc.abi, "6.1.0-57-amd64");
    }
}
