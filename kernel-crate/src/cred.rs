//! Credentials (`struct cred`): those a file was opened with, and (through
//! [`Task::cred`](crate::task::Task::cred)) a task's.
//!
//! C header: [`include/linux/cred.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/cred.h).
//!
//! User ids are numbers as the current task's user namespace sees them
//! (`from_kuid(current_user_ns(), ...)`). A task's own ids (pid, tgid,
//! euid) are [`Task`](crate::task::Task)'s.

use core::ptr::NonNull;

use crate::bindings;
use crate::file::File;

// ANCHOR: credential
/// A counted reference to a set of credentials (`struct cred`), which
/// never change once made: who opened a file, as the LSM hooks of
/// [`crate::security`] want to know.
///
/// # Invariants
///
/// `cred` is a `struct cred` on which this `Credential` holds one count
/// (`get_cred`, `get_task_cred`).
pub struct Credential {
    cred: NonNull<bindings::cred>,
}
// ANCHOR_END: credential

// SAFETY: credentials are immutable and their count is atomic: they may
// be used and put from any thread.
unsafe impl Send for Credential {}
// SAFETY: `&Credential` only reads immutable fields.
unsafe impl Sync for Credential {}

impl Credential {
    /// Takes over the count the caller holds on `cred`.
    ///
    /// # Safety
    ///
    /// `cred` is a non-null `struct cred` on which the caller owns one
    /// count (from `get_cred` or `get_task_cred`), given to the result.
    pub(crate) unsafe fn from_raw(cred: *const bindings::cred) -> Credential {
        // INVARIANT: the caller's count becomes ours.
        Credential {
            // SAFETY: the caller guarantees `cred` is not null.
            cred: unsafe { NonNull::new_unchecked(cred.cast_mut()) },
        }
    }

    pub(crate) fn as_raw(&self) -> *const bindings::cred {
        self.cred.as_ptr()
    }

    /// The effective user id, as the caller's namespace sees it.
    pub fn euid(&self) -> u32 {
        // SAFETY: the credentials are live (type invariant).
        unsafe { bindings::rust_helper_cred_euid(self.as_raw()) }
    }
}

impl Drop for Credential {
    fn drop(&mut self) {
        // SAFETY: gives back the count this `Credential` holds (type
        // invariant).
        unsafe { bindings::rust_helper_put_cred(self.as_raw()) };
    }
}

impl File {
    /// The credentials the file was opened with (`get_cred(f_cred)`).
    pub fn cred(&self) -> Credential {
        // SAFETY: the file is valid (it is borrowed), and `f_cred` is set
        // at open, never null and never changed while the file lives.
        let cred = unsafe { bindings::rust_helper_file_get_cred(self.as_raw()) };
        // SAFETY: `get_cred` returns its argument, never null (above),
        // with a count taken for us.
        unsafe { Credential::from_raw(cred) }
    }
}

/// Whether the current task has `CAP_SYS_ADMIN` in the initial user
/// namespace (`capable(CAP_SYS_ADMIN)`), as C drivers ask before they let
/// user space send raw commands to a device. Like C's `capable`, a yes is
/// recorded (the task's `PF_SUPERPRIV`) and an LSM may say no.
pub fn capable_sys_admin() -> bool {
    // SAFETY: `capable` only reads the current task's credentials.
    unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as core::ffi::c_int) }
}
