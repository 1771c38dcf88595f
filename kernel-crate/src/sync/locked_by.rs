//! [`LockedBy`]: data protected by a lock that lives elsewhere.
//!
//! C header: none; this is the Rust form of a comment such as "protected
//! by `dev->lock`" in a C struct.

use core::cell::UnsafeCell;

use super::lock::{Backend, Guard, Lock};

// ANCHOR: locked_by
/// Data protected by a [`Lock`] that is not its own: one lock can guard
/// many pieces of data spread over several objects.
///
/// It is made with a reference to its lock, and gives access only to the
/// holder of a guard of *that* lock (checked by address at run time).
///
/// ```rust
/// # let list_lock = Arc::pin_init(new_mutex!(()), GFP_KERNEL)?;
/// let item = LockedBy::new(&list_lock, 0u64);
/// let mut guard = list_lock.lock();
/// *item.access_mut(&mut guard) += 1;
/// ```
///
/// # Invariants
///
/// `owner` is the address of the lock that protects `data`.
pub struct LockedBy<T: ?Sized, L: ?Sized> {
    owner: *const L,
    data: UnsafeCell<T>,
}
// ANCHOR_END: locked_by

// SAFETY: sending a `LockedBy` sends the data; the owner pointer is only
// compared, never dereferenced.
unsafe impl<T: ?Sized + Send, L: ?Sized> Send for LockedBy<T, L> {}
// SAFETY: shared, it gives `&mut T` only to the holder of the lock's
// guard, one thread at a time (`T: Send`); `access` gives `&T` and requires
// `T: Sync` itself.
unsafe impl<T: ?Sized + Send, L: ?Sized> Sync for LockedBy<T, L> {}

impl<T, U: ?Sized, B: Backend> LockedBy<T, Lock<U, B>> {
    /// Data protected by `owner`.
    pub fn new(owner: &Lock<U, B>, data: T) -> Self {
        // INVARIANT: `owner` is the lock that protects the data from now on.
        Self {
            owner,
            data: UnsafeCell::new(data),
        }
    }
}

impl<T: ?Sized, U: ?Sized, B: Backend> LockedBy<T, Lock<U, B>> {
    /// Whether `guard` holds this data's lock.
    fn check(&self, guard: &Guard<'_, U, B>) {
        // Not reachable from outside input: only a programming error (a
        // guard of another lock) gets here.
        assert!(
            core::ptr::eq(guard.lock_ref(), self.owner),
            "LockedBy: the guard is not of the lock that protects this data"
        );
    }

    /// The data, read-only, to the holder of its lock's guard.
    ///
    /// # Panics
    ///
    /// If `guard` is the guard of another lock.
    pub fn access<'a>(&'a self, guard: &'a Guard<'_, U, B>) -> &'a T
    where
        T: Sync,
    {
        self.check(guard);
        // SAFETY: the lock that protects the data is held, and `guard` is
        // borrowed as long as the result: no `&mut T` exists meanwhile.
        unsafe { &*self.data.get() }
    }

    /// The data, mutable, to the holder of its lock's guard.
    ///
    /// # Panics
    ///
    /// If `guard` is the guard of another lock.
    pub fn access_mut<'a>(&'a self, guard: &'a mut Guard<'_, U, B>) -> &'a mut T {
        self.check(guard);
        // SAFETY: the lock that protects the data is held, and `guard` is
        // borrowed mutably as long as the result: this is the only access.
        unsafe { &mut *self.data.get() }
    }
}
