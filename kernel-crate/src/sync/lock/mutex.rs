//! [`Mutex`]: a sleeping lock over `struct mutex`.
//!
//! C header: [`include/linux/mutex.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/mutex.h)

use core::ffi::c_char;

use super::{Backend, Guard, Lock};
use crate::bindings;

/// A mutual-exclusion lock that sleeps while it waits: hold it only where
/// sleeping is allowed (not in interrupt context, not under a spinlock).
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
        $crate::sync::Mutex::new(
            $value,
            $crate::optional_name!($($name)?),
            $crate::static_lock_class!(),
        )
    };
}
// ANCHOR_END: new_mutex

/// The [`Backend`] of [`Mutex`]: `mutex_lock` and `mutex_unlock`.
pub struct MutexBackend;

// ANCHOR: backend
// SAFETY: `mutex_lock` gives exclusive ownership until `mutex_unlock`.
unsafe impl Backend for MutexBackend {
    type State = bindings::mutex;
    type GuardState = ();

    unsafe fn init(ptr: *mut Self::State, name: *const c_char, key: *mut bindings::lock_class_key) {
        // SAFETY: the caller guarantees that `ptr` is valid and pinned and
        // that `name` and `key` are `'static`.
        unsafe { bindings::__mutex_init(ptr, name, key) };
    }

    unsafe fn lock(ptr: *mut Self::State) {
        // SAFETY: the caller guarantees that the mutex is initialised.
        unsafe { bindings::rust_helper_mutex_lock(ptr) };
    }

    unsafe fn unlock(ptr: *mut Self::State, _state: &()) {
        // SAFETY: the caller guarantees that this thread holds the mutex.
        unsafe { bindings::mutex_unlock(ptr) };
    }
}
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
