//! A mapping's pages and a transaction's buffer seen through them: the
//! sender copies into the buffer and translates its objects in place, as
//! C's `binder_transaction` does, without the process lock. Pages that no
//! buffer covers any more go back to the kernel when it asks (the
//! shrinker, [`Reclaim`]).

use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use kernel::init::PinInit;
use kernel::mm::{MarkedVma, Mm, Vma};
use kernel::page::Page;
use kernel::shrinker::{Count, Scan, ShrinkControl, Shrinker};
use kernel::sync::SpinLock;
use kernel::user::UserSliceReader;
use kernel::{new_spinlock, pin_init};

use super::*;
use crate::alloc::Allocator;

/// Pages that no buffer covers, in every process: what the shrinker may
/// free (C's `list_lru_count(&binder_alloc_lru)`).
static RECLAIMABLE: AtomicUsize = AtomicUsize::new(0);

// ANCHOR: slot
/// One page of a mapping: the page once allocated, and how many allocated
/// buffers cover it. A page that no buffer covers may be reclaimed.
struct Slot {
    page: Option<Arc<Page>>,
    buffers: usize,
}
// ANCHOR_END: slot

impl Slot {
    fn reclaimable(&self) -> bool {
        self.page.is_some() && self.buffers == 0
    }
}

/// The slots of a mapping, and how many of them are reclaimable (their
/// share of [`RECLAIMABLE`]).
struct Slots {
    slots: KVec<Slot>,
    reclaimable: usize,
}

impl Slots {
    /// Slot `i` has no page (yet, or any more); `false` past the end.
    fn missing(&self, i: usize) -> bool {
        self.slots.get(i).is_some_and(|s| s.page.is_none())
    }

    /// Changes slot `i` with `f`, keeping the counts of reclaimable pages
    /// right; `None` past the end.
    fn update<R>(&mut self, i: usize, f: impl FnOnce(&mut Slot) -> R) -> Option<R> {
        let slot = self.slots.get_mut(i)?;
        let before = slot.reclaimable();
        let r = f(slot);
        match (before, slot.reclaimable()) {
            (false, true) => {
                self.reclaimable += 1;
                RECLAIMABLE.fetch_add(1, Ordering::Relaxed);
            }
            (true, false) => {
                self.reclaimable = self.reclaimable.saturating_sub(1);
                RECLAIMABLE.fetch_sub(1, Ordering::Relaxed);
            }
            _ => {}
        }
        Some(r)
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        RECLAIMABLE.fetch_sub(self.reclaimable, Ordering::Relaxed);
    }
}

// ANCHOR: pages
/// The pages of a mapping, in order, allocated on demand: a slot is empty
/// until a buffer over it is allocated ([`Pages::populate`]), then holds
/// the page, which is also mapped into the process. Each slot counts the
/// allocated buffers over its page ([`Allocator::alloc_counted`]); a page
/// that none covers stays until the kernel runs short of memory
/// ([`Pages::reclaim`]) or the mapping goes. Who holds a buffer may write
/// it through them without the process lock: the buffer is its own until
/// freed, and a clone of the `Arc` keeps the pages alive meanwhile.
pub(crate) struct Pages {
    /// In the module's list of every mapping ([`Reclaim`]).
    links: ListLinks<Pages>,
    /// The user address of the mapping, and the mark its `Vma` carries
    /// (`Vma::set_private`), by which `populate` knows it is still ours.
    start: usize,
    mark: usize,
    /// `mm::closed_areas()` when `populate` last found the mapping: while
    /// it has not moved, the mapping is still there.
    seen: AtomicU64,
    /// The address space of the mapping, to insert pages into later.
    mm: Mm,
    slots: SpinLock<Slots>,
    /// Held by `populate`, so that one page is only allocated once, and
    /// by `reclaim` (tried only), so that it frees none being mapped.
    fill: Mutex<()>,
}
// ANCHOR_END: pages

impl_list_item!(Pages, links);

impl Pages {
    /// Empty slots for `npages` pages of `vma`, which is marked as ours
    /// with `mark`.
    pub(crate) fn new(vma: &mut Vma, mark: usize, npages: usize) -> Result<Arc<Pages>> {
        let mut slots = KVec::with_capacity(npages, GFP_KERNEL)?;
        for _ in 0..npages {
            slots.push(
                Slot {
                    page: None,
                    buffers: 0,
                },
                GFP_KERNEL,
            )?;
        }
        vma.set_private(mark);
        Arc::pin_init(
            pin_init!(Pages {
                links <- ListLinks::new(),
                start <- vma.start(),
                mark <- mark,
                seen <- AtomicU64::new(u64::MAX),
                mm <- vma.mm(),
                slots <- new_spinlock!(Slots { slots, reclaimable: 0 }, "Pages::slots"),
                fill <- new_mutex!((), "Pages::fill"),
            }),
            GFP_KERNEL,
        )
    }

