//! Lab 04, reference solution: the growth and the drop of `LabVec`.

use core::ops::Deref;

use kernel::alloc::{Flags, RawBuf};
use kernel::prelude::*;

/// The capacity of the first allocation.
const MIN_CAPACITY: usize = 4;

// ANCHOR: labvec
/// A growable vector of `T` on the kmalloc heap.
///
/// The storage is a [`RawBuf`]: it holds `capacity()` slots, knows which are
/// set, and never grows by itself. Deciding when and how much to grow, and
/// dropping the values at the end, is this type's job.
pub(crate) struct LabVec<T> {
    buf: RawBuf<T>,
}
// ANCHOR_END: labvec

impl<T> LabVec<T> {
    /// An empty vector; it allocates nothing.
    pub(crate) const fn new() -> Self {
        LabVec { buf: RawBuf::new() }
    }

    /// The number of values.
    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    /// How many values fit without growing.
    pub(crate) fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    // ANCHOR: push
    /// Appends `value`, growing if needed: `Err(ENOMEM)` if memory ran out.
    pub(crate) fn push(&mut self, value: T, flags: Flags) -> Result {
        self.reserve(1, flags)?;
        // After a successful `reserve` there is room; the value comes back
        // only if there is not.
        self.buf.push_within_capacity(value).map_err(|_| ENOMEM)
    }
    // ANCHOR_END: push

    // ANCHOR: reserve
    /// Makes room for at least `additional` more values. When it has to
    /// grow, the capacity at least doubles, starting at 4. A size that
    /// overflows is `ENOMEM`, like one that does not fit in memory. On
    /// failure the vector is unchanged.
    pub(crate) fn reserve(&mut self, additional: usize, flags: Flags) -> Result {
        let needed = self.len().checked_add(additional).ok_or(ENOMEM)?;
        if needed <= self.capacity() {
            return Ok(());
        }
        let doubled = self.capacity().saturating_mul(2);
        self.buf
            .grow_to(needed.max(doubled).max(MIN_CAPACITY), flags)?;
        Ok(())
    }
    // ANCHOR_END: reserve
}

// ANCHOR: drop
impl<T> Drop for LabVec<T> {
    fn drop(&mut self) {
        // The buffer frees its memory when it is dropped, right after this,
        // but it forgets the values still in it: drop them first.
        self.buf.clear();
    }
}
// ANCHOR_END: drop

impl<T> Default for LabVec<T> {
    fn default() -> Self {
        LabVec::new()
    }
}

impl<T> Deref for LabVec<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.buf.as_slice()
    }
}
