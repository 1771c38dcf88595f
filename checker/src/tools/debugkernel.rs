//! The debug guest kernel: `make vm-debug` and `checker lab --kernel debug`.
//!
//! Debian's kernel has none of the kernel's own bug detectors turned on. The
//! debug kernel is built here from Debian's `linux-source-6.1` with the
//! options of `vm/debug/debug.config` (KASAN, lockdep, might-sleep checks,
//! kmemleak, failslab) merged onto `make allnoconfig`, and cached in
//! `<cache>/debug-<source version>-<key>/` where the key is a hash of the
//! fragment's option lines: a changed option means a new folder and a new
//! build, an unchanged one means no build at all.
//!
//! Modules for it are built against its own tree (`KDIR=<dir>/src`, after
//! `modules_prepare`): Debian's headers describe another kernel (vermagic,
//! symbol CRCs, and struct layouts that KASAN and lockdep change). The Rust
//! part of a module goes to its own cargo target folder, `target/kernel-debug`
//! (`RUST_TARGET_DIR`, see `kernel-crate/kbuild/rust-module.mk`).
//!
//! The build and its cache are `vm::debugkernel`; reading the detectors'
//! reports is `vm::console`. See `book/src/debug-kernel.md`.

use std::path::Path;

use ::vm::debugkernel::{self, DebugKernel};
use anyhow::Result;

use crate::tools::setup::Toolchain;

/// Makes sure the debug kernel is built (see [`vm::debugkernel::ensure`]),
/// installing its source and the build's tools
/// ([`crate::tools::setup::DEBUG_KERNEL_PACKAGES`]) first when any is missing.
pub fn ensure(cache: &Path) -> Result<DebugKernel> {
    let dk = debugkernel::ensure(cache, &|| {
        crate::tools::setup::ensure_packages(&crate::tools::setup::DEBUG_KERNEL_PACKAGES, false)
            .map_err(|e| ::vm::Error::other("cannot install the debug kernel's source", e))
    })?;
    Ok(dk)
}

/// The toolchain that builds modules for the debug kernel `dk` and boots
/// it: the same as `base` but for the tree, the images and the cargo target
/// folder `<workspace>/target/kernel-debug`.
pub fn toolchain(dk: &DebugKernel, base: &Toolchain, workspace: &Path) -> Toolchain {
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
        rust_target_dir: Some(workspace.join("target").join("kernel-debug")),
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
/// debug kernel, its tree and images (built first when not cached).
pub fn toolchain_for(choice: KernelChoice, base: Toolchain, workspace: &Path) -> Result<Toolchain> {
    match choice {
        KernelChoice::Debian => Ok(base),
        KernelChoice::Debug => {
            let dk = match debugkernel::cached(&base.cache) {
                Some(dk) => dk,
                None => {
                    println!("--kernel debug: the debug kernel is not built yet; building it now");
                    ensure(&base.cache)?
                }
            };
            Ok(toolchain(&dk, &base, workspace))
        }
    }
}
