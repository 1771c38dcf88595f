//! Red-black trees: [`RBTree`], a sorted map over C's `struct rb_root`.
//!
//! C header: [`include/linux/rbtree.h`](srctree/include/linux/rbtree.h).
//!
//! Each entry is a node of its own, allocated apart from the tree. A node
//! can be allocated before the lock that guards a tree is taken
//! ([`RBTree::try_reserve_node`]) and linked in under it
//! ([`RBTree::insert`]), so that inserting never allocates under a lock;
//! [`RBTree::remove_node`] gives a removed node's memory back as a
//! [`Reservation`] to be used again. Lookups, lower bounds and in-order
//! iteration take `O(log n)` steps, as in C.

use core::cmp::Ordering;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr;

use crate::alloc::{AllocError, Flags, KBox};
use crate::bindings;

/// One entry: C's `rb_node` first, so that a pointer to it is a pointer to
/// the entry.
#[repr(C)]
struct Node<K, V> {
    links: bindings::rb_node,
    key: K,
    value: V,
}

/// A sorted map from `K` to `V`, each key at most once.
///
/// ```rust
/// use kernel::rbtree::RBTree;
///
/// // Free buffers by (size, offset), as Binder's allocator keeps them.
/// let mut free = RBTree::new();
/// for key in [(64usize, 0usize), (16, 64), (64, 128), (256, 512)] {
///     // Reserved first (a driver does it before taking its lock), then
///     // linked in with no allocation.
///     let node = RBTree::try_reserve_node(GFP_KERNEL)?;
///     free.insert(node, key, ());
/// }
/// // Best fit for 20 bytes: the smallest size >= 20, lowest offset first.
/// let fit = free.lower_bound(&(20, 0)).map(|(k, ())| *k);
/// let (_, (), node) = free.remove_node(&(64, 0)).ok_or(EINVAL)?;
/// // The removed entry's node holds the next key.
/// free.insert(node, (44, 20), ());
/// let before = free.last_below(&(64, 128)).map(|(k, ())| *k);
/// pr_info!("fit {:?}, below (64, 128): {:?}\n", fit, before);
/// for ((size, offset), ()) in free.iter() {
///     pr_info!("free: {} at {}\n", size, offset);
/// }
/// if fit != Some((64, 0)) || before != Some((44, 20)) || free.get(&(64, 0)).is_some() {
///     return Err(EINVAL);
/// }
/// ```
///
/// # Invariants
///
/// `root` is a valid C red-black tree. Each of its `rb_node`s is the
/// `links` of a live `Node<K, V>` whose block came from
/// `KBox::<Node<K, V>>::into_raw` and is owned by this tree. In-order, the
/// nodes' keys are strictly increasing.
pub struct RBTree<K, V> {
    root: bindings::rb_root,
    _owns: PhantomData<KBox<Node<K, V>>>,
}

// SAFETY: the tree owns its keys and values, as a `KBox` would; the C
// pointers in it point only at nodes it owns.
unsafe impl<K: Send, V: Send> Send for RBTree<K, V> {}
// SAFETY: `&RBTree` only gives `&K` and `&V`.
unsafe impl<K: Sync, V: Sync> Sync for RBTree<K, V> {}

/// Memory for one node of an [`RBTree<K, V>`], allocated ahead of
/// [`RBTree::insert`].
pub struct Reservation<K, V> {
    node: KBox<MaybeUninit<Node<K, V>>>,
}

// SAFETY: a reservation holds no key, no value and no live pointer: only
// uninitialised memory, which any thread may use or free.
unsafe impl<K, V> Send for Reservation<K, V> {}
// SAFETY: `&Reservation` gives access to nothing.
unsafe impl<K, V> Sync for Reservation<K, V> {}

impl<K, V> Default for RBTree<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K, V> RBTree<K, V> {
    /// An empty tree.
    pub const fn new() -> Self {
        // INVARIANT: an empty tree (`RB_ROOT`) owns no node.
        RBTree {
            root: bindings::rb_root {
                rb_node: ptr::null_mut(),
            },
            _owns: PhantomData,
        }
    }

