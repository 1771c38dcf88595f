//! Lab 04: a growable vector. Implement its growth (`reserve`), its two
//! slice methods (`extend_from_slice`, `truncate`) and its `Drop`; the
//! book's chapter "Errors, printing and the allocator" explains the pieces,
//! and `expected/` shows what the module must log.

use core::ops::Deref;

use kernel::alloc::{Flags, RawBuf};
use kernel::prelude::*;

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
    // ANCHOR: todo
    /// Makes room for at least `additional` more values. When they do not
    /// fit, the new capacity is the largest of three: what is needed
    /// (`len + additional`), twice the capacity, and 4; exactly that, as
    /// the expected capacities show. A size that overflows is `ENOMEM`,
    /// like one that does not fit in memory. On failure the vector is
    /// unchanged.
    pub(crate) fn reserve(&mut self, additional: usize, flags: Flags) -> Result {
        // TODO: grow the buffer (`self.buf.grow_to`) only when what is
        // needed does not fit, as the comment above says.
        let _ = (additional, flags);
        Err(ENOMEM)
    }
    // ANCHOR_END: reserve

    // ANCHOR: extend
    /// Appends a copy of every value of `values`, in order: all of them, or,
    /// if memory runs out, none (`Err(ENOMEM)`, the vector unchanged). It
    /// allocates at most once.
    pub(crate) fn extend_from_slice(&mut self, values: &[T], flags: Flags) -> Result
    where
        T: Clone,
    {
        // TODO
        let _ = (values, flags);
        Err(ENOMEM)
    }

    /// Keeps the first `len` values and drops the others, last first; the
    /// capacity stays. Nothing happens if there are `len` values or fewer.
    pub(crate) fn truncate(&mut self, len: usize) {
        // TODO
        let _ = len;
    }
    // ANCHOR_END: extend
}

// ANCHOR: drop
// TODO: implement `Drop` for `LabVec<T>`. The buffer frees its memory
// itself, but forgets the values still in it (see `RawBuf` in
// kernel-crate/src/alloc/raw_buf.rs): a vector of `KBox`es would leak them
// (`expected/01-load.txt` counts live allocations).
// ANCHOR_END: drop
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
