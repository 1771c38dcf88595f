//! [`SpinLock`] and [`SpinLockIrq`] over `spinlock_t`.
//!
//! C header: [`include/linux/spinlock.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/spinlock.h)
//!
//! # Interrupts and guards dropped out of order
//!
//! Guards may be dropped in any order (`drop(a)` before `drop(b)`), and
//! hand-over-hand locking needs that. With `spin_lock_irqsave` per guard,
//! each guard would restore the state it saw: the outer one saw interrupts
//! on, so dropping it first would turn them on while the inner lock is
//! still held, and an interrupt handler that takes that lock deadlocks
//! (lockdep: inconsistent lock state). So a [`SpinLockIrq`] guard does not keep
//! flags: the first irq guard of this module on a CPU saves the state and
//! disables interrupts, the last one dropped restores it, whatever the
//! order, with a per-CPU count in between (`helpers/sync.c`).
//!
//! This is mainline's design (`SpinLockIrq` over `spin_lock_irq_disable`,
//! which counts in `preempt_count` with `local_interrupt_disable`); an
//! out-of-tree module cannot add bits to `preempt_count`, so the count is
//! the module's own. Mainline first tried closures that hand out an
//! "interrupts disabled" token, which forbid out-of-order drops by the
//! API's shape but cannot express hand-over-hand locking, and whose
//! guards could still be swapped or unlocked (`do_unlocked`) under an
//! inner lock; the count makes every order correct instead.

use crate::bindings;

/// A lock that spins while it waits, with preemption disabled while it is
/// held: code holding it must not sleep.
pub type SpinLock<T> = super::Lock<T, SpinLockBackend>;

/// The guard of a [`SpinLock`].
pub type SpinLockGuard<'a, T> = super::Guard<'a, T, SpinLockBackend>;

/// A [`SpinLock`] that also disables interrupts on this CPU while held:
/// for data an interrupt handler shares. Interrupts come back on when the
/// last such guard is dropped, in whatever order (see the module docs).
pub type SpinLockIrq<T> = super::Lock<T, SpinLockIrqBackend>;

/// The guard of a [`SpinLockIrq`]; dropping the last one held restores
/// the interrupt state from before the first.
pub type SpinLockIrqGuard<'a, T> = super::Guard<'a, T, SpinLockIrqBackend>;

/// An initialiser for a [`SpinLock`] holding `$value`, with a lock class
/// of its own: `new_spinlock!(0)` or `new_spinlock!(0, "name")`.
#[macro_export]
macro_rules! new_spinlock {
    ($value:expr $(, $name:literal)? $(,)?) => {
        $crate::new_named!($crate::sync::SpinLock::new, $value; $($name)?)
    };
}

/// An initialiser for a [`SpinLockIrq`] holding `$value`, with a lock
/// class of its own.
#[macro_export]
macro_rules! new_spinlock_irq {
    ($value:expr $(, $name:literal)? $(,)?) => {
        $crate::new_named!($crate::sync::SpinLockIrq::new, $value; $($name)?)
    };
}

// `spin_lock` gives exclusive ownership until `spin_unlock`.
plain_backend!(
    /// The [`Backend`](super::Backend) of [`SpinLock`]: `spin_lock` and
    /// `spin_unlock`.
    SpinLockBackend,
    bindings::spinlock_t,
    init: bindings::rust_helper_spin_lock_init,
    lock: bindings::rust_helper_spin_lock,
    unlock: bindings::rust_helper_spin_unlock
);

// `spin_lock` gives exclusive ownership until `spin_unlock`, with or
// without disabling interrupts around it.
plain_backend!(
    /// The [`Backend`](super::Backend) of [`SpinLockIrq`]: `spin_lock`
    /// with interrupts disabled by the first irq guard and restored by the
    /// last one (see the module docs).
    SpinLockIrqBackend,
    bindings::spinlock_t,
    init: bindings::rust_helper_spin_lock_init,
    lock: bindings::rust_helper_spin_lock_irq_disable,
    unlock: bindings::rust_helper_spin_unlock_irq_enable
);

/// Whether interrupts are disabled on this CPU (`irqs_disabled()`): while
/// a [`SpinLockIrq`] guard is held, in an interrupt handler, or where the
/// caller's caller disabled them.
pub fn irqs_disabled() -> bool {
    // SAFETY: reading the CPU's interrupt flag has no preconditions.
    unsafe { bindings::rust_helper_irqs_disabled() }
}
