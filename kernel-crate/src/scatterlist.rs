//! Scatter-gather tables: the list of memory pieces one I/O covers.
//!
//! C header: [`include/linux/scatterlist.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/scatterlist.h)
//!
//! A block driver that hands requests to a device by DMA first maps the
//! request's segments into a scatterlist
//! ([`Request::map_sg`](crate::block::mq::Request::map_sg)), then maps
//! that list for the device. An [`SgTable`] is allocated once, with room
//! for the most segments a request of the queue may have, and reused for
//! every request: the I/O path allocates nothing.

use crate::alloc::{Flags, KVec};
use crate::bindings;
use crate::error::{code::EINVAL, Result};
use crate::init::Opaque;

// ANCHOR: sg_table
/// A scatterlist of fixed capacity, of which the first [`len`](Self::len)
/// entries hold the last mapping.
///
/// # Invariants
///
/// `entries` holds `entries.len()` initialised `struct scatterlist`s (one
/// `sg_init_table` array, never reallocated), and `mapped <=
/// entries.len()`; the first `mapped` entries were filled by the last
/// mapping.
pub struct SgTable {
    entries: KVec<Opaque<bindings::scatterlist>>,
    mapped: usize,
}
// ANCHOR_END: sg_table

// SAFETY: the table is plain memory that only its owner (`&mut self`)
// changes; no C code keeps a pointer to it between calls.
unsafe impl Send for SgTable {}
// SAFETY: `&SgTable` only reads entries, and nothing writes them while a
// shared reference exists (writes need `&mut self`).
unsafe impl Sync for SgTable {}

impl SgTable {
    /// Allocates a table with room for `capacity` entries (at least one).
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn new(capacity: usize, flags: Flags) -> Result<Self> {
        if capacity == 0 || u32::try_from(capacity).is_err() {
            return Err(EINVAL);
        }
        let mut entries = KVec::with_capacity(capacity, flags)?;
        for _ in 0..capacity {
            entries.push(Opaque::uninit(), flags)?;
        }
        // SAFETY: `entries` holds `capacity` slots for `struct scatterlist`
        // (`Opaque` is transparent), which `sg_init_table` zeroes and
        // terminates; `capacity` fits a `u32` (checked above).
        unsafe { bindings::sg_init_table(entries.as_mut_ptr().cast(), capacity as u32) };
        // INVARIANT: every entry is initialised; nothing is mapped yet.
        Ok(SgTable { entries, mapped: 0 })
    }

    /// How many entries the table has room for.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// How many entries the last mapping filled.
    pub fn len(&self) -> usize {
        self.mapped
    }

    /// Whether the last mapping filled no entry (or there was none).
    pub fn is_empty(&self) -> bool {
        self.mapped == 0
    }

    /// The entries of the last mapping, in order.
    pub fn iter(&self) -> impl Iterator<Item = SgEntry<'_>> {
        self.entries[..self.mapped].iter().map(|entry| SgEntry {
            // SAFETY: every entry is an initialised `scatterlist` (type
            // invariant), which nothing changes while `self` is borrowed.
            sg: unsafe { &*entry.as_raw() },
        })
    }

    /// The first entry, for C functions that take the list, such as
    /// `dma_map_sg` (the kernel crate's DMA mapping).
    pub(crate) fn as_raw(&mut self) -> *mut bindings::scatterlist {
        self.entries.as_mut_ptr().cast()
    }

    /// Prepares the first `count` entries for a new mapping, as one list
    /// (`sg_init_table`), and forgets the last mapping.
    pub(crate) fn reset(&mut self, count: usize) -> Result {
        if count == 0 || count > self.capacity() {
            return Err(EINVAL);
        }
        self.mapped = 0;
        // SAFETY: the first `count` entries exist (checked above); `count`
        // fits a `u32` because the capacity does (checked in `new`).
        unsafe { bindings::sg_init_table(self.as_raw(), count as u32) };
        Ok(())
    }

    /// Records how many entries a mapping filled.
    ///
    /// # Safety
    ///
    /// The first `count` entries were filled by a mapping since the last
    /// [`reset`](Self::reset) of at least `count` entries.
    pub(crate) unsafe fn set_len(&mut self, count: usize) {
        // INVARIANT: the caller guarantees that the first `count` entries
        // (within the table: `reset` checked the capacity) hold a mapping.
        self.mapped = count;
    }
}

/// One entry of an [`SgTable`]: a piece of memory in one page, and, once
/// the table is mapped for a device, its DMA address.
pub struct SgEntry<'a> {
    sg: &'a bindings::scatterlist,
}

impl SgEntry<'_> {
    /// The offset of the piece in its first page.
    pub fn offset(&self) -> u32 {
        self.sg.offset
    }

    /// The length of the piece in bytes.
    pub fn length(&self) -> u32 {
        self.sg.length
    }

    fn as_ptr(&self) -> *mut bindings::scatterlist {
        core::ptr::from_ref(self.sg).cast_mut()
    }

    /// The device address of the entry (`sg_dma_address`): meaningful only
    /// after the table was mapped for DMA, zero before.
    pub fn dma_address(&self) -> u64 {
        // SAFETY: the entry is a valid `scatterlist`; the helper reads one
        // field.
        unsafe { bindings::rust_helper_sg_dma_address(self.as_ptr()) }
    }

    /// The length the device sees (`sg_dma_len`): meaningful only after
    /// the table was mapped for DMA.
    pub fn dma_len(&self) -> u32 {
        // SAFETY: as in `dma_address`.
        unsafe { bindings::rust_helper_sg_dma_len(self.as_ptr()) }
    }
}
