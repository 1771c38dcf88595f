//! The Linux security modules' hooks that a driver calls itself: those of
//! Binder, which ask whether one process may talk to another.
//!
//! C header: [`include/linux/security.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/security.h).
//!
//! With no LSM that has a Binder policy (SELinux has one), each hook
//! returns `Ok(())`; an error is the LSM's refusal, usually `EPERM`.

use crate::bindings;
use crate::cred::Credential;
use crate::error::{to_result, Result};
use crate::fd::FileRef;

/// A hook's `int`: 0 or a negative errno.
fn check(ret: core::ffi::c_int) -> Result {
    to_result(ret).map(|_| ())
}

/// May `mgr` become the context manager?
pub fn binder_set_context_mgr(mgr: &Credential) -> Result {
    // SAFETY: the credentials are live (invariant of `Credential`).
    check(unsafe { bindings::rust_helper_security_binder_set_context_mgr(mgr.as_raw()) })
}

/// May `from` send a transaction to `to`?
pub fn binder_transaction(from: &Credential, to: &Credential) -> Result {
    // SAFETY: both credentials are live (invariant of `Credential`).
    check(unsafe { bindings::rust_helper_security_binder_transaction(from.as_raw(), to.as_raw()) })
}

/// May `from` pass a reference to a Binder object to `to`?
pub fn binder_transfer_binder(from: &Credential, to: &Credential) -> Result {
    // SAFETY: both credentials are live (invariant of `Credential`).
    check(unsafe {
        bindings::rust_helper_security_binder_transfer_binder(from.as_raw(), to.as_raw())
    })
}

/// May `from` pass `file` to `to`?
pub fn binder_transfer_file(from: &Credential, to: &Credential, file: &FileRef) -> Result {
    // SAFETY: both credentials are live (invariant of `Credential`), the
    // file is held by `file`; the hook only reads them.
    check(unsafe {
        bindings::rust_helper_security_binder_transfer_file(
            from.as_raw(),
            to.as_raw(),
            file.as_raw(),
        )
    })
}
