//! [`KVec`]: a growable vector.

use core::fmt;
use core::ops::{Deref, DerefMut};

use super::{AllocError, Flags, RawBuf};

/// The capacity of the first allocation of a vector that grows.
const MIN_CAPACITY: usize = 4;

// ANCHOR: kvec
/// A growable array on the kmalloc heap, like `Vec`, but every operation
/// that may allocate takes [`Flags`] and can fail with [`AllocError`].
///
/// It reads like a slice (`v[0]`, `v.iter()`, `v.len()`) through `Deref`.
/// Growing doubles the capacity (at least 4), so pushing `n` values costs
/// `O(log n)` reallocations.
///
/// ```rust
/// let mut v = KVec::new();
/// v.push(1u32, GFP_KERNEL)?;
/// v.extend_from_slice(&[2, 3], GFP_KERNEL)?;
/// ```
pub struct KVec<T> {
    buf: RawBuf<T>,
}
// ANCHOR_END: kvec

impl<T> KVec<T> {
    /// An empty vector; it allocates nothing.
    pub const fn new() -> Self {
        KVec { buf: RawBuf::new() }
    }

    /// An empty vector with room for at least `capacity` values.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn with_capacity(capacity: usize, flags: Flags) -> Result<Self, AllocError> {
        Ok(KVec {
            buf: RawBuf::with_capacity(capacity, flags)?,
        })
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// How many values fit without reallocating.
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    // ANCHOR: reserve
    /// Makes room for at least `additional` more values. The capacity at
    /// least doubles when it grows; sizes that overflow fail like an
    /// allocation that does not fit. On failure the vector is unchanged.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn reserve(&mut self, additional: usize, flags: Flags) -> Result<(), AllocError> {
        let needed = self.len().checked_add(additional).ok_or(AllocError)?;
        if needed <= self.capacity() {
            return Ok(());
        }
        let doubled = self.capacity().saturating_mul(2);
        self.buf
            .grow_to(needed.max(doubled).max(MIN_CAPACITY), flags)
    }
    // ANCHOR_END: reserve

    /// Appends `value`, growing if needed.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn push(&mut self, value: T, flags: Flags) -> Result<(), AllocError> {
        self.reserve(1, flags)?;
        // `reserve` made room: this cannot hand the value back.
        self.buf.push_within_capacity(value).map_err(|_| AllocError)
    }

    /// Appends `value` if there is room, or hands it back; never allocates.
    pub fn push_within_capacity(&mut self, value: T) -> Result<(), T> {
        self.buf.push_within_capacity(value)
    }

    /// Removes and returns the last value.
    pub fn pop(&mut self) -> Option<T> {
        self.buf.pop()
    }

    /// Drops every value; the capacity stays.
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// The values.
    pub fn as_slice(&self) -> &[T] {
        self.buf.as_slice()
    }

    /// The values, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.buf.as_mut_slice()
    }
}

impl<T> KVec<T> {
    /// Inserts `value` at `index`, moving the later values up by one;
    /// `index` may be `len()`. On an allocation failure nothing changes.
    ///
    /// # Panics
    ///
    /// If `index > len()`, as `Vec::insert` does.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn insert(&mut self, index: usize, value: T, flags: Flags) -> Result<(), AllocError> {
        assert!(index <= self.len(), "KVec::insert: index out of bounds");
        self.push(value, flags)?;
        self.as_mut_slice()[index..].rotate_right(1);
        Ok(())
    }

    /// Removes and returns the value at `index`, moving the later values
    /// down by one; `None` (and no change) if there is no such value.
    pub fn remove(&mut self, index: usize) -> Option<T> {
        if index >= self.len() {
            return None;
        }
        self.as_mut_slice()[index..].rotate_left(1);
        self.pop()
    }
}

impl<T: Clone> KVec<T> {
    /// Appends clones of `values`, with at most one reallocation. On an
    /// allocation failure nothing is appended.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn extend_from_slice(&mut self, values: &[T], flags: Flags) -> Result<(), AllocError> {
        self.reserve(values.len(), flags)?;
        for value in values {
            // `reserve` made room for all of them.
            self.buf
                .push_within_capacity(value.clone())
                .map_err(|_| AllocError)?;
        }
        Ok(())
    }
}

impl<T> Default for KVec<T> {
    fn default() -> Self {
        KVec::new()
    }
}

impl<T> Drop for KVec<T> {
    fn drop(&mut self) {
        // The buffer frees the memory; the values are ours to drop.
        self.buf.clear();
    }
}

impl<T> Deref for KVec<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> DerefMut for KVec<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: fmt::Debug> fmt::Debug for KVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}
