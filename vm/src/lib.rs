//! The guest the labs run in (see `README.md`): a [`Guest`] description
//! in, a [`GuestRun`] (console and [`Transcript`]) out.
//!
//! - [`guest`]: the description (kernel, modules, programs, steps, CPUs,
//!   memory, devices, time limit) and the initramfs made from it
//!   ([`cpio`]), with the guest's scripts (`guest/`).
//! - [`qemu`]: QEMU's command line and life cycle, Ctrl-C.
//! - [`accel`]: the accelerator probe (KVM only when a guest really boots).
//! - [`channel`]: the result channel on `ttyS1` (runner, token, parser).
//! - [`console`]: what the guest kernel's log says: timestamps, the step
//!   marker, and the findings (oops, BUG, KASAN, ...) it reports.
//! - [`image`]: modules from the guest kernel's own image.
//! - [`disk`]: disk images for the guest's block devices (the pattern
//!   image), and the host's scan of them after power-off.
//! - [`shell`]: the same guest with a shell on the console instead of
//!   steps (`checker shell`).
//! - [`tools`]: the checker's own guest programs (`failslab`).
//! - [`debugkernel`]: the debug kernel's build and cache.
//! - [`error`]: the crate's [`Error`], one variant per thing that fails.
#![forbid(unsafe_code)]

use std::path::PathBuf;

pub mod accel;
pub mod channel;
pub mod console;
pub mod cpio;
pub mod debugkernel;
pub mod disk;
pub mod error;
pub mod guest;
pub mod image;
pub mod qemu;
pub mod shell;
pub mod snapshot;
pub mod tools;

pub use channel::{StepRecord, Transcript};
pub use error::{Error, Result};
pub use guest::{Device, Guest, Module, Program, Source, Step};
pub use qemu::{
    install_interrupt_handler, interrupted, run, Ending, GuestRun, Interrupted, Progress,
};

/// Where the guest kernels are cached (Debian's image, the debug kernel,
/// the accelerator probe's verdict):
/// `${LABS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rust-kernel-labs}`.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = non_empty_env("LABS_CACHE") {
        return PathBuf::from(dir);
    }
    let base = non_empty_env("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(non_empty_env("HOME").unwrap_or_else(|| "/tmp".into())).join(".cache")
        });
    base.join("rust-kernel-labs")
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}
