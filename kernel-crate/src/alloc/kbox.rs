//! [`KBox`]: one value on the heap.

use core::alloc::Layout;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{ManuallyDrop, MaybeUninit};
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;

use super::{free, realloc, AllocError, Flags};

/// A value on the kmalloc heap, like `Box` but with a fallible constructor.
///
/// ```ignore
/// let b = KBox::new(42u64, GFP_KERNEL)?; // Err(AllocError) → ENOMEM
/// ```
///
/// # Invariants
///
/// `ptr` points to an initialised `T` that this box owns: a block from
/// [`realloc`] for `Layout::new::<T>()`, or a dangling pointer if `T` has
/// size zero.
pub struct KBox<T> {
    ptr: NonNull<T>,
    _owns: PhantomData<T>,
}

// SAFETY: a `KBox<T>` owns its `T`; sending or sharing it is sending or
// sharing the `T`.
unsafe impl<T: Send> Send for KBox<T> {}
// SAFETY: as above, `&KBox<T>` only gives `&T`.
unsafe impl<T: Sync> Sync for KBox<T> {}

impl<T> KBox<MaybeUninit<T>> {
    /// Writes `value` into the box and returns it as initialised.
    pub fn write(self, value: T) -> KBox<T> {
        let this = ManuallyDrop::new(self);
        let ptr = this.ptr;
        // SAFETY: `ptr` is valid for writes of a `T` (type invariant; a
        // `MaybeUninit<T>` has the layout of a `T`).
        unsafe { ptr.as_ptr().cast::<T>().write(value) };
        // INVARIANT: the `T` was just written; ownership of the block moves
        // from `this`, which is not dropped.
        KBox {
            ptr: ptr.cast(),
            _owns: PhantomData,
        }
    }
}

impl<T> KBox<T> {
    /// Moves `value` to the heap.
    pub fn new(value: T, flags: Flags) -> Result<Self, AllocError> {
        Ok(KBox::new_uninit(flags)?.write(value))
    }

    /// Allocates room for a `T`, uninitialised (zeroed with `__GFP_ZERO`).
    pub fn new_uninit(flags: Flags) -> Result<KBox<MaybeUninit<T>>, AllocError> {
        let layout = Layout::new::<T>();
        let ptr = if layout.size() == 0 {
            NonNull::dangling()
        } else {
            // SAFETY: the size is not zero and there is no old block.
            unsafe { realloc(None, layout, flags)? }.cast()
        };
        // INVARIANT: a `MaybeUninit<T>` is always initialised; the block
        // (or the dangling pointer for size zero) is for its layout.
        Ok(KBox {
            ptr,
            _owns: PhantomData,
        })
    }

    /// Moves the value out and frees the heap block.
    pub fn into_inner(self) -> T {
        let this = ManuallyDrop::new(self);
        // SAFETY: the value is initialised (type invariant) and read once:
        // `this` is not dropped.
        let value = unsafe { this.ptr.as_ptr().read() };
        if size_of::<T>() != 0 {
            // SAFETY: the block came from `realloc` (type invariant) and is
            // not used again.
            unsafe { free(this.ptr.cast()) };
        }
        value
    }
}

impl<T> Deref for KBox<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the value is initialised and owned (type invariant).
        unsafe { self.ptr.as_ref() }
    }
}

impl<T> DerefMut for KBox<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the value is initialised and owned (type invariant), and
        // `&mut self` makes this the only access.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T> Drop for KBox<T> {
    fn drop(&mut self) {
        // SAFETY: the value is initialised and owned (type invariant); it is
        // dropped once, here.
        unsafe { self.ptr.as_ptr().drop_in_place() };
        if size_of::<T>() != 0 {
            // SAFETY: the block came from `realloc` (type invariant) and is
            // not used again.
            unsafe { free(self.ptr.cast()) };
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for KBox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: fmt::Display> fmt::Display for KBox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
