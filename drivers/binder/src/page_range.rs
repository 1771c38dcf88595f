//! The pages of a process's mapping (C's `binder_alloc` page array and
//! its `binder_alloc_lru`): allocated and mapped into the process when a
//! buffer over them is allocated, counted per buffer, and given back to
//! the kernel when it asks (the shrinker, [`Reclaim`]) once no buffer
//! covers them. Who holds a buffer writes it through them without the
//! process lock. Nothing here knows of processes: a mapping is known by
//! its start and the mark its `Vma` carries.
//!
//! # Lock order
//!
//! Every lock of the driver, outermost first. A lock is only taken while
//! holding locks above it in the table (or none); the shrinker, which
//! runs inside any allocation, only try-locks.
//!
//! | # | lock | kind | taken by |
//! |--:|---|---|---|
//! | 1 | `Pages::fill` | mutex | `populate`; the shrinker tries it |
//! | 2 | the receiver's `mmap_lock` | rw semaphore | `populate` (read); the kernel, around `mmap` (write); the shrinker tries it (read) |
//! | 3 | `Context::manager` | mutex | becoming or finding the context manager |
//! | 4 | `Process::inner` (one process at a time) | mutex | nearly everything; `mmap`, under 2 |
//! | 5 | `Transaction::inner` | mutex | a call's stack, its sender, its buffer |
//! | 6 | `Pages::slots` | spinlock | counting buffers on pages (under 4), `populate`, the shrinker |
//! | 7 | `Reclaim::all` | spinlock | `mmap` (under 2 and 4), release, the shrinker |
//!
//! Hence: no process lock is held across `populate` (1 and 2 are above
//! it), nor while another process's is taken: an operation on two
//! processes (a transaction, a reference to another's node) takes one,
//! drops it, then takes the other. Nothing sleeps or allocates under 6
//! and 7, so the shrinker's plain locks of them cannot deadlock.

use core::ops::Range;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use kernel::impl_list_item;
use kernel::init::PinInit;
use kernel::list::{List, ListLinks};
use kernel::mm::{MarkedVma, Mm, Vma};
use kernel::page::{Page, PAGE_SIZE};
use kernel::prelude::*;
use kernel::shrinker::{Count, Scan, ShrinkControl, Shrinker};
use kernel::sync::{Arc, Mutex, SpinLock};
use kernel::user::UserSliceReader;
use kernel::{new_mutex, new_spinlock, pin_init};

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
/// allocated buffers over its page ([`crate::allocation::Mapping::alloc_counted`]); a page
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
    /// Lock 6 of the lock order (at the top).
    slots: SpinLock<Slots>,
    /// Held by `populate`, so that one page is only allocated once, and
    /// by `reclaim` (tried only), so that it frees none being mapped.
    /// Lock 1 of the lock order (at the top).
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
    fn range(offset: usize, len: usize) -> Range<usize> {
        offset / PAGE_SIZE..offset.saturating_add(len).div_ceil(PAGE_SIZE)
    }

    /// Counts one more buffer over the `len` bytes at `offset`: the
    /// shrinker leaves their pages alone.
    pub(crate) fn hold(&self, offset: usize, len: usize) {
        let mut slots = self.slots.lock();
        for i in Self::range(offset, len) {
            slots.update(i, |s| s.buffers = s.buffers.saturating_add(1));
        }
    }

    /// Counts one buffer less over the `len` bytes at `offset`.
    pub(crate) fn release(&self, offset: usize, len: usize) {
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
    /// Lock 7 of the lock order (at the top).
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
