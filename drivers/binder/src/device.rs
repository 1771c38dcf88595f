//! The device: the module, its misc device `/dev/rust-binder`, and the
//! file operations, each of which hands over to the open's [`Process`].

use core::pin::Pin;

use kernel::file::{File, FileOperations, IoctlCommand, PollTable};
use kernel::mm::Vma;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::{c_str, miscdev, shrinker};

use crate::context::Context;
use crate::page_range::Reclaim;
use crate::process::Process;

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

    fn open(ctx: &Arc<Context>, file: &File) -> Result<Self> {
        Ok(BinderFile {
            process: Process::new(ctx.clone(), file.cred())?,
        })
    }

    fn release(this: KBox<Self>, _file: &File) {
        Process::release(this.into_inner().process);
    }

    fn ioctl(&self, file: &File, cmd: IoctlCommand) -> Result<i32> {
        Process::ioctl(&self.process, file, cmd)
    }

    fn poll<'a>(&'a self, _file: &File, table: &PollTable<'a>) -> Result<u32> {
        Process::poll(&self.process, table)
    }

    fn mmap(&self, _file: &File, vma: &mut Vma) -> Result {
        Process::mmap(&self.process, vma)
    }

    fn flush(&self, _file: &File) -> Result {
        Process::flush(&self.process);
        Ok(())
    }
}

// ANCHOR: module
struct RustBinder {
    _dev: Pin<KBox<miscdev::Registration<BinderFile>>>,
    /// Unregistered after the device: no process is left by then.
    _shrinker: Pin<KBox<shrinker::Registration<Arc<Reclaim>>>>,
}

impl kernel::Module for RustBinder {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let reclaim = Arc::pin_init(Reclaim::new(), GFP_KERNEL)?;
        let shrinker = shrinker::Registration::new_pinned(c_str!("rust-binder"), reclaim.clone())?;
        let ctx = Arc::pin_init(Context::new(reclaim), GFP_KERNEL)?;
        let dev = miscdev::Registration::new_pinned(c_str!("rust-binder"), ctx)?;
        Ok(RustBinder {
            _dev: dev,
            _shrinker: shrinker,
        })
    }
}
// ANCHOR_END: module
