// TODO-BEGIN
//! The RFC's semaphore sample: a misc device `/dev/rust_semaphore`.
// TODO-ELSE
// //! Lab 08: the RFC's semaphore sample, a misc device `/dev/rust_semaphore`.
// //! Complete `consume` (the blocking part of read), `poll` and `ioctl`
// //! (the three `TODO`s). The reference solution is the finished driver,
// //! `drivers/semaphore/src/lib.rs` of the instructor's repository; in the
// //! students' repository that file has the same `TODO`s as this one.
// TODO-END
//!
//! A write of `n` bytes adds `n` to the count; a read blocks until the
//! count is positive, takes one, and returns one byte (then end of file
//! for that open: `cat` ends). With `O_NONBLOCK` a read that would block
//! fails with `EAGAIN`; `poll` reports the device readable while the count
//! is positive and always writable. The device has no position to move:
//! `lseek` fails with `ESPIPE` whatever its arguments. Each open counts its
//! reads, which two ioctls get and set. `rust_semaphore_c.c` next to this
//! file is the same driver in C; the book compares the two, and lab 08
//! grades both with one script.
//!
//! Unlike the RFC's sample, a write reads the bytes it counts, so a bad
//! pointer gives `EFAULT`; a read copies its byte before it takes a count,
//! so a bad pointer costs none; and the largest count seen is not kept, as
//! it depends on scheduling and would make the graded log unstable. The C
//! twin does the same.

#![no_std]

use core::pin::Pin;
use core::sync::atomic::{AtomicU64, Ordering};

use kernel::file::flags::O_NONBLOCK;
use kernel::file::{File, FileOperations, IoctlCommand, PollTable, POLLIN, POLLOUT};
use kernel::miscdev;
use kernel::prelude::*;
use kernel::sync::{Arc, CondVar, Mutex};
use kernel::user::{UserSliceReader, UserSliceWriter};
use kernel::{c_str, ioctl, new_condvar, new_mutex};

module! {
    type: RustSemaphore,
    name: "rust_semaphore",
    author: "Rust kernel workbook",
    description: "Rust semaphore sample",
    license: "GPL",
}

// ANCHOR: ioctls
/// Gets the number of reads this open file made: `_IOR('c', 1, u64)`.
const IOCTL_GET_READ_COUNT: u32 = ioctl::ior::<u64>(b'c', 1);
/// Sets it: `_IOW('c', 1, u64)`.
const IOCTL_SET_READ_COUNT: u32 = ioctl::iow::<u64>(b'c', 1);
// ANCHOR_END: ioctls

// ANCHOR: shared
struct SemaphoreInner {
    count: usize,
}

/// The semaphore, shared by every open.
struct Semaphore {
    changed: Pin<KBox<CondVar>>,
    inner: Pin<KBox<Mutex<SemaphoreInner>>>,
}

/// One open of the device.
struct FileState {
    read_count: AtomicU64,
    shared: Arc<Semaphore>,
}
// ANCHOR_END: shared

// ANCHOR: consume
impl FileState {
    /// Waits until the count is positive and takes one; `EAGAIN` instead
    /// of waiting when `nonblocking`.
    fn consume(&self, nonblocking: bool) -> Result {
        // TODO-BEGIN
        let mut inner = self.shared.inner.lock();
        while inner.count == 0 {
            if nonblocking {
                return Err(EAGAIN);
            }
            if self.shared.changed.wait_interruptible(&mut inner) {
                return Err(EINTR);
            }
        }
        inner.count -= 1;
        Ok(())
        // TODO-ELSE
        // // TODO: lock `self.shared.inner`; while the count is 0, return
        // // EAGAIN if `nonblocking`, else wait on `self.shared.changed`
        // // (interruptibly: a signal gives EINTR); then take one from the
        // // count.
        // let _ = nonblocking;
        // Err(EAGAIN)
        // TODO-END
    }
}
// ANCHOR_END: consume

#[vtable]
impl FileOperations for FileState {
    type OpenData = Arc<Semaphore>;

