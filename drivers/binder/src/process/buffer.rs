//! A mapping's pages and a transaction's buffer seen through them: the
//! sender copies into the buffer and translates its objects in place, as
//! C's `binder_transaction` does, without the process lock.

use kernel::mm::{Mm, Vma};
use kernel::page::Page;
use kernel::sync::SpinLock;
use kernel::user::UserSliceReader;
use kernel::{new_spinlock, pin_init};

use super::*;

// ANCHOR: pages
/// The pages of a mapping, in order, allocated on demand: a slot is empty
/// until a buffer over it is allocated ([`Pages::populate`]), then holds
/// the page, which is also mapped into the process; freed buffers keep
/// their pages until the mapping goes. Who holds a buffer may write it
/// through them without the process lock: the buffer is its own until
/// freed, and a clone of the `Arc` keeps the pages alive meanwhile.
pub(crate) struct Pages {
    /// The user address of the mapping, and the mark its `Vma` carries
    /// (`Vma::set_private`), by which `populate` knows it is still ours.
    start: usize,
    mark: usize,
    /// The address space of the mapping, to insert pages into later.
    mm: Mm,
    slots: SpinLock<KVec<Option<Arc<Page>>>>,
    /// Held by `populate`, so that one page is only allocated once.
    fill: Mutex<()>,
}
// ANCHOR_END: pages

impl Pages {
    /// Empty slots for `npages` pages of `vma`, which is marked as ours
    /// with `mark`.
    pub(crate) fn new(vma: &mut Vma, mark: usize, npages: usize) -> Result<Arc<Pages>> {
        let mut slots = KVec::with_capacity(npages, GFP_KERNEL)?;
        for _ in 0..npages {
            slots.push(None, GFP_KERNEL)?;
        }
        vma.set_private(mark);
        Arc::pin_init(
            pin_init!(Pages {
                start <- vma.start(),
                mark <- mark,
                mm <- vma.mm(),
                slots <- new_spinlock!(slots, "Pages::slots"),
                fill <- new_mutex!((), "Pages::fill"),
            }),
            GFP_KERNEL,
        )
    }

    /// Page `i`, if it has been allocated.
    fn page(&self, i: usize) -> Option<Arc<Page>> {
        self.slots.lock().get(i)?.clone()
    }

    // ANCHOR: populate
    /// Allocates the missing pages under the `len` bytes at `offset` and
    /// maps them into the process (C's `binder_update_page_range`).
    /// `ESRCH` if the process has exited (its memory is gone) or has
    /// unmapped the area: C's "no vma", which the sender reads as
    /// `BR_DEAD_REPLY`. Call it with no lock held: it
    /// takes the process's `mmap_lock`, under which `mmap` takes the
    /// process's lock.
    pub(crate) fn populate(&self, offset: usize, len: usize) -> Result {
        let first = offset / PAGE_SIZE;
        let end = offset.checked_add(len).ok_or(EINVAL)?.div_ceil(PAGE_SIZE);
        let user = self.mm.get_user().ok_or(ESRCH)?;
        let _fill = self.fill.lock();
        // Looked up even when every page is there: a process that has
        // unmapped the area takes no more buffers, as in C.
        let mmap = user.mmap_read_lock();
        let vma = mmap
            .vma_lookup(self.start)
            .filter(|v| v.start() == self.start && v.private() == self.mark)
            .ok_or(ESRCH)?;
        let missing = |i: usize| self.slots.lock().get(i).is_some_and(|p| p.is_none());
        for i in (first..end).filter(|&i| missing(i)) {
            let page = Arc::new(Page::alloc(GFP_KERNEL | __GFP_ZERO)?, GFP_KERNEL)?;
            vma.insert_page(self.start + i * PAGE_SIZE, &page)?;
            if let Some(slot) = self.slots.lock().get_mut(i) {
                *slot = Some(page);
            }
        }
        Ok(())
    }
    // ANCHOR_END: populate

    /// Calls `f(page, offset in page, bytes done, n)` for each piece of
    /// the `len` bytes at `offset`, one piece per page; `EFAULT` past the
    /// last page.
    fn each(
        &self,
        offset: usize,
        len: usize,
        mut f: impl FnMut(&Page, usize, usize, usize) -> Result,
    ) -> Result {
        let mut done = 0;
        while done < len {
            let at = offset + done;
            let page = self.page(at / PAGE_SIZE).ok_or(EFAULT)?;
            let in_page = at % PAGE_SIZE;
            let n = (len - done).min(PAGE_SIZE - in_page);
            f(&page, in_page, done, n)?;
            done += n;
        }
        Ok(())
    }

    /// Copies `data` into the mapping at `offset`.
    pub(crate) fn write(&self, offset: usize, data: &[u8]) -> Result {
        self.each(offset, data.len(), |page, at, done, n| {
            page.write(at, &data[done..done + n])
        })
    }

    /// Copies bytes of the mapping at `offset` into `out`.
    pub(crate) fn read(&self, offset: usize, out: &mut [u8]) -> Result {
        self.each(offset, out.len(), |page, at, done, n| {
            page.read(at, &mut out[done..done + n])
        })
    }

    // ANCHOR: write_from_user
    /// Copies `len` bytes from user memory into the mapping at `offset`,
    /// in one copy as C does (no kernel copy in between, nothing zeroed).
    pub(crate) fn write_from_user(
        &self,
        offset: usize,
        reader: &mut UserSliceReader,
        len: usize,
    ) -> Result {
        self.each(offset, len, |page, at, _, n| {
            page.read_from_user(at, reader, n)
        })
    }
    // ANCHOR_END: write_from_user
}

// ANCHOR: txn_buffer
/// One allocated buffer: its data, then its offsets array (8-aligned).
/// Only its holder writes it (the sender until delivery), so no lock is
/// needed; the `Arc` keeps the pages alive if the process tears down.
/// Its pages exist once [`TxnBuffer::populate`] has succeeded.
pub(super) struct TxnBuffer {
    pub(super) pages: Arc<Pages>,
    pub(super) offset: usize,
    pub(super) data_size: usize,
    pub(super) offsets_size: usize,
}
// ANCHOR_END: txn_buffer

/// An object of a buffer, copied out: its type, its offset in the data
/// and its bytes (`flat_binder_object`, `binder_fd_object`).
pub(super) struct Object {
    pub(super) ty: u32,
    pub(super) off: usize,
    pub(super) bytes: [u8; uapi::FLAT_OBJECT_SIZE],
}

impl TxnBuffer {
    /// How many entries the offsets array has.
    pub(super) fn count(&self) -> usize {
        self.offsets_size / 8
    }

    /// Where the offsets array starts in the mapping. The allocator took
    /// the rounded size, so it cannot overflow.
    pub(super) fn offsets_start(&self) -> usize {
        self.offset + align8(self.data_size).unwrap_or(0)
    }

    /// Allocates and maps the pages of the buffer, as the allocator sized
    /// it (both parts 8-aligned, at least 8 bytes).
    pub(super) fn populate(&self) -> Result {
        let len = self.offsets_start() - self.offset + self.offsets_size;
        self.pages.populate(self.offset, len.max(PTR_SIZE))
    }

    /// Object `i` of the offsets array, if its offset is 4-aligned and
    /// names a whole object of a known type inside the data.
    pub(super) fn object(&self, i: usize) -> Option<Object> {
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
    pub(super) fn write_object(&self, o: &Object) -> Result {
        self.pages.write(self.offset + o.off, &o.bytes)
    }
}
