//! Binder IPC in Rust: the misc device `/dev/rust-binder`.
//!
//! The same protocol (version 8) as C's `drivers/android/binder.c` in
//! Linux 6.1, with its observable behaviour: a process opens the device,
//! maps at most 4 MiB of it read-only, and talks through `BINDER_WRITE_READ`,
//! whose write half carries `BC_*` commands and whose read half returns
//! `BR_*` work. See `process.rs` for the state, and the book's chapter
//! "Binder" for the design.
//!
//! Not supported yet (C has them): scatter-gather objects (`PTR`, `FDA`),
//! freezing, security contexts, priority inheritance, extended errors.

#![no_std]

use core::pin::Pin;

use kernel::file::{File, FileOperations, IoctlCommand, PollTable};
use kernel::mm::Vma;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::{c_str, miscdev, new_mutex};

mod alloc;
mod defs;
mod process;

use process::{Context, Process};

module! {
    type: RustBinder,
    name: "rust_binder",
    author: "Rust kernel workbook",
    description: "Binder IPC in Rust (/dev/rust-binder)",
    license: "GPL",
}

/// One open of the device: a Binder process.
struct BinderFile {
    process: Arc<Process>,
}

#[vtable]
impl FileOperations for BinderFile {
    type OpenData = Arc<Context>;

    fn open(ctx: &Arc<Context>, _file: &File) -> Result<Self> {
        Ok(BinderFile {
            process: Process::new(ctx.clone())?,
        })
    }

    fn release(this: KBox<Self>, _file: &File) {
        Process::release(&this.process);
    }

    fn ioctl(&self, file: &File, cmd: IoctlCommand) -> Result<i32> {
        Process::ioctl(&self.process, file, cmd)
    }

    fn poll(&self, _file: &File, table: &PollTable<'_>) -> Result<u32> {
        Process::poll(&self.process, table)
    }

    fn mmap(&self, _file: &File, vma: &mut Vma) -> Result {
        Process::mmap(&self.process, vma)
    }
}

struct RustBinder {
    _dev: Pin<KBox<miscdev::Registration<BinderFile>>>,
}

impl kernel::Module for RustBinder {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let ctx = Arc::pin_init(
            kernel::pin_init!(Context {
                manager <- new_mutex!(process::Manager::default(), "Context::manager"),
            }),
            GFP_KERNEL,
        )?;
        let dev = miscdev::Registration::new_pinned(c_str!("rust-binder"), ctx, module)?;
        Ok(RustBinder { _dev: dev })
    }
}
