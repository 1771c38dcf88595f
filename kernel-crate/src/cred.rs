//! Who is calling: the ids of the current task, and the credentials a file
//! was opened with.
//!
//! C headers: [`include/linux/cred.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/cred.h),
//! [`include/linux/pid.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/pid.h),
//! [`include/linux/sched.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/sched.h).
//!
//! Ids are numbers as the caller's namespaces see them (`task_pid_vnr`,
//! `from_kuid(current_user_ns(), ...)`).

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
/// (`get_cred`).
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

/// The thread id of the current task (`gettid(2)`).
pub fn current_pid() -> i32 {
    // SAFETY: reads ids of `current`, which is always valid.
    unsafe { bindings::rust_helper_current_pid() }
}

/// The process id of the current task (`getpid(2)`: its thread group's
/// leader).
pub fn current_tgid() -> i32 {
    // SAFETY: reads ids of `current`, which is always valid.
    unsafe { bindings::rust_helper_current_tgid() }
}

impl File {
    /// The credentials the file was opened with (`get_cred(f_cred)`).
    pub fn cred(&self) -> Credential {
        // SAFETY: the file is valid (it is borrowed), and `f_cred` is set
        // at open, never null and never changed while the file lives.
        let cred = unsafe { bindings::rust_helper_file_get_cred(self.as_raw()) };
        // INVARIANT: `get_cred` took the count; it returns its argument.
        Credential {
            // SAFETY: `f_cred` is never null (above).
            cred: unsafe { NonNull::new_unchecked(cred.cast_mut()) },
        }
    }

    /// The effective user id of whoever opened the file (`f_cred->euid`),
    /// which stays the same whatever the opener does with its own
    /// credentials later.
    pub fn opener_euid(&self) -> u32 {
        // SAFETY: the file is valid (it is borrowed), and `f_cred` is set
        // at open and never changes while the file lives.
        unsafe { bindings::rust_helper_file_euid(self.as_raw()) }
    }
}

/// The effective user id of the current task (`current_euid()`).
pub fn current_euid() -> u32 {
    // SAFETY: reads the current task's own credentials.
    unsafe { bindings::rust_helper_current_euid() }
}

/// The effective user id of the current process: of its thread group's
/// leader (`task_euid(current->group_leader)`), which `seteuid(2)` in
/// that process changes.
pub fn current_process_euid() -> u32 {
    // SAFETY: reads the credentials of `current`'s group leader, which
    // lives as long as any thread of the group, under RCU in the helper.
    unsafe { bindings::rust_helper_current_leader_euid() }
}
