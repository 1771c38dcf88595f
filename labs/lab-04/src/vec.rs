//! Lab 04: a growable vector. Implement its growth (`reserve`) and its
//! `Drop`; the book's chapter "Errors, printing and the allocator" explains
//! both, and `expected/` shows what the module must log.

use core::ops::Deref;

use kernel::alloc::{Flags, RawBuf};
use kernel::prelude::*;

/// A growable vector of `T` on the kmalloc heap.
///
/// The storage is a [`RawBuf`]: it holds `capacity()` slots, knows which are
/// set, and never grows by itself. Deciding when and how much to grow, and
/// dropping the values at the end, is this type's job.
pub(crate) struct LabVec<T> {
    buf: RawBuf<T>,
}

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

    /// Appends `value`, growing if needed: `Err(ENOMEM)` if memory ran out.
    pub(crate) fn push(&mut self, value: T, flags: Flags) -> Result {
        self.reserve(1, flags)?;
        // After a successful `reserve` there is room; the value comes back
        // only if there is not.
        self.buf.push_within_capacity(value).map_err(|_| ENOMEM)
    }

    // ANCHOR: todo
    /// Makes room for at least `additional` more values. When it has to
    /// grow, the capacity at least doubles, starting at 4. A size that
    /// overflows is `ENOMEM`, like one that does not fit in memory. On
    /// failure the vector is unchanged.
    pub(crate) fn reserve(&mut self, additional: usize, flags: Flags) -> Result {
        // TODO: compute the length needed (`checked_add`: an overflow is
        // ENOMEM); if it exceeds the capacity, grow the buffer with
        // `self.buf.grow_to(new_capacity, flags)?` to the largest of: what is
        // needed, twice the capacity, and 4.
        let _ = (additional, flags);
        Err(ENOMEM)
    }
}

// TODO: implement `Drop` for `LabVec<T>`. The buffer frees its memory
// itself, but forgets the values still in it (see `RawBuf` in
// kernel-crate/src/alloc/raw_buf.rs): a vector of `KBox`es would leak them
// (`expected/01-load.txt` counts live allocations).
// ANCHOR_END: todo

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
