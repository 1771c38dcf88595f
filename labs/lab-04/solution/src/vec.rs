// TODO-BEGIN
//! Lab 04, reference solution: the growth, the slices and the drop of
//! `LabVec`.
// TODO-ELSE
// //! Lab 04: a growable vector. Implement its growth (`reserve`), its two
// //! slice methods (`extend_from_slice`, `truncate`) and its `Drop`; the
// //! book's chapter "Errors, printing and the allocator" explains the pieces,
// //! and `expected/` shows what the module must log.
// TODO-END

use core::ops::Deref;

use kernel::alloc::{Flags, RawBuf};
use kernel::prelude::*;

// TODO-BEGIN
/// The capacity of the first allocation.
const MIN_CAPACITY: usize = 4;

// TODO-END
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
        // TODO-BEGIN
        let needed = self.len().checked_add(additional).ok_or(ENOMEM)?;
        if needed <= self.capacity() {
            return Ok(());
        }
        let doubled = self.capacity().saturating_mul(2);
        self.buf
            .grow_to(needed.max(doubled).max(MIN_CAPACITY), flags)?;
        Ok(())
        // TODO-ELSE
        // // TODO: grow the buffer (`self.buf.grow_to`) only when what is
        // // needed does not fit, as the comment above says.
        // let _ = (additional, flags);
        // Err(ENOMEM)
        // TODO-END
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
        // TODO-BEGIN
        // Room for all of them first: after that nothing can fail, so there
        // is no half-extended vector to undo.
        self.reserve(values.len(), flags)?;
        for value in values {
            self.buf
                .push_within_capacity(value.clone())
                .map_err(|_| ENOMEM)?;
        }
        Ok(())
        // TODO-ELSE
        // // TODO
        // let _ = (values, flags);
        // Err(ENOMEM)
        // TODO-END
    }

    /// Keeps the first `len` values and drops the others, last first; the
    /// capacity stays. Nothing happens if there are `len` values or fewer.
    pub(crate) fn truncate(&mut self, len: usize) {
        // TODO-BEGIN
        while self.len() > len {
            drop(self.buf.pop());
        }
        // TODO-ELSE
        // // TODO
        // let _ = len;
        // TODO-END
    }
    // ANCHOR_END: extend
}

// ANCHOR: drop
// TODO-BEGIN
impl<T> Drop for LabVec<T> {
    fn drop(&mut self) {
        // The buffer frees its memory when it is dropped, right after this,
        // but it forgets the values still in it: drop them first.
        self.buf.clear();
    }
}
// TODO-ELSE
// // TODO: implement `Drop` for `LabVec<T>`. The buffer frees its memory
// // itself, but forgets the values still in it (see `RawBuf` in
// // kernel-crate/src/alloc/raw_buf.rs): a vector of `KBox`es would leak them
// // (`expected/01-load.txt` counts live allocations).
// TODO-END
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
