//! File descriptors: references to open files taken by descriptor, and
//! descriptors reserved in the current process and installed later.
//!
//! C header: [`include/linux/file.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/file.h).
//!
//! A driver that moves a file from one process to another takes a
//! [`FileRef`] in the sender (`fget`) and, in the receiver, reserves a
//! descriptor ([`FdReservation`]) and installs the file there
//! ([`FdReservation::commit`]). Installing cannot fail, so everything that
//! can is done before.

use core::ptr::NonNull;

use crate::bindings;
use crate::error::{code::EBADF, to_result, Result};

// ANCHOR: file_ref
/// A counted reference to an open file (`struct file`), from `fget`;
/// dropping it is `fput`.
///
/// # Invariants
///
/// `file` is a file on which this `FileRef` owns one reference.
pub struct FileRef {
    file: NonNull<bindings::file>,
}
// ANCHOR_END: file_ref

// SAFETY: a file reference may be dropped (`fput`) from any thread: `fput`
// defers the final release to a context that may sleep.
unsafe impl Send for FileRef {}
// SAFETY: `&FileRef` gives no access to the file.
unsafe impl Sync for FileRef {}

impl FileRef {
    /// The file that descriptor `fd` of the current process refers to
    /// (`fget`); `EBADF` if none.
    pub fn fget(fd: u32) -> Result<FileRef> {
        // SAFETY: `fget` accepts any number and returns null for one that
        // is not an open descriptor of the current process.
        let file = unsafe { bindings::fget(fd) };
        // INVARIANT: `fget` took a reference for us.
        Ok(FileRef {
            file: NonNull::new(file).ok_or(EBADF)?,
        })
    }
}

impl FileRef {
    pub(crate) fn as_raw(&self) -> *mut bindings::file {
        self.file.as_ptr()
    }
}

impl Drop for FileRef {
    fn drop(&mut self) {
        // SAFETY: we own one reference (type invariant).
        unsafe { bindings::fput(self.file.as_ptr()) };
    }
}

// ANCHOR: reservation
/// A descriptor number reserved in the current process
/// (`get_unused_fd_flags`): no file is behind it yet, and no other open
/// takes it. Dropping it unused gives it back (`put_unused_fd`).
///
/// The reservation belongs to the process that made it: it must be
/// committed or dropped by a task of that process, which `!Send` ensures.
///
/// # Invariants
///
/// `fd` is reserved in the files table of the task that created this
/// value, and not installed.
pub struct FdReservation {
    fd: u32,
    _not_send: core::marker::PhantomData<*mut ()>,
}
// ANCHOR_END: reservation

impl FdReservation {
    /// Reserves the lowest free descriptor, close-on-exec. `EMFILE` when
    /// the process has reached its limit.
    ///
    /// # Context
    ///
    /// May sleep (it allocates the descriptor table's room with `GFP_KERNEL`):
    /// process context only.
    pub fn new_cloexec() -> Result<FdReservation> {
        // SAFETY: reserves in the current task's table; no preconditions.
        let fd = to_result(unsafe {
            bindings::get_unused_fd_flags(
                bindings::RUST_CONST_HELPER_O_CLOEXEC as core::ffi::c_uint,
            )
        })?;
        // INVARIANT: `get_unused_fd_flags` reserved `fd` for us.
        Ok(FdReservation {
            fd: fd as u32,
            _not_send: core::marker::PhantomData,
        })
    }

    /// The reserved number.
    pub fn fd(&self) -> u32 {
        self.fd
    }

    /// Installs `file` at the reserved number (`fd_install`), which hands
    /// the file's reference to the descriptor table. Returns the number.
    pub fn commit(self, file: FileRef) -> u32 {
        let fd = self.fd;
        let file = core::mem::ManuallyDrop::new(file);
        // SAFETY: `fd` is reserved in the current task's table and not
        // installed (type invariant; `!Send` keeps us in that task's
        // process); `fd_install` consumes the reference `file` owns.
        unsafe { bindings::fd_install(fd, file.file.as_ptr()) };
        core::mem::forget(self);
        fd
    }
}

impl Drop for FdReservation {
    fn drop(&mut self) {
        // SAFETY: reserved and not installed (type invariant).
        unsafe { bindings::put_unused_fd(self.fd) };
    }
}
