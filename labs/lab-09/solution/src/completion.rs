// TODO-BEGIN
//! Lab 09, reference solution: a safe `Completion` over the kernel's
//! `struct completion`.
//!
//! C header: [`include/linux/completion.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/completion.h)
// TODO-ELSE
// //! Lab 09: a safe `Completion` over the kernel's `struct completion`.
// //! This file is the whole exercise: the book's chapter "A safe abstraction
// //! of your own" gives the C functions and the rules; `expected/` shows what
// //! the module must log. The TODOs say what each part needs.
// //!
// //! C header: [`include/linux/completion.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/completion.h)
// TODO-END

use core::marker::PhantomPinned;
// TODO-BEGIN
use core::ptr;
// TODO-END

use kernel::bindings;
// TODO-BEGIN
use kernel::error::to_result;
use kernel::init::{pin_init_from_closure, Opaque, PinInit};
// TODO-ELSE
// use kernel::init::{Opaque, PinInit};
// use kernel::pin_init; // the stub `new` uses it: remove it with the stub
// TODO-END
use kernel::prelude::*;

// ANCHOR: completion
/// A completion (`struct completion`): a count of "done" events that
/// threads wait for. [`Completion::complete`] adds one and wakes one
/// waiter; [`Completion::wait`] sleeps until there is one and takes it.
///
// TODO-BEGIN
/// # Invariants
///
/// `inner` has been initialised by `init_completion` and never moves.
// TODO-ELSE
// /// TODO: the type invariant that every safety comment below relies on,
// /// in a `# Invariants` section.
// TODO-END
pub(crate) struct Completion {
    inner: Opaque<bindings::completion>,
    _pin: PhantomPinned,
}
// ANCHOR_END: completion

// TODO-BEGIN
// ANCHOR: send_sync
// SAFETY: a completion may be completed and waited for from any thread:
// its own spinlock (in the swait queue) protects `done` and the waiters.
unsafe impl Send for Completion {}
// SAFETY: every method takes `&self` and goes through the C functions,
// which take that lock; no Rust code reads or writes the C struct.
unsafe impl Sync for Completion {}
// ANCHOR_END: send_sync
// TODO-ELSE
// // TODO: say why sharing a completion between threads is sound, in a
// // safety comment before each of these (clippy's
// // `undocumented_unsafe_blocks` tells you the form).
// unsafe impl Send for Completion {}
// unsafe impl Sync for Completion {}
// TODO-END

impl Completion {
    // ANCHOR: new
    /// An initialiser of a completion that is not done: put it in place
    /// with `KBox::pin_init`, `Arc::pin_init` or `pin_init!`.
    pub(crate) fn new() -> impl PinInit<Self> {
        // TODO-BEGIN
        let init = move |slot: *mut Self| {
            // SAFETY: the slot is valid for writes and will not move
            // (contract of `PinInit`); `init_completion` initialises the
            // C struct in place and cannot fail.
            unsafe {
                bindings::rust_helper_init_completion(Opaque::raw_get(ptr::addr_of_mut!(
                    (*slot).inner
                )))
            };
            // INVARIANT: `inner` is initialised where it stays.
            Ok(())
        };
        // SAFETY: the closure initialises `inner` in place, and `_pin`
        // is a zero-sized marker with nothing to initialise; it never
        // fails.
        unsafe { pin_init_from_closure(init) }
        // TODO-ELSE
        // // TODO: initialise `inner` in place with
        // // `bindings::rust_helper_init_completion`, through
        // // `kernel::init::pin_init_from_closure` (see `WaitQueue::new`
        // // in the chapter). This stand-in leaves it uninitialised.
        // pin_init!(Completion {
        //     inner <- Opaque::uninit(),
        //     _pin <- PhantomPinned,
        // })
        // TODO-END
    }
    // ANCHOR_END: new

    // ANCHOR: methods
    /// Signals one event: wakes one waiter, or lets the next
    /// [`Completion::wait`] return at once.
    pub(crate) fn complete(&self) {
        // TODO-BEGIN
        // SAFETY: `inner` is initialised and pinned (type invariant).
        unsafe { bindings::complete(self.inner.as_raw()) };
        // TODO-ELSE
        // // TODO: `bindings::complete`.
        // TODO-END
    }

    /// Marks the completion done for good: wakes every waiter, and every
    /// later wait returns at once.
    pub(crate) fn complete_all(&self) {
        // TODO-BEGIN
        // SAFETY: `inner` is initialised and pinned (type invariant).
        unsafe { bindings::complete_all(self.inner.as_raw()) };
        // TODO-ELSE
        // // TODO: `bindings::complete_all`.
        // TODO-END
    }

    /// Sleeps (uninterruptibly: signals do not end it) until the
    /// completion has an event, and takes it.
    pub(crate) fn wait(&self) {
        // TODO-BEGIN
        // SAFETY: `inner` is initialised and pinned (type invariant).
        // (Sleeping where that is not allowed is a bug the kernel reports,
        // not a memory-safety condition: mainline's waits are safe too.)
        unsafe { bindings::wait_for_completion(self.inner.as_raw()) };
        // TODO-ELSE
        // // TODO: `bindings::wait_for_completion`.
        // TODO-END
    }

    /// Like [`Completion::wait`], but a signal ends the sleep: then it
    /// returns `ERESTARTSYS` and takes no event.
    pub(crate) fn wait_interruptible(&self) -> Result {
        // TODO-BEGIN
        // SAFETY: as in `wait`.
        let ret = unsafe { bindings::wait_for_completion_interruptible(self.inner.as_raw()) };
        to_result(ret).map(|_| ())
        // TODO-ELSE
        // // TODO: `bindings::wait_for_completion_interruptible` returns 0 or
        // // a negative errno: `kernel::error::to_result` turns it into a
        // // `Result<c_int>`, whose `Ok` value you do not need.
        // Err(ENOSYS)
        // TODO-END
    }

    /// Takes an event without sleeping: `false` if there is none.
    pub(crate) fn try_wait(&self) -> bool {
        // TODO-BEGIN
        // SAFETY: `inner` is initialised and pinned (type invariant).
        unsafe { bindings::try_wait_for_completion(self.inner.as_raw()) }
        // TODO-ELSE
        // // TODO: `bindings::try_wait_for_completion`.
        // false
        // TODO-END
    }

    /// Whether a wait would return at once (an event is there), without
    /// taking it.
    pub(crate) fn is_done(&self) -> bool {
        // TODO-BEGIN
        // SAFETY: `inner` is initialised and pinned (type invariant).
        unsafe { bindings::completion_done(self.inner.as_raw()) }
        // TODO-ELSE
        // // TODO: `bindings::completion_done`.
        // false
        // TODO-END
    }
    // ANCHOR_END: methods
}
