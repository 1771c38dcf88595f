//! Intrusive lists: [`List`], a doubly linked list of [`Arc`]s whose links
//! live inside the items, as C's `struct list_head` does.
//!
//! C header: [`include/linux/list.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/list.h)
//!
//! An item embeds a [`ListLinks`] field and names it with
//! [`impl_list_item!`](crate::impl_list_item). Pushing an item consumes an
//! `Arc` (the list keeps its count as a raw pointer, [`Arc::into_raw`]);
//! popping or removing one gives the `Arc` back ([`Arc::from_raw`]). So no
//! operation ever allocates, and all of them may run under a spinlock:
//! whatever is queued was allocated before the lock was taken.
//!
//! An item is in at most one list at a time. Its links say which: each
//! list has an id of its own, and a push claims the links for it with one
//! atomic compare-and-exchange, which fails (and gives the `Arc` back) if
//! another list, or this one, already holds the item. The same id makes
//! [`List::remove`] safe: it unlinks an item only if the links name this
//! list.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::sync::{Arc, ArcBorrow};

/// Where an item keeps its [`ListLinks`].
///
/// Implement it with [`impl_list_item!`](crate::impl_list_item), which
/// checks that the links are a field of the item.
///
/// # Safety
///
/// [`ListItem::list_links`] returns a reference to a field of `self`, the
/// same field on every call: two items never share links, and the links
/// of an item are at the same offset in every item.
pub unsafe trait ListItem: Sized {
    /// The item's links.
    fn list_links(&self) -> &ListLinks<Self>;
}

/// Implements [`ListItem`] for `$item`, whose links are the field
/// `$field`: `impl_list_item!(Job, links);`.
#[macro_export]
macro_rules! impl_list_item {
    ($item:ty, $field:ident) => {
        // A compile error unless `$field` is a field of `$item` itself
        // (not one reached through `Deref`).
        const _: usize = ::core::mem::offset_of!($item, $field);
        // SAFETY: `$field` is a field of `$item` (checked just above), and
        // the same one on every call.
        unsafe impl $crate::list::ListItem for $item {
            fn list_links(&self) -> &$crate::list::ListLinks<Self> {
                &self.$field
            }
        }
    };
}

/// The neighbours of an item in its list: pointers from
/// [`Arc::into_raw`].
struct Neighbours<T> {
    next: *const T,
    prev: *const T,
}

// ANCHOR: list_links
/// The links of a [`List`] item: a field of the item, made with
/// [`ListLinks::new`].
///
/// # Invariants
///
/// `owner` is 0 while the item is in no list, and otherwise the id of
/// the one [`List`] that holds it. Only that list reads or writes
/// `neighbours`, and only while it is the owner; it sets `owner` to 0
/// (with `Release`) after its last access, and a list that claims the
/// links (with `Acquire`) starts after it.
pub struct ListLinks<T> {
    owner: AtomicU64,
    neighbours: UnsafeCell<Neighbours<T>>,
}
// ANCHOR_END: list_links

// SAFETY: the links belong to the list that owns them (type invariant);
// any thread may hold the item and read `owner`, an atomic.
unsafe impl<T> Send for ListLinks<T> {}
// SAFETY: `&ListLinks` gives access to `owner` only, an atomic; the
// neighbours are accessed by the owning list alone, through `&mut List`.
unsafe impl<T> Sync for ListLinks<T> {}

impl<T> Default for ListLinks<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> ListLinks<T> {
    /// Links in no list.
    pub const fn new() -> Self {
        // INVARIANT: in no list.
        ListLinks {
            owner: AtomicU64::new(0),
            neighbours: UnsafeCell::new(Neighbours {
                next: ptr::null(),
                prev: ptr::null(),
            }),
        }
    }

    /// Whether the item is in a list. Another thread may change that at
    /// once, unless the caller holds the lock of every list it could be
    /// in.
    pub fn is_listed(&self) -> bool {
        self.owner.load(Ordering::Relaxed) != 0
    }
}