    /// The slots under the `len` bytes at `offset`.
    fn range(offset: usize, len: usize) -> core::ops::Range<usize> {
        offset / PAGE_SIZE..offset.saturating_add(len).div_ceil(PAGE_SIZE)
    }

    /// Counts one more buffer over the `len` bytes at `offset`: the
    /// shrinker leaves their pages alone.
    fn hold(&self, offset: usize, len: usize) {
        let mut slots = self.slots.lock();
        for i in Self::range(offset, len) {
            slots.update(i, |s| s.buffers = s.buffers.saturating_add(1));
        }
    }

    /// Counts one buffer less over the `len` bytes at `offset`.
    fn release(&self, offset: usize, len: usize) {
        let mut slots = self.slots.lock();
        for i in Self::range(offset, len) {
            slots.update(i, |s| s.buffers = s.buffers.saturating_sub(1));
        }
    }

    /// The area at `start`, if it is still this mapping: marked by us.
    fn ours<'a>(&self, vma: Option<&'a Vma>) -> Option<&'a MarkedVma> {
        vma?.marked(self.mark).filter(|v| v.start() == self.start)
    }

    /// Page `i`, if it has been allocated.
    fn page(&self, i: usize) -> Option<Arc<Page>> {
        self.slots.lock().slots.get(i)?.page.clone()
    }

    // ANCHOR: populate
    /// Allocates the missing pages under the `len` bytes at `offset` and
    /// maps them into the process (C's `binder_update_page_range`).
    /// `ESRCH` if the process has exited (its memory is gone) or has
    /// unmapped the area: C's "no vma", which the sender reads as
    /// `BR_DEAD_REPLY`. Call it with no lock held: it may
    /// take the process's `mmap_lock`, under which `mmap` takes the
    /// process's lock.
    pub(crate) fn populate(&self, offset: usize, len: usize) -> Result {
        let first = offset / PAGE_SIZE;
        let end = offset.checked_add(len).ok_or(EINVAL)?.div_ceil(PAGE_SIZE);
        // Every page there and no area closed since the mapping was last
        // found: it is still mapped, and the process's memory is left
        // alone, as C leaves it (a one-way flood would take the `mmap_lock`
        // of its receiver for every call).
        let closed = kernel::mm::closed_areas();
        if self.seen.load(Ordering::Relaxed) == closed {
            let slots = self.slots.lock();
            if !(first..end).any(|i| slots.missing(i)) {
                return Ok(());
            }
        }
        let user = self.mm.get_user().ok_or(ESRCH)?;
        let _fill = self.fill.lock();
        let mmap = user.mmap_read_lock();
        let vma = self.ours(mmap.vma_lookup(self.start)).ok_or(ESRCH)?;
        self.seen.store(closed, Ordering::Relaxed);
        for i in (first..end).filter(|&i| self.slots.lock().missing(i)) {
            let page = Arc::new(Page::alloc(GFP_KERNEL | __GFP_ZERO)?, GFP_KERNEL)?;
            vma.insert_page(self.start + i * PAGE_SIZE, &page)?;
            self.slots.lock().update(i, |s| s.page = Some(page));
        }
        Ok(())
    }
    // ANCHOR_END: populate

    // ANCHOR: reclaim
    /// Frees up to `max` pages that no buffer covers, unmapping them from
    /// the process first (C's `binder_alloc_free_page`); returns how many.
    /// It runs inside allocations, perhaps one that `populate` makes under
    /// `fill` and the `mmap_lock`: it takes every lock with a try, and
    /// gives up rather than wait.
    fn reclaim(&self, max: usize) -> usize {
        if max == 0 || self.slots.lock().reclaimable == 0 {
            return 0;
        }
        let Some(_fill) = self.fill.try_lock() else {
            return 0;
        };
        // The process has exited: its teardown frees them.
        let Some(user) = self.mm.get_user() else {
            return 0;
        };
        let freed = match user.mmap_read_trylock() {
            Some(mmap) => self.reclaim_locked(self.ours(mmap.vma_lookup(self.start)), max),
            None => 0,
        };
        // The last user's teardown (`exit_mmap`) does not belong here.
        user.put_async();
        freed
    }

    /// `reclaim` once the locks are held: `vma` is the mapping, unless
    /// the process has unmapped it (its pages then are in no page table).
    fn reclaim_locked(&self, vma: Option<&MarkedVma>, max: usize) -> usize {
        let mut freed = 0;
        let mut next = 0;
        while freed < max {
            // Checked and taken out under the spinlock; unmapped and
            // freed after it, as zapping may sleep.
            let found = {
                let mut slots = self.slots.lock();
                let i = slots.slots.iter().skip(next).position(Slot::reclaimable);
                i.map(|i| i + next)
                    .and_then(|i| Some((i, slots.update(i, |s| s.page.take())??)))
            };
            let Some((i, page)) = found else {
                break;
            };
            next = i + 1;
            if let Some(vma) = vma {
                // An error means the address is past a shortened area:
                // nothing is mapped there.
                let _ = vma.zap_page_range(self.start + i * PAGE_SIZE, PAGE_SIZE);
            }
            drop(page);
            freed += 1;
        }
        freed
    }
    // ANCHOR_END: reclaim

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