    fn open(shared: &Arc<Semaphore>, _file: &File) -> Result<Self> {
        Ok(FileState {
            read_count: AtomicU64::new(0),
            shared: shared.clone(),
        })
    }

    // ANCHOR: read_write
    fn read(&self, file: &File, writer: &mut UserSliceWriter, offset: u64) -> Result<usize> {
        if writer.is_empty() || offset > 0 {
            return Ok(0);
        }
        // Copy first: a bad pointer must not cost a count.
        writer.write_slice(&[0u8; 1])?;
        self.consume(file.flags() & O_NONBLOCK != 0)?;
        self.read_count.fetch_add(1, Ordering::Relaxed);
        Ok(1)
    }

    fn write(&self, _file: &File, reader: &mut UserSliceReader, _offset: u64) -> Result<usize> {
        // Read (and drop) what was written: a bad pointer is EFAULT.
        let n = reader.len();
        let mut chunk = [0u8; 64];
        while !reader.is_empty() {
            let len = reader.len().min(chunk.len());
            reader.read_slice(&mut chunk[..len])?;
        }
        {
            let mut inner = self.shared.inner.lock();
            inner.count = inner.count.saturating_add(n);
        }
        self.shared.changed.notify_all();
        Ok(n)
    }
    // ANCHOR_END: read_write

    // ANCHOR: poll
    fn poll<'a>(&'a self, _file: &File, table: &PollTable<'a>) -> Result<u32> {
        // TODO-BEGIN
        // Register before looking: a write in between then wakes us.
        table.register(&self.shared.changed);
        let readable = self.shared.inner.lock().count > 0;
        Ok(if readable { POLLIN | POLLOUT } else { POLLOUT })
        // TODO-ELSE
        // // TODO: the C twin's `semaphore_poll`: readable (POLLIN) while the
        // // count is positive, always writable (POLLOUT), and a poller that
        // // sleeps must be woken by the next write.
        // let _ = (table, POLLIN);
        // Ok(POLLOUT)
        // TODO-END
    }
    // ANCHOR_END: poll

    // ANCHOR: ioctl
    fn ioctl(&self, _file: &File, cmd: IoctlCommand) -> Result<i32> {
        // TODO-BEGIN
        match cmd.cmd {
            IOCTL_GET_READ_COUNT => {
                let count = self.read_count.load(Ordering::Relaxed);
                cmd.user_slice()?
                    .writer()
                    .write_slice(&count.to_ne_bytes())?;
                Ok(0)
            }
            IOCTL_SET_READ_COUNT => {
                let bytes = cmd.user_slice()?.reader().read_bytes::<8>()?;
                self.read_count
                    .store(u64::from_ne_bytes(bytes), Ordering::Relaxed);
                Ok(0)
            }
            _ => Err(ENOTTY),
        }
        // TODO-ELSE
        // // TODO: IOCTL_GET_READ_COUNT writes this file's read count (a u64)
        // // to the user pointer `cmd.user_slice()`; IOCTL_SET_READ_COUNT
        // // reads one from it. Any other command is ENOTTY.
        // let _ = (cmd, IOCTL_GET_READ_COUNT, IOCTL_SET_READ_COUNT);
        // Ok(0)
        // TODO-END
    }
    // ANCHOR_END: ioctl
}

struct RustSemaphore {
    _dev: Pin<KBox<miscdev::Registration<FileState>>>,
}

// ANCHOR: init
impl kernel::Module for RustSemaphore {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust semaphore sample (init)\n");
        let sema = Arc::new(
            Semaphore {
                changed: KBox::pin_init(new_condvar!("Semaphore::changed"), GFP_KERNEL)?,
                inner: KBox::pin_init(
                    new_mutex!(SemaphoreInner { count: 0 }, "Semaphore::inner"),
                    GFP_KERNEL,
                )?,
            },
            GFP_KERNEL,
        )?;
        let dev = miscdev::Registration::new_pinned(c_str!("rust_semaphore"), sema)?;
        Ok(RustSemaphore { _dev: dev })
    }
}
// ANCHOR_END: init

impl Drop for RustSemaphore {
    fn drop(&mut self) {
        pr_info!("Rust semaphore sample (exit)\n");
    }
}
