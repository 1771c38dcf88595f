// TODO-BEGIN
//! The buffer allocator: carves a process's mapping (at most 4 MiB) into
// TODO-ELSE
// //! Lab 10: the buffer allocator, whose `alloc` and `free` are yours to
// //! write (the `TODO`s). It carves a process's mapping (at most 4 MiB) into
// TODO-END
//! buffers for incoming transactions, best fit, as C's `binder_alloc.c`
//! does, so that buffer addresses come out the same.
//!
//! The allocator lives in its process's lock. It only hands out ranges:
//! their pages (`Pages`) are allocated and mapped by the sender once it
//! holds a buffer, without the lock; the driver writes a transaction's
//! bytes through them, and the receiver reads them through its read-only
//! mapping.

use kernel::prelude::*;
use kernel::sync::Arc;

use crate::defs::{align8, PTR_SIZE};
use crate::process::Pages;

// ANCHOR: buffer
/// A piece of the mapping, free or holding one transaction.
pub(crate) struct Buffer {
    /// Offset from the start of the mapping.
    pub(crate) offset: usize,
    pub(crate) free: bool,
    pub(crate) data_size: usize,
    pub(crate) offsets_size: usize,
    /// One-way: counted against half of the mapping.
    pub(crate) is_async: bool,
    /// The receiver may free it (it has read the transaction).
    pub(crate) allow_user_free: bool,
    /// The node the transaction went to (`None` for a reply): a strong
    /// reference on it is held until the buffer is freed.
    pub(crate) target_node: Option<Arc<crate::process::Node>>,
}
// ANCHOR_END: buffer

/// A process's mapping and the buffers in it, in address order.
pub(crate) struct Allocator {
    /// The user address of the mapping.
    pub(crate) base: usize,
    pub(crate) size: usize,
    pages: Arc<Pages>,
    buffers: KVec<Buffer>,
    free_async_space: usize,
}

impl Allocator {
    /// An allocator over `size` bytes at `base`, whose pages are `pages`,
    /// or `ENOMEM`.
    pub(crate) fn new(base: usize, size: usize, pages: Arc<Pages>) -> Result<Self> {
        let mut buffers = KVec::new();
        buffers.push(Buffer::free_at(0), GFP_KERNEL)?;
        Ok(Allocator {
            base,
            size,
            pages,
            buffers,
            free_async_space: size / 2,
        })
    }

    pub(crate) fn pages(&self) -> &Arc<Pages> {
        &self.pages
    }

    /// How far buffer `i` extends: to the next buffer, or the end.
    fn extent(&self, i: usize) -> usize {
        let end = self.buffers.get(i + 1).map_or(self.size, |b| b.offset);
        end - self.buffers[i].offset
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
        // The smallest free buffer that fits; the first of equals.
        let mut best: Option<(usize, usize)> = None;
        for i in 0..self.buffers.len() {
            if !self.buffers[i].free {
                continue;
            }
            let extent = self.extent(i);
            if extent >= size && best.is_none_or(|(_, e)| extent < e) {
                best = Some((i, extent));
            }
        }
        let (i, extent) = best.ok_or(ENOSPC)?;
        if extent != size {
            let rest = Buffer::free_at(self.buffers[i].offset + size);
            self.buffers.insert(i + 1, rest, GFP_KERNEL)?;
        }
        let b = &mut self.buffers[i];
        b.free = false;
        b.allow_user_free = false;
        b.data_size = data_size;
        b.offsets_size = offsets_size;
        b.is_async = is_async;
        b.target_node = None;
        if is_async {
            self.free_async_space -= size;
        }
        Ok(b.offset)
        // TODO-ELSE
        // // TODO: the size is both parts rounded up to 8 bytes (`align8`),
        // // at least 8 (`PTR_SIZE`); `EINVAL` if the sum overflows. A
        // // one-way buffer must fit in `free_async_space`, which it then
        // // uses up (else `ENOSPC`). Take the smallest free buffer whose
        // // `extent` fits (the first of equals; none: `ENOSPC`), split off
        // // what is left as a new free buffer just after it (`insert`), and
        // // mark it allocated with the sizes, `is_async`, no target node and
        // // `allow_user_free` false.
        // let _ = (data_size, offsets_size, is_async, PTR_SIZE, align8(0));
        // let _ = (self.extent(0), self.free_async_space);
        // Err(ENOSPC)
        // TODO-END
    }
    // ANCHOR_END: alloc

    /// The allocated buffer at `offset`.
    pub(crate) fn buffer_mut(&mut self, offset: usize) -> Option<&mut Buffer> {
        self.buffers
            .iter_mut()
            .find(|b| b.offset == offset && !b.free)
    }

    /// Offsets of every allocated buffer.
    pub(crate) fn allocated(&self) -> impl Iterator<Item = usize> + '_ {
        self.buffers.iter().filter(|b| !b.free).map(|b| b.offset)
    }

    // ANCHOR: free
    /// Frees the buffer at `offset` and merges it with free neighbours.
    /// Returns its target node, whose reference the caller drops.
    pub(crate) fn free(&mut self, offset: usize) -> Option<Arc<crate::process::Node>> {
        // TODO-BEGIN
        let i = self
            .buffers
            .iter()
            .position(|b| b.offset == offset && !b.free)?;
        if self.buffers[i].is_async {
            self.free_async_space += self.extent(i);
        }
        let b = &mut self.buffers[i];
        b.free = true;
        b.is_async = false;
        let node = b.target_node.take();
        if self.buffers.get(i + 1).is_some_and(|n| n.free) {
            self.buffers.remove(i + 1);
        }
        if i > 0 && self.buffers[i - 1].free {
            self.buffers.remove(i);
        }
        node
        // TODO-ELSE
        // // TODO: find the buffer at `offset`; a one-way one gives its
        // // `extent` back to `free_async_space`. Mark it free, take its
        // // target node (to return), and merge it with the next buffer and
        // // then the previous one when they are free (`remove`), so that
        // // free space is never split in two.
        // let _ = offset;
        // None
        // TODO-END
    }
    // ANCHOR_END: free
}

impl Buffer {
    fn free_at(offset: usize) -> Self {
        Buffer {
            offset,
            free: true,
            data_size: 0,
            offsets_size: 0,
            is_async: false,
            allow_user_free: false,
            target_node: None,
        }
    }
}