/// Ids for lists, never reused (a `u64` does not wrap); 0 means "none".
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A doubly linked list of `Arc<T>`, with its links inside the items.
///
/// ```rust
/// use kernel::impl_list_item;
/// use kernel::list::{List, ListLinks};
/// use kernel::sync::Arc;
///
/// struct Job {
///     links: ListLinks<Job>,
///     n: u32,
/// }
/// impl_list_item!(Job, links);
///
/// // Every item is allocated before any list is touched.
/// let job = |n| Arc::new(Job { links: ListLinks::new(), n }, GFP_KERNEL);
/// let (a, b, c) = (job(1)?, job(2)?, job(3)?);
/// let mut todo = List::new();
/// let mut later = List::new();
/// for j in [a.clone(), b.clone()] {
///     todo.push_back(j).map_err(|_| EINVAL)?;
/// }
/// todo.push_front(c.clone()).map_err(|_| EINVAL)?;
/// // `b` is in `todo`: another list, and `todo` again, refuse it.
/// let refused = later.push_back(b.clone()).is_err() && todo.push_back(b.clone()).is_err();
/// let removed = todo.remove(&b).map(|j| j.n);
/// // Removed, it may go in another list; a list that does not hold an
/// // item does not remove it.
/// later.push_back(b.clone()).map_err(|_| EINVAL)?;
/// let not_there = todo.remove(&b).is_none();
/// let order: KVec<u32> = {
///     let mut v = KVec::new();
///     for j in todo.iter() {
///         v.push(j.n, GFP_KERNEL)?;
///     }
///     v
/// };
/// let first = todo.pop_front().map(|j| j.n);
/// pr_info!("refused {}, removed {:?}, order {:?}, first {:?}\n", refused, removed, &order[..], first);
/// if !refused || !not_there || removed != Some(2) || order[..] != [3, 1] || first != Some(3) {
///     return Err(EINVAL);
/// }
/// // Dropping a list drops the counts it held.
/// drop((todo, later));
/// if a.links.is_listed() || b.links.is_listed() || c.links.is_listed() {
///     return Err(EINVAL);
/// }
/// ```
///
// ANCHOR: list
/// # Invariants
///
/// `id` is this list's own, non-zero. If `first` is null the list is
/// empty; otherwise the items form a cycle through their links' `next`
/// (and back through `prev`) from `first`. Each item's pointer came from
/// [`Arc::into_raw`], whose count the list owns, and its links have
/// `owner == id`. No other item's links name `id`.
pub struct List<T: ListItem> {
    first: *const T,
    id: u64,
    _owns: PhantomData<Arc<T>>,
}
// ANCHOR_END: list

// SAFETY: a list owns `Arc<T>`s; sending it sends them (`Arc<T>: Send`).
unsafe impl<T: ListItem + Send + Sync> Send for List<T> {}
// SAFETY: `&List` gives `ArcBorrow`s, which need what `Arc<T>: Sync` does.
unsafe impl<T: ListItem + Send + Sync> Sync for List<T> {}

