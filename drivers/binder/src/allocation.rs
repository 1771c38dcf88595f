//! A process's mapping: its range allocator over its pages, and one
//! allocated buffer seen through them ([`TxnBuffer`]). The sender copies
//! into the buffer and translates its objects in place, as C's
//! `binder_transaction` does, without the process lock.

use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::uapi::binder as uapi;

use crate::alloc::{Allocator, Buffer};
use crate::defs::{align8, object_size, PTR_SIZE};
use crate::node::Node;
use crate::page_range::Pages;

/// The mapping of a process: where it is in the process, its pages, and
/// the buffers in it, each holding the node its transaction went to.
pub(crate) struct Mapping {
    /// The user address of the mapping.
    pub(crate) base: usize,
    pages: Arc<Pages>,
    alloc: Allocator<Arc<Node>>,
}

// ANCHOR: alloc_counted
/// The allocator's buffers counted on their pages. Every allocation and
/// free goes through these, so a page's count is the number of allocated
/// buffers over it, whichever path frees them.
impl Mapping {
    /// Allocates a buffer ([`Allocator::alloc`]) and counts it on the
    /// pages it covers.
    pub(crate) fn alloc_counted(
        &mut self,
        data_size: usize,
        offsets_size: usize,
        is_async: bool,
    ) -> Result<usize> {
        let offset = self.alloc.alloc(data_size, offsets_size, is_async)?;
        self.pages.hold(offset, buffer_len(data_size, offsets_size));
        Ok(offset)
    }

    /// Frees the allocated buffer at `offset` ([`Allocator::free`]) and
    /// uncounts it from its pages. Returns its target node.
    pub(crate) fn free_counted(&mut self, offset: usize) -> Option<Arc<Node>> {
        let b = self.alloc.buffer_mut(offset)?;
        let len = buffer_len(b.data_size, b.offsets_size);
        let node = self.alloc.free(offset);
        self.pages.release(offset, len);
        node
    }
}
// ANCHOR_END: alloc_counted

impl Mapping {
    /// The mapping of `size` bytes at `base`, over `pages`, with one free
    /// buffer; `ENOMEM`.
    pub(crate) fn new(base: usize, size: usize, pages: Arc<Pages>) -> Result<Self> {
        Ok(Mapping {
            base,
            pages,
            alloc: Allocator::new(size)?,
        })
    }

    pub(crate) fn pages(&self) -> &Arc<Pages> {
        &self.pages
    }

    /// The allocated buffer at `offset`.
    pub(crate) fn buffer_mut(&mut self, offset: usize) -> Option<&mut Buffer<Arc<Node>>> {
        self.alloc.buffer_mut(offset)
    }

    /// Offsets of every allocated buffer.
    pub(crate) fn allocated(&self) -> impl Iterator<Item = usize> + '_ {
        self.alloc.allocated()
    }
}

/// The bytes an allocated buffer takes, as the allocator rounds them
/// (both parts 8-aligned, at least 8); it checked they do not overflow.
fn buffer_len(data_size: usize, offsets_size: usize) -> usize {
    align8(data_size)
        .zip(align8(offsets_size))
        .and_then(|(d, o)| d.checked_add(o))
        .unwrap_or(0)
        .max(PTR_SIZE)
}

// ANCHOR: txn_buffer
/// One allocated buffer: its data, then its offsets array (8-aligned).
/// Only its holder writes it (the sender until delivery), so no lock is
/// needed; the `Arc` keeps the pages alive if the process tears down.
/// Its pages exist once [`TxnBuffer::populate`] has succeeded.
pub(crate) struct TxnBuffer {
    pub(crate) pages: Arc<Pages>,
    pub(crate) offset: usize,
    pub(crate) data_size: usize,
    pub(crate) offsets_size: usize,
}
// ANCHOR_END: txn_buffer

/// An object of a buffer, copied out: its type, its offset in the data
/// and its bytes (`flat_binder_object`, `binder_fd_object`).
pub(crate) struct Object {
    pub(crate) ty: u32,
    pub(crate) off: usize,
    pub(crate) bytes: [u8; uapi::FLAT_OBJECT_SIZE],
}

impl TxnBuffer {
    /// How many entries the offsets array has.
    pub(crate) fn count(&self) -> usize {
        self.offsets_size / 8
    }

    /// Where the offsets array starts in the mapping. The allocator took
    /// the rounded size, so it cannot overflow.
    pub(crate) fn offsets_start(&self) -> usize {
        self.offset + align8(self.data_size).unwrap_or(0)
    }

    /// Allocates and maps the pages of the buffer, as the allocator sized
    /// it (both parts 8-aligned, at least 8 bytes): the pages that
    /// [`Mapping::alloc_counted`] counted it on.
    pub(crate) fn populate(&self) -> Result {
        let len = buffer_len(self.data_size, self.offsets_size);
        self.pages.populate(self.offset, len)
    }

    /// Object `i` of the offsets array, if its offset is 4-aligned and
    /// names a whole object of a known type inside the data.
    pub(crate) fn object(&self, i: usize) -> Option<Object> {
        let mut word = [0u8; 8];
        self.pages
            .read(self.offsets_start() + i * 8, &mut word)
            .ok()?;
        let off = usize::try_from(u64::from_ne_bytes(word)).ok()?;
        if off % 4 != 0 || off.checked_add(4)? > self.data_size {
            return None;
        }
        let mut ty = [0u8; 4];
        self.pages.read(self.offset + off, &mut ty).ok()?;
        let ty = u32::from_ne_bytes(ty);
        let mut bytes = [0u8; uapi::FLAT_OBJECT_SIZE];
        if off.checked_add(object_size(ty)?)? > self.data_size {
            return None;
        }
        self.pages.read(self.offset + off, &mut bytes).ok()?;
        Some(Object { ty, off, bytes })
    }

    /// Writes `o` back where it came from.
    pub(crate) fn write_object(&self, o: &Object) -> Result {
        self.pages.write(self.offset + o.off, &o.bytes)
    }
}
