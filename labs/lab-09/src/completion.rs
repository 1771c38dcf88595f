//! Lab 09: a safe `Completion` over the kernel's `struct completion`.
//! This file is the whole exercise: the book's chapter "A safe abstraction
//! of your own" gives the C functions and the rules; `expected/` shows what
//! the module must log. The TODOs say what each part needs.
//!
//! C header: [`include/linux/completion.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/completion.h)

use core::marker::PhantomPinned;

use kernel::bindings;
use kernel::init::{Opaque, PinInit};
use kernel::pin_init; // the stub `new` uses it: remove it with the stub
use kernel::prelude::*;

// ANCHOR: completion
/// A completion (`struct completion`): a count of "done" events that
/// threads wait for. [`Completion::complete`] adds one and wakes one
/// waiter; [`Completion::wait`] sleeps until there is one and takes it.
///
/// TODO: the type invariant that every safety comment below relies on,
/// in a `# Invariants` section.
pub(crate) struct Completion {
    inner: Opaque<bindings::completion>,
    _pin: PhantomPinned,
}
// ANCHOR_END: completion

// TODO: say why sharing a completion between threads is sound, in a
// safety comment before each of these (clippy's
// `undocumented_unsafe_blocks` tells you the form).
unsafe impl Send for Completion {}
unsafe impl Sync for Completion {}

impl Completion {
    // ANCHOR: new
    /// An initialiser of a completion that is not done: put it in place
    /// with `KBox::pin_init`, `Arc::pin_init` or `pin_init!`.
    pub(crate) fn new() -> impl PinInit<Self> {
        // TODO: initialise `inner` in place with
        // `bindings::rust_helper_init_completion`, through
        // `kernel::init::pin_init_from_closure` (see `WaitQueue::new`
        // in the chapter). This stand-in leaves it uninitialised.
        pin_init!(Completion {
            inner <- Opaque::uninit(),
            _pin <- PhantomPinned,
        })
    }
    // ANCHOR_END: new

    // ANCHOR: methods
    /// Signals one event: wakes one waiter, or lets the next
    /// [`Completion::wait`] return at once.
    pub(crate) fn complete(&self) {
        // TODO: `bindings::complete`.
    }

    /// Marks the completion done for good: wakes every waiter, and every
    /// later wait returns at once.
    pub(crate) fn complete_all(&self) {
        // TODO: `bindings::complete_all`.
    }

    /// Sleeps (uninterruptibly: signals do not end it) until the
    /// completion has an event, and takes it.
    pub(crate) fn wait(&self) {
        // TODO: `bindings::wait_for_completion`.
    }

    /// Like [`Completion::wait`], but a signal ends the sleep: then it
    /// returns `ERESTARTSYS` and takes no event.
    pub(crate) fn wait_interruptible(&self) -> Result {
        // TODO: `bindings::wait_for_completion_interruptible` returns 0 or
        // a negative errno: `kernel::error::to_result` turns it into a
        // `Result<c_int>`, whose `Ok` value you do not need.
        Err(ENOSYS)
    }

    /// Takes an event without sleeping: `false` if there is none.
    pub(crate) fn try_wait(&self) -> bool {
        // TODO: `bindings::try_wait_for_completion`.
        false
    }

    /// Whether a wait would return at once (an event is there), without
    /// taking it.
    pub(crate) fn is_done(&self) -> bool {
        // TODO: `bindings::completion_done`.
        false
    }
    // ANCHOR_END: methods
}