// ANCHOR: reclaim_list
/// Every mapping's pages, for the module's shrinker (C keeps a list of
/// free pages, `binder_alloc_lru`; this one lists mappings, and the count
/// is kept apart). A process's `Pages` is added at `mmap` and removed at
/// release, so the list keeps no process alive.
pub(crate) struct Reclaim {
    all: SpinLock<List<Pages>>,
}
// ANCHOR_END: reclaim_list

impl Reclaim {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Reclaim {
            all <- new_spinlock!(List::new(), "Reclaim::all"),
        })
    }

    /// Lists a new mapping's pages.
    pub(crate) fn add(&self, pages: Arc<Pages>) {
        // A new `Pages` is in no list: the push cannot fail.
        let _ = self.all.lock().push_back(pages);
    }

    /// Unlists a mapping's pages (at release).
    pub(crate) fn remove(&self, pages: &Pages) {
        let removed = self.all.lock().remove(pages);
        // Perhaps the last reference: dropped without the spinlock.
        drop(removed);
    }
}

// ANCHOR: shrinker
impl Shrinker for Reclaim {
    fn count_objects(&self) -> Count {
        match RECLAIMABLE.load(Ordering::Relaxed) {
            0 => Count::Empty,
            n => Count::Freeable(n),
        }
    }

    fn scan_objects(&self, sc: &ShrinkControl<'_>) -> Scan {
        let want = sc.nr_to_scan();
        let mut freed = 0;
        let n = self.all.lock().iter().count();
        for _ in 0..n {
            if freed >= want {
                break;
            }
            // The first mapping moves to the back (the next scan starts
            // with another) and is worked on without the spinlock.
            let pages = {
                let mut all = self.all.lock();
                all.pop_front().map(|p| {
                    let again = p.clone();
                    let _ = all.push_back(p);
                    again
                })
            };
            let Some(pages) = pages else {
                break;
            };
            freed += pages.reclaim(want - freed);
        }
        if freed == 0 {
            Scan::Stop
        } else {
            Scan::Freed(freed)
        }
    }
}
// ANCHOR_END: shrinker

// ANCHOR: alloc_counted
/// The allocator's buffers counted on their pages. Every allocation and
/// free goes through these, so a page's count is the number of allocated
/// buffers over it, whichever path frees them.
impl Allocator {
    /// Allocates a buffer ([`Allocator::alloc`]) and counts it on the
    /// pages it covers.
    pub(crate) fn alloc_counted(
        &mut self,
        data_size: usize,
        offsets_size: usize,
        is_async: bool,
    ) -> Result<usize> {
        let offset = self.alloc(data_size, offsets_size, is_async)?;
        self.pages()
            .hold(offset, buffer_len(data_size, offsets_size));
        Ok(offset)
    }

    /// Frees the allocated buffer at `offset` ([`Allocator::free`]) and
    /// uncounts it from its pages. Returns its target node.
    pub(crate) fn free_counted(&mut self, offset: usize) -> Option<Arc<Node>> {
        let b = self.buffer_mut(offset)?;
        let len = buffer_len(b.data_size, b.offsets_size);
        let node = self.free(offset);
        self.pages().release(offset, len);
        node
    }
}
// ANCHOR_END: alloc_counted

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
    /// it (both parts 8-aligned, at least 8 bytes): the pages that
    /// [`Allocator::alloc_counted`] counted it on.
    pub(super) fn populate(&self) -> Result {
        let len = buffer_len(self.data_size, self.offsets_size);
        self.pages.populate(self.offset, len)
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
