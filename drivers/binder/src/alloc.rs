// TODO-BEGIN
//! The buffer allocator: carves a process's mapping (at most 4 MiB) into
// TODO-ELSE
// //! Lab 10: the buffer allocator, whose `alloc` and `free` are yours to
// //! write (the `TODO`s). It carves a process's mapping (at most 4 MiB) into
// TODO-END
//! buffers for incoming transactions, best fit, as C's `binder_alloc.c`
//! does, so that buffer addresses come out the same.
//!
//! The buffers are kept as C keeps them, in red-black trees: all of them
//! by offset (a buffer and its neighbours), the free ones by size, then
//! offset (best fit is a lower bound), so each operation takes `O(log n)`
//! steps however many one-way calls are waiting.
//!
//! The allocator only hands out ranges of offsets, and knows nothing of
//! processes or pages: each allocated buffer carries a `T` for its user
//! (the driver's: the node a transaction went to). It lives in its
//! process's lock; the pages under a range (`page_range.rs`) are
//! allocated and mapped by the sender once it holds a buffer, without
//! the lock.

use kernel::prelude::*;
use kernel::rbtree::{RBTree, Reservation};

use crate::defs::{align8, PTR_SIZE};

// ANCHOR: buffer
/// A piece of the mapping, free or holding one transaction; its offset
/// is its key in the allocator's `buffers`.
pub(crate) struct Buffer<T> {
    pub(crate) free: bool,
    pub(crate) data_size: usize,
    pub(crate) offsets_size: usize,
    /// One-way: counted against half of the mapping.
    pub(crate) is_async: bool,
    /// The receiver may free it (it has read the transaction).
    pub(crate) allow_user_free: bool,
    /// What its user keeps with it until it is freed (for the driver,
    /// the node a transaction went to, `None` for a reply).
    pub(crate) data: Option<T>,
    /// An allocated buffer's node of `free_by_size`, kept for its `free`.
    pub(crate) free_node: Option<Reservation<(usize, usize), ()>>,
}
// ANCHOR_END: buffer

/// The buffers of a range of `size` bytes (a process's mapping).
pub(crate) struct Allocator<T> {
    size: usize,
    /// Every buffer, free or not, by offset: they tile the range.
    buffers: RBTree<usize, Buffer<T>>,
    /// The free buffers by extent, then offset: best fit is the lower
    /// bound of `(size, 0)`.
    free_by_size: RBTree<(usize, usize), ()>,
    free_async_space: usize,
}

impl<T> Allocator<T> {
    /// An allocator over `size` bytes, one free buffer, or `ENOMEM`.
    pub(crate) fn new(size: usize) -> Result<Self> {
        let mut buffers = RBTree::new();
        buffers.try_insert(0, Buffer::new_free(), GFP_KERNEL)?;
        let mut free_by_size = RBTree::new();
        free_by_size.try_insert((size, 0), (), GFP_KERNEL)?;
        Ok(Allocator {
            size,
            buffers,
            free_by_size,
            free_async_space: size / 2,
        })
    }

    /// How far the buffer at `offset` extends: to the next buffer, or the
    /// end.
    fn extent(&self, offset: usize) -> usize {
        let next = self.buffers.lower_bound(&(offset + 1));
        next.map_or(self.size, |(o, _)| *o) - offset
    }

