//! [`Mutex`]: a sleeping lock over `struct mutex`.
//!
//! C header: [`include/linux/mutex.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/mutex.h)

use super::{Guard, Lock};
use crate::bindings;

/// A mutual-exclusion lock that sleeps while it waits: hold it only where
/// sleeping is allowed (not in interrupt context, not under a spinlock).
/// [`lock`](super::Lock::lock) may sleep; [`try_lock`](Lock::try_lock)
/// never does.
///
/// ```rust
/// let counter: Arc<Mutex<u64>> = Arc::pin_init(new_mutex!(0), GFP_KERNEL)?;
/// *counter.lock() += 1;
/// ```
pub type Mutex<T> = super::Lock<T, MutexBackend>;

/// The guard of a [`Mutex`].
pub type MutexGuard<'a, T> = super::Guard<'a, T, MutexBackend>;

// ANCHOR: new_mutex
/// An initialiser for a [`Mutex`] holding `$value`, with a lock class of
/// its own: `new_mutex!(0)`, or `new_mutex!(0, "name")` to name it.
#[macro_export]
macro_rules! new_mutex {
    ($value:expr $(, $name:literal)? $(,)?) => {
        $crate::new_named!($crate::sync::Mutex::new, $value; $($name)?)
    };
}
// ANCHOR_END: new_mutex

// ANCHOR: backend
// `mutex_lock` is a function of the kernel, called directly, except with
// lockdep (`CONFIG_DEBUG_LOCK_ALLOC`, the debug kernel), where it is a
// macro over `mutex_lock_nested` that a C helper wraps.
#[cfg(not(CONFIG_DEBUG_LOCK_ALLOC))]
pub(crate) use bindings::mutex_lock;
#[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
pub(crate) use bindings::rust_helper_mutex_lock as mutex_lock;

// `mutex_lock` gives exclusive ownership until `mutex_unlock`.
plain_backend!(
    /// The [`Backend`](super::Backend) of [`Mutex`]: `mutex_lock` and
    /// `mutex_unlock`.
    MutexBackend,
    bindings::mutex,
    init: bindings::__mutex_init,
    lock: mutex_lock,
    unlock: bindings::mutex_unlock
);
// ANCHOR_END: backend

impl<T: ?Sized> Lock<T, MutexBackend> {
    /// Takes the mutex if it is free, without waiting (`mutex_trylock`):
    /// for paths that must not sleep on it, such as a shrinker's.
    ///
    /// ```rust
    /// let m: Arc<Mutex<u32>> = Arc::pin_init(new_mutex!(1), GFP_KERNEL)?;
    /// let held = m.try_lock().ok_or(EINVAL)?;
    /// let busy = m.try_lock().is_none();
    /// drop(held);
    /// pr_info!("busy while held: {busy}, then {:?}\n", m.try_lock().map(|g| *g));
    /// ```
    pub fn try_lock(&self) -> Option<Guard<'_, T, MutexBackend>> {
        // SAFETY: `state` is initialised (type invariant of `Lock`).
        if unsafe { bindings::mutex_trylock(self.state.as_raw()) } == 0 {
            return None;
        }
        // INVARIANT: the mutex is held, by this thread.
        Some(Guard {
            lock: self,
            state: (),
            _not_send: core::marker::PhantomData,
        })
    }
}