impl<T: ListItem> Default for List<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: ListItem> List<T> {
    /// An empty list, with an id of its own.
    pub fn new() -> Self {
        // INVARIANT: ids are handed out once each and start at 1.
        List {
            first: ptr::null(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            _owns: PhantomData,
        }
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.first.is_null()
    }

    /// The neighbours of `item`, to be read and written by the list that
    /// owns its links.
    ///
    /// # Safety
    ///
    /// `item` points to a live item.
    unsafe fn neighbours(item: *const T) -> *mut Neighbours<T> {
        // SAFETY: the caller passes a live item.
        unsafe { (*item).list_links().neighbours.get() }
    }

    // ANCHOR: push_back
    /// Adds `item` at the back, or gives it back if it is already in a
    /// list (this one or another).
    pub fn push_back(&mut self, item: Arc<T>) -> Result<(), Arc<T>> {
        let links = item.list_links();
        if links
            .owner
            .compare_exchange(0, self.id, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return Err(item);
        }
        // INVARIANT: the links are this list's now; the item joins the
        // cycle with the count of `item`.
        let new = Arc::into_raw(item);
        // SAFETY: `new` is live (its count is the list's now) and its links
        // are this list's (claimed above); `first` and its `prev` are in
        // this list (type invariant), so live and this list's. `&mut self`
        // makes this the only access to their neighbours.
        unsafe {
            let n = Self::neighbours(new);
            if self.first.is_null() {
                (*n).next = new;
                (*n).prev = new;
                self.first = new;
            } else {
                let last = (*Self::neighbours(self.first)).prev;
                (*n).next = self.first;
                (*n).prev = last;
                (*Self::neighbours(last)).next = new;
                (*Self::neighbours(self.first)).prev = new;
            }
        }
        Ok(())
    }
    // ANCHOR_END: push_back

    /// Adds `item` at the front, or gives it back if it is already in a
    /// list.
    pub fn push_front(&mut self, item: Arc<T>) -> Result<(), Arc<T>> {
        let new: *const T = &*item;
        self.push_back(item)?;
        // INVARIANT: the cycle is the same, read from the new item.
        self.first = new;
        Ok(())
    }

    // ANCHOR: remove
    /// Takes `item` out of this list, if this list holds it; `None` if it
    /// is in no list or in another one.
    pub fn remove(&mut self, item: &T) -> Option<Arc<T>> {
        // Only this list stores its id in the links, and it does so with
        // `&mut self`: if they hold it now, they keep it until we change it.
        if item.list_links().owner.load(Ordering::Acquire) != self.id {
            return None;
        }
        // SAFETY: `item` is in this list (its links name it), as are its
        // neighbours, so all are live and their links this list's; `&mut
        // self` makes this the only access to them.
        let item = unsafe {
            let n = Self::neighbours(item);
            let (next, prev) = ((*n).next, (*n).prev);
            // The item's pointer as `push_back` stored it, from `into_raw`.
            let item = (*Self::neighbours(prev)).next;
            if next == item {
                self.first = ptr::null();
            } else {
                (*Self::neighbours(prev)).next = next;
                (*Self::neighbours(next)).prev = prev;
                if self.first == item {
                    self.first = next;
                }
            }
            item
        };
        // INVARIANT: out of the cycle; the links are released after the
        // list's last access to them.
        // SAFETY: the item is live (its count is the list's until the
        // `from_raw` below).
        unsafe { (*item).list_links() }
            .owner
            .store(0, Ordering::Release);
        // SAFETY: the list's count of `item`, from `into_raw` in `push_back`,
        // taken back once: the item is no longer in the list.
        Some(unsafe { Arc::from_raw(item) })
    }
    // ANCHOR_END: remove

    /// Takes the item at the front.
    pub fn pop_front(&mut self) -> Option<Arc<T>> {
        // SAFETY: `first` is in this list (type invariant) and live.
        let first = unsafe { self.first.as_ref()? };
        self.remove(first)
    }

    /// Takes the item at the back.
    pub fn pop_back(&mut self) -> Option<Arc<T>> {
        if self.first.is_null() {
            return None;
        }
        // SAFETY: `first` is in this list (type invariant), and so is its
        // `prev`, which is live.
        let last = unsafe { &*(*Self::neighbours(self.first)).prev };
        self.remove(last)
    }

    /// The item at the front.
    pub fn front(&self) -> Option<ArcBorrow<'_, T>> {
        self.iter().next()
    }

    /// The items from front to back.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            next: self.first,
            first: self.first,
            _list: PhantomData,
        }
    }
}

impl<T: ListItem> Drop for List<T> {
    fn drop(&mut self) {
        while self.pop_front().is_some() {}
    }
}

/// An iterator over a [`List`]'s items, front to back.
pub struct Iter<'a, T: ListItem> {
    /// The next item, or null at the end.
    next: *const T,
    first: *const T,
    _list: PhantomData<&'a List<T>>,
}

impl<'a, T: ListItem> Iterator for Iter<'a, T> {
    type Item = ArcBorrow<'a, T>;

    fn next(&mut self) -> Option<ArcBorrow<'a, T>> {
        if self.next.is_null() {
            return None;
        }
        let item = self.next;
        // SAFETY: `item` is in the list, borrowed for `'a` (so unchanged),
        // and so is its `next`.
        let next = unsafe { (*List::<T>::neighbours(item)).next };
        self.next = if next == self.first {
            ptr::null()
        } else {
            next
        };
        // SAFETY: `item` came from `Arc::into_raw`, and the list keeps its
        // count for `'a` (it cannot change while borrowed).
        Some(unsafe { ArcBorrow::from_raw(item) })
    }
}