    // ANCHOR: alloc
    /// Allocates a buffer for `data_size` bytes of data and an offsets
    /// array of `offsets_size` bytes; returns its offset. `EINVAL` for
    /// sizes that overflow, `ENOSPC` when no free buffer is large enough,
    /// or a one-way buffer would take more than the one-way half.
    pub(crate) fn alloc(
        &mut self,
        data_size: usize,
        offsets_size: usize,
        is_async: bool,
    ) -> Result<usize> {
        // TODO-BEGIN
        let size = align8(data_size)
            .zip(align8(offsets_size))
            .and_then(|(d, o)| d.checked_add(o))
            .ok_or(EINVAL)?
            .max(PTR_SIZE);
        if is_async && self.free_async_space < size {
            return Err(ENOSPC);
        }
        // The smallest free buffer that fits; the lowest offset of equals.
        let (extent, offset) = *self.free_by_size.lower_bound(&(size, 0)).ok_or(ENOSPC)?.0;
        // A split needs two nodes: allocate them before anything changes.
        let split = if extent == size {
            None
        } else {
            let in_buffers = RBTree::try_reserve_node(GFP_KERNEL)?;
            Some((in_buffers, RBTree::try_reserve_node(GFP_KERNEL)?))
        };
        let b = self.buffers.get_mut(&offset).ok_or(EINVAL)?;
        b.free = false;
        b.allow_user_free = false;
        b.data_size = data_size;
        b.offsets_size = offsets_size;
        b.is_async = is_async;
        b.data = None;
        // Its node in `free_by_size` waits in it for `free`.
        b.free_node = self
            .free_by_size
            .remove_node(&(extent, offset))
            .map(|(_, (), node)| node);
        if let Some((in_buffers, in_free)) = split {
            let rest = offset + size;
            self.buffers.insert(in_buffers, rest, Buffer::new_free());
            self.free_by_size.insert(in_free, (extent - size, rest), ());
        }
        if is_async {
            self.free_async_space -= size;
        }
        Ok(offset)
        // TODO-ELSE
        // // TODO: the size is both parts rounded up to 8 bytes (`align8`),
        // // at least 8 (`PTR_SIZE`); `EINVAL` if the sum overflows. A
        // // one-way buffer must fit in `free_async_space`, which it then
        // // uses up (else `ENOSPC`). Take the smallest free buffer that
        // // fits, the lowest offset of equals: `free_by_size`'s
        // // `lower_bound` of `(size, 0)` (none: `ENOSPC`). Split off what
        // // is left, if anything, as a new free buffer just after it (in
        // // `buffers` and in `free_by_size`, with nodes reserved before any change:
        // // `RBTree::try_reserve_node`, `insert`). Mark it allocated
        // // (`get_mut`) with the sizes, `is_async`, no `data` and
        // // `allow_user_free` false, and keep its node of `free_by_size`
        // // (`remove_node`) in `free_node`.
        // let _ = (data_size, offsets_size, is_async, PTR_SIZE, align8(0));
        // let _ = (self.extent(0), self.free_async_space);
        // Err(ENOSPC)
        // TODO-END
    }
    // ANCHOR_END: alloc

    /// The allocated buffer at `offset`.
    pub(crate) fn buffer_mut(&mut self, offset: usize) -> Option<&mut Buffer<T>> {
        self.buffers.get_mut(&offset).filter(|b| !b.free)
    }

    /// Offsets of every allocated buffer.
    pub(crate) fn allocated(&self) -> impl Iterator<Item = usize> + '_ {
        self.buffers
            .iter()
            .filter(|(_, b)| !b.free)
            .map(|(o, _)| *o)
    }

    // ANCHOR: free
    /// Frees the buffer at `offset` and merges it with free neighbours.
    /// Returns its `data`.
    pub(crate) fn free(&mut self, offset: usize) -> Option<T> {
        // TODO-BEGIN
        let mut extent = self.extent(offset);
        let b = self.buffers.get_mut(&offset).filter(|b| !b.free)?;
        // The node it took out of `free_by_size`: freeing never allocates.
        let in_free = b.free_node.take()?;
        let is_async = b.is_async;
        b.free = true;
        b.is_async = false;
        let data = b.data.take();
        if is_async {
            self.free_async_space += extent;
        }
        // Merge with the next buffer, then the previous one, if free.
        let next = offset + extent;
        if self.buffers.get(&next).is_some_and(|n| n.free) {
            let next_extent = self.extent(next);
            self.free_by_size.remove(&(next_extent, next));
            self.buffers.remove(&next);
            extent += next_extent;
        }
        let mut start = offset;
        if let Some((&prev, p)) = self.buffers.last_below(&offset) {
            if p.free {
                let prev_extent = offset - prev;
                self.free_by_size.remove(&(prev_extent, prev));
                self.buffers.remove(&offset);
                start = prev;
                extent += prev_extent;
            }
        }
        self.free_by_size.insert(in_free, (extent, start), ());
        data
        // TODO-ELSE
        // // TODO: find the allocated buffer at `offset` (`get_mut`) and
        // // take its `free_node` (none: `None`); a one-way one gives its
        // // `extent` back to `free_async_space`. Mark it free, take its
        // // `data` (to return), and merge it with the next buffer
        // // and then the previous one (`last_below`) when they are free,
        // // so that free space is never split in two: `remove` the merged
        // // ones from `buffers` and from `free_by_size`, then `insert` the
        // // result in `free_by_size` with the `free_node`: freeing never
        // // allocates.
        // let _ = offset;
        // None
        // TODO-END
    }
    // ANCHOR_END: free
}

impl<T> Buffer<T> {
    fn new_free() -> Self {
        Buffer {
            free: true,
            data_size: 0,
            offsets_size: 0,
            is_async: false,
            allow_user_free: false,
            data: None,
            free_node: None,
        }
    }
}