    /// Allocates a node, to be inserted later (with no allocation then).
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn try_reserve_node(flags: Flags) -> Result<Reservation<K, V>, AllocError> {
        Ok(Reservation {
            node: KBox::new_uninit(flags)?,
        })
    }

    /// Whether the tree has no entry.
    pub fn is_empty(&self) -> bool {
        self.root.rb_node.is_null()
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        // SAFETY: `root` is a valid tree (type invariant).
        let next = unsafe { bindings::rb_first(&self.root) };
        Iter {
            next,
            _tree: PhantomData,
        }
    }

    /// The entry with the smallest key.
    pub fn first(&self) -> Option<(&K, &V)> {
        self.iter().next()
    }

    /// The key and value of the entry whose links `n` is.
    ///
    /// # Safety
    ///
    /// `n` is a node of this tree (not null).
    unsafe fn entry(&self, n: *mut bindings::rb_node) -> (&K, &V) {
        let node = n.cast::<Node<K, V>>();
        // SAFETY: the caller passes a node of this tree, which is the links
        // of a live `Node<K, V>` at the same address (type invariant,
        // `#[repr(C)]`); it lives as long as `&self`.
        unsafe { (&(*node).key, &(*node).value) }
    }
}

impl<K: Ord, V> RBTree<K, V> {
    /// Walks down from the root: at each node, `go_left` tells whether to
    /// go left, or (`None`) to stop and return that node. Returns the last
    /// node where it went left, or with `keep_right` right (or null).
    fn descend(
        &self,
        keep_right: bool,
        mut go_left: impl FnMut(&K) -> Option<bool>,
    ) -> *mut bindings::rb_node {
        let mut best = ptr::null_mut();
        let mut n = self.root.rb_node;
        while !n.is_null() {
            // SAFETY: `n` is a node of this tree (type invariant: the root
            // and the children of its nodes are its nodes, or null).
            let (k, _) = unsafe { self.entry(n) };
            let left = match go_left(k) {
                Some(left) => left,
                None => return n,
            };
            if left != keep_right {
                best = n;
            }
            // SAFETY: as above, `n` is a live node.
            n = unsafe {
                if left {
                    (*n).rb_left
                } else {
                    (*n).rb_right
                }
            };
        }
        best
    }

    /// The node holding `key`, or null.
    fn find(&self, key: &K) -> *mut bindings::rb_node {
        let n = self.descend(false, |k| match key.cmp(k) {
            Ordering::Less => Some(true),
            Ordering::Greater => Some(false),
            Ordering::Equal => None,
        });
        // `descend` returns the last node it went left at when it finds
        // nothing equal: check.
        // SAFETY: a non-null result is a node of this tree.
        if !n.is_null() && unsafe { self.entry(n) }.0 == key {
            n
        } else {
            ptr::null_mut()
        }
    }

