//! [`KBox`]: one value on the heap.

use core::alloc::Layout;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{ManuallyDrop, MaybeUninit};
use core::ops::{Deref, DerefMut};
use core::pin::Pin;
use core::ptr::NonNull;

use super::{free, realloc, AllocError, Flags};

/// A value on the kmalloc heap, like `Box` but with a fallible constructor.
///
/// ```rust
/// let b = KBox::new(42u64, GFP_KERNEL)?; // Err(AllocError) → ENOMEM
/// ```
///
/// # Invariants
///
/// `ptr` points to an initialised `T` that this box owns: a block from
/// `realloc` for `Layout::new::<T>()`, or a dangling pointer if `T` has
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
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn new(value: T, flags: Flags) -> Result<Self, AllocError> {
        Ok(KBox::new_uninit(flags)?.write(value))
    }

    /// Allocates room for a `T`, uninitialised (zeroed with `__GFP_ZERO`).
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
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

    // ANCHOR: pin_init
    /// Initialises a value in place on the heap, where it stays: the
    /// result is pinned, so a value that must not move (a lock) can live
    /// in a box. An allocation failure becomes `E` (for example `ENOMEM`).
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn pin_init<E: From<AllocError>>(
        init: impl crate::init::PinInit<T, E>,
        flags: Flags,
    ) -> Result<Pin<KBox<T>>, E> {
        let uninit = KBox::<T>::new_uninit(flags)?;
        // SAFETY: the block is valid for writes of a `T` and owned by
        // `uninit`; the value will be pinned: it stays in the block until
        // the box drops it in place.
        unsafe { init.__pinned_init(uninit.ptr.as_ptr().cast()) }?;
        let this = ManuallyDrop::new(uninit);
        // INVARIANT: the `T` was just initialised; ownership of the block
        // moves from `this`, which is not dropped.
        let boxed = KBox {
            ptr: this.ptr.cast(),
            _owns: PhantomData,
        };
        // SAFETY: the value is never moved out of the block: `Pin` hides
        // `&mut T` unless `T: Unpin`.
        Ok(unsafe { Pin::new_unchecked(boxed) })
    }
    // ANCHOR_END: pin_init

    /// Gives up ownership of the block: the caller must pass the pointer to
    /// [`KBox::from_raw`] later, or the value leaks.
    pub fn into_raw(this: Self) -> *mut T {
        ManuallyDrop::new(this).ptr.as_ptr()
    }

    /// Takes back ownership of a block from [`KBox::into_raw`].
    ///
    /// # Safety
    ///
    /// `ptr` comes from `KBox::<T>::into_raw` (or from
    /// `KBox::<MaybeUninit<T>>::into_raw` once the `T` is written), and is
    /// given to `from_raw` once.
    pub unsafe fn from_raw(ptr: *mut T) -> Self {
        // INVARIANT: the caller guarantees that `ptr` is an owned block
        // holding an initialised `T`.
        KBox {
            // SAFETY: `into_raw` never returns null.
            ptr: unsafe { NonNull::new_unchecked(ptr) },
            _owns: PhantomData,
        }
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
