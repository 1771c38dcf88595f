//! [`RawBuf`]: the storage under a vector.

use core::alloc::Layout;
use core::fmt;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use core::slice;

use super::{free, realloc, AllocError, Flags};

// ANCHOR: raw_buf
/// A heap buffer with room for `capacity()` values of `T`, of which the
/// first `len()` are set: the storage of a vector, without its growth policy
/// and without dropping what it holds.
///
/// It never grows by itself: [`push_within_capacity`](Self::push_within_capacity)
/// hands the value back when the buffer is full, and the owner decides how
/// much to [`grow_to`](Self::grow_to). Dropping the buffer frees its memory
/// but does *not* drop the values still in it: they are forgotten, as with
/// [`core::mem::forget`] (a leak, never undefined behaviour). Its owner
/// empties it first, with [`clear`](Self::clear) or [`pop`](Self::pop).
///
/// # Invariants
///
/// - If `T` has size zero, `cap == usize::MAX` and `ptr` is dangling.
/// - Otherwise, if `cap == 0`, `ptr` is dangling; else `ptr` is a block
///   from `realloc` for `Layout::array::<T>(cap)`, owned by the buffer.
/// - `len <= cap`, and the first `len` slots hold initialised values owned
///   by the buffer.
pub struct RawBuf<T> {
    ptr: NonNull<T>,
    cap: usize,
    len: usize,
    _owns: PhantomData<T>,
}
// ANCHOR_END: raw_buf

// SAFETY: the buffer owns its values; sending it sends them.
unsafe impl<T: Send> Send for RawBuf<T> {}
// SAFETY: `&RawBuf<T>` only gives `&T`s.
unsafe impl<T: Sync> Sync for RawBuf<T> {}

impl<T> RawBuf<T> {
    const IS_ZST: bool = size_of::<T>() == 0;

    /// An empty buffer; it allocates nothing.
    pub const fn new() -> Self {
        // INVARIANT: dangling with `cap == 0`, or `usize::MAX` for size zero;
        // no value is set.
        RawBuf {
            ptr: NonNull::dangling(),
            cap: if Self::IS_ZST { usize::MAX } else { 0 },
            len: 0,
            _owns: PhantomData,
        }
    }

    /// An empty buffer with room for at least `capacity` values.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn with_capacity(capacity: usize, flags: Flags) -> Result<Self, AllocError> {
        let mut buf = RawBuf::new();
        buf.grow_to(capacity, flags)?;
        Ok(buf)
    }

    /// How many values the buffer has room for.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// How many values are set.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no value is set.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every slot is set: the next push needs [`grow_to`](Self::grow_to).
    pub fn is_full(&self) -> bool {
        self.len == self.cap
    }

    // ANCHOR: grow_to
    /// Makes room for `capacity` values in total, moving the values to a
    /// larger block if needed (`krealloc`). Asking for no more than the
    /// current capacity does nothing. On failure the buffer is unchanged.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn grow_to(&mut self, capacity: usize, flags: Flags) -> Result<(), AllocError> {
        if capacity <= self.cap {
            return Ok(());
        }
        // `cap` only falls short for sized types, so the size is not zero.
        let layout = Layout::array::<T>(capacity).map_err(|_| AllocError)?;
        let old = (self.cap != 0).then(|| self.ptr.cast::<u8>());
        // SAFETY: the size is not zero (`capacity > 0`, `T` is not a ZST);
        // `old` is `None` or our block, allocated for an array of `T`, so of
        // the same alignment; it is replaced below on success.
        let new = unsafe { realloc(old, layout, flags)? };
        // INVARIANT: the new block holds `capacity >= len` slots, the first
        // `len` moved over by `krealloc`.
        self.ptr = new.cast();
        self.cap = capacity;
        Ok(())
    }
    // ANCHOR_END: grow_to

    /// Sets the next slot to `value`, or hands `value` back if the buffer is
    /// full.
    pub fn push_within_capacity(&mut self, value: T) -> Result<(), T> {
        if self.len == self.cap {
            return Err(value);
        }
        // SAFETY: `len < cap`, so the slot is inside the block (or `T` has
        // size zero); it is not set, so nothing is overwritten.
        unsafe { self.ptr.as_ptr().add(self.len).write(value) };
        // INVARIANT: the slot at the old `len` was just set.
        self.len += 1;
        Ok(())
    }

    /// Takes the last value out, if any.
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        // INVARIANT: the last slot is no longer counted as set...
        self.len -= 1;
        // SAFETY: ...and its value is moved out, once.
        Some(unsafe { self.ptr.as_ptr().add(self.len).read() })
    }

    // ANCHOR: clear
    /// Drops every value, first to last (the order of `drop_in_place` on a
    /// slice, as for a `Vec`); the capacity stays.
    pub fn clear(&mut self) {
        let set = ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len);
        // INVARIANT: the values are no longer counted as set before they are
        // dropped, so a panicking `drop` cannot cause a double drop.
        self.len = 0;
        // SAFETY: the first (former) `len` slots held values owned by the
        // buffer; they are dropped once, here.
        unsafe { ptr::drop_in_place(set) };
    }
    // ANCHOR_END: clear

    /// The values that are set.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the first `len` slots are initialised (type invariant) and
        // `ptr` is aligned and non-null even when `len == 0`.
        unsafe { slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The values that are set, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`, and `&mut self` makes this the only
        // access.
        unsafe { slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Default for RawBuf<T> {
    fn default() -> Self {
        RawBuf::new()
    }
}

impl<T> Drop for RawBuf<T> {
    fn drop(&mut self) {
        // The values still set are forgotten (see the type's documentation).
        if !Self::IS_ZST && self.cap != 0 {
            // SAFETY: with a non-zero capacity of a sized type, `ptr` is our
            // block from `realloc` (type invariant); it is not used again.
            unsafe { free(self.ptr.cast()) };
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for RawBuf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}