    /// The value for `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        let n = self.find(key);
        // SAFETY: a non-null result of `find` is a node of this tree.
        (!n.is_null()).then(|| unsafe { self.entry(n) }.1)
    }

    /// The value for `key`, to change.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let n = self.find(key).cast::<Node<K, V>>();
        // SAFETY: a non-null result of `find` is the links of a live node
        // that this tree owns, and `&mut self` makes the borrow unique.
        (!n.is_null()).then(|| unsafe { &mut (*n).value })
    }

    /// The entry with the smallest key `>= key` (C++'s `lower_bound`).
    pub fn lower_bound(&self, key: &K) -> Option<(&K, &V)> {
        let n = self.descend(false, |k| Some(k >= key));
        // SAFETY: a non-null result of `descend` is a node of this tree.
        (!n.is_null()).then(|| unsafe { self.entry(n) })
    }

    /// The entry with the largest key `< key`.
    pub fn last_below(&self, key: &K) -> Option<(&K, &V)> {
        // The last node below `key` that the walk went right at.
        let n = self.descend(true, |k| Some(k >= key));
        // SAFETY: a non-null result of `descend` is a node of this tree.
        (!n.is_null()).then(|| unsafe { self.entry(n) })
    }

    // ANCHOR: insert
    /// Links `key` and `value` into the tree in the reserved node; never
    /// allocates. If `key` is there already, its value is replaced and
    /// returned, and the reservation is freed.
    pub fn insert(&mut self, reservation: Reservation<K, V>, key: K, value: V) -> Option<V> {
        let mut link: *mut *mut bindings::rb_node = &mut self.root.rb_node;
        let mut parent = ptr::null_mut();
        // SAFETY: `link` points at the root pointer or at a child pointer
        // of a live node of this tree; each non-null `*link` is a node of
        // this tree (type invariant), which `&mut self` lets us change.
        unsafe {
            while !(*link).is_null() {
                parent = *link;
                let node = parent.cast::<Node<K, V>>();
                link = match key.cmp(&(*node).key) {
                    Ordering::Less => ptr::addr_of_mut!((*parent).rb_left),
                    Ordering::Greater => ptr::addr_of_mut!((*parent).rb_right),
                    Ordering::Equal => {
                        return Some(core::mem::replace(&mut (*node).value, value));
                    }
                };
            }
        }
        let node = KBox::into_raw(reservation.node.write(Node {
            links: bindings::rb_node {
                __rb_parent_color: 0,
                rb_right: ptr::null_mut(),
                rb_left: ptr::null_mut(),
            },
            key,
            value,
        }));
        let links = node.cast::<bindings::rb_node>();
        // INVARIANT: the node comes from `KBox::into_raw` and goes where
        // the search put it: after every smaller key, before every larger.
        // SAFETY: `links` is a node of its own, `parent` is its parent to
        // be (or null for the root) and `link` the child pointer that
        // will point at it; `rb_insert_color` then rebalances this tree.
        unsafe {
            bindings::rust_helper_rb_link_node(links, parent, link);
            bindings::rb_insert_color(links, &mut self.root);
        }
        None
    }
    // ANCHOR_END: insert

    /// Allocates a node and inserts `key` and `value` (see
    /// [`RBTree::insert`]).
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn try_insert(&mut self, key: K, value: V, flags: Flags) -> Result<Option<V>, AllocError> {
        Ok(self.insert(Self::try_reserve_node(flags)?, key, value))
    }

    /// Takes the entry for `key` out of the tree; its node's memory comes
    /// back as a reservation for a later insertion.
    pub fn remove_node(&mut self, key: &K) -> Option<(K, V, Reservation<K, V>)> {
        let n = self.find(key);
        if n.is_null() {
            return None;
        }
        let node = n.cast::<Node<K, V>>();
        // SAFETY: `n` is a node of this tree (from `find`); once it is
        // erased the tree no longer points at it, so this owns its block,
        // which came from `KBox::into_raw` (type invariant). The key and
        // value are read out once and the block is kept as uninitialised.
        unsafe {
            bindings::rb_erase(n, &mut self.root);
            let key = ptr::read(ptr::addr_of!((*node).key));
            let value = ptr::read(ptr::addr_of!((*node).value));
            let node = KBox::from_raw(node.cast::<MaybeUninit<Node<K, V>>>());
            Some((key, value, Reservation { node }))
        }
    }

    /// Takes the entry for `key` out of the tree and frees its node.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        self.remove_node(key).map(|(_, value, _)| value)
    }
}

impl<K, V> Drop for RBTree<K, V> {
    fn drop(&mut self) {
        while !self.root.rb_node.is_null() {
            let n = self.root.rb_node;
            // SAFETY: `n` is a node of this tree (type invariant); after
            // `rb_erase` the tree does not point at it, so its block,
            // from `KBox::into_raw`, is ours to drop.
            unsafe {
                bindings::rb_erase(n, &mut self.root);
                drop(KBox::from_raw(n.cast::<Node<K, V>>()));
            }
        }
    }
}

/// An iterator over an [`RBTree`]'s entries in key order.
pub struct Iter<'a, K, V> {
    /// The next node, or null.
    next: *mut bindings::rb_node,
    _tree: PhantomData<&'a RBTree<K, V>>,
}

impl<'a, K, V> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        if self.next.is_null() {
            return None;
        }
        let node = self.next.cast::<Node<K, V>>();
        // SAFETY: `next` is a node of the tree this borrows, which cannot
        // change while the borrow lasts; the node is the links of a live
        // `Node<K, V>` at the same address.
        unsafe {
            self.next = bindings::rb_next(self.next);
            Some((&(*node).key, &(*node).value))
        }
    }
}
