//! Lab 11: PRP entries, whose `build` and `lists_for` are yours to write
//! (the `TODO`s): how a command points at its data (NVMe base specification
//! 2.0, section 4.1.1). PRP1 is the first byte; PRP2 is either the second
//! page, or, when the data spans more than two pages, the address of a
//! PRP list: page addresses running to the end of the list's page, whose
//! last entry points at the next list when more follow (a chained list,
//! which starts on a page). The first list starts `FIRST_LIST_OFFSET`
//! bytes into its page.
//!
//! The disk's virtual boundary (the page size) makes every DMA segment
//! but the first start on a page, and every one but the last end on one,
//! so the data is a run of whole pages after the first.

use kernel::dma::{DmaAddress, Pool, PoolBlock};
use kernel::prelude::*;
use kernel::sync::Arc;

/// The controller's memory page size (CC.MPS = 0).
pub(crate) const PAGE_SIZE: u64 = 4096;
/// Entries in one PRP list page.
pub(crate) const LIST_ENTRIES: usize = (PAGE_SIZE / 8) as usize;
/// Where a request's first list (the one PRP2 points at) starts in its
/// page: one entry in. The specification lets PRP2 point anywhere in a
/// page (Linux's driver relies on it for its pool of 256-byte small
/// lists); the list then runs to the end of the page. With whole pages a
/// list holds 511 entries and a chain slot, and QEMU 10 allows at most
/// 2 MiB a command (mdts 9: 513 pages, 512 entries after PRP1), so no
/// command would ever need a chained list; one slot less makes the
/// largest transfer that starts inside a page need one.
pub(crate) const FIRST_LIST_OFFSET: u64 = 8;
/// Entries the first list holds: to the end of its page.
pub(crate) const FIRST_LIST_ENTRIES: usize = LIST_ENTRIES - (FIRST_LIST_OFFSET / 8) as usize;

// ANCHOR: pages
/// The page addresses a command's data covers after its first page, from
/// its DMA segments (bus address, length).
pub(crate) struct Pages<I> {
    segments: I,
    /// The next page of the current segment, and the segment's end.
    next: u64,
    end: u64,
    /// A segment did not start on a page (it breaks the boundary rule).
    pub(crate) misaligned: bool,
}

impl<I: Iterator<Item = (DmaAddress, u32)>> Pages<I> {
    /// The pages after the one holding `first`'s start.
    pub(crate) fn new(first: (DmaAddress, u32), segments: I) -> Self {
        let (addr, len) = first;
        Pages {
            segments,
            next: (addr & !(PAGE_SIZE - 1)) + PAGE_SIZE,
            end: addr + u64::from(len),
            misaligned: false,
        }
    }
}

impl<I: Iterator<Item = (DmaAddress, u32)>> Iterator for Pages<I> {
    type Item = DmaAddress;

    fn next(&mut self) -> Option<DmaAddress> {
        while self.next >= self.end {
            let (addr, len) = self.segments.next()?;
            // A segment that follows another starts on a page, and the one
            // before it ended on one.
            if addr & (PAGE_SIZE - 1) != 0 || self.end & (PAGE_SIZE - 1) != 0 {
                self.misaligned = true;
            }
            self.next = addr & !(PAGE_SIZE - 1);
            self.end = addr + u64::from(len);
        }
        let page = self.next;
        self.next += PAGE_SIZE;
        Some(page)
    }
}
// ANCHOR_END: pages

// ANCHOR: build
/// Fills PRP1 and PRP2 for data in `segments`, taking list pages from
/// `pool` into `lists` (which must have room for them: the I/O path does
/// not grow it). `EINVAL` for segments that break the page rule or more
/// pages than `lists` has room for, `ENOMEM` if the pool is empty.
pub(crate) fn build(
    mut segments: impl Iterator<Item = (DmaAddress, u32)>,
    pool: &Arc<Pool<u64>>,
    lists: &mut KVec<PoolBlock<u64>>,
) -> Result<(DmaAddress, DmaAddress)> {
    // TODO: PRP1 is the first segment's start. The pages after its page
    // (`Pages`) decide PRP2: none, 0; one, that page; more, a PRP list
    // holding them in order. `new_list` gives a list page; the first
    // list starts `FIRST_LIST_OFFSET` bytes into it (PRP2 is the page's
    // address plus that: its first slot is `LIST_ENTRIES -
    // FIRST_LIST_ENTRIES`), every later list at its page's start. Each
    // runs to its page's last slot (`LIST_ENTRIES - 1`), which points at
    // the next list's page when more than one page follows (one that
    // is left goes in that slot itself). Then drain `Pages`, so that
    // every segment is checked, and refuse what it found `misaligned`
    // (`EINVAL`). This start handles one page only: everything longer
    // is refused.
    let _ = (pool, lists, new_list);
    let _ = (LIST_ENTRIES, FIRST_LIST_OFFSET, FIRST_LIST_ENTRIES);
    let first = segments.next().ok_or(EINVAL)?;
    match Pages::new(first, segments).next() {
        None => Ok((first.0, 0)),
        Some(_) => Err(EINVAL),
    }
}
// ANCHOR_END: build

/// Takes a list page from `pool` into `lists`; returns its index in
/// `lists` and its bus address.
fn new_list(
    pool: &Arc<Pool<u64>>,
    lists: &mut KVec<PoolBlock<u64>>,
) -> Result<(usize, DmaAddress)> {
    if lists.len() == lists.capacity() {
        return Err(EINVAL);
    }
    let block = Pool::alloc(pool, GFP_ATOMIC)?;
    let addr = block.dma_handle();
    lists.push_within_capacity(block).map_err(|_| EINVAL)?;
    Ok((lists.len() - 1, addr))
}

// ANCHOR: lists_for
/// How many list pages a transfer of `max_bytes` may need.
pub(crate) fn lists_for(max_bytes: u64) -> usize {
    // TODO: the most list pages `build` takes for `max_bytes`, which may
    // start anywhere in a page (so one page more): none for up to two
    // pages (no list), else enough lists for the entries after PRP1.
    // The first list holds `FIRST_LIST_ENTRIES`, each later one
    // `LIST_ENTRIES`, and every list but the last gives its last slot
    // to the chain: 511 entries take one list, 512 two.
    let _ = max_bytes;
    0
}
// ANCHOR_END: lists_for
