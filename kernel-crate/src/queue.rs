//! [`Queue`]: a first-in, first-out queue in a ring buffer, for work lists
//! that are popped at the front.
//!
//! A [`KVec`] used as a queue moves every element on each `remove(0)`, so a
//! list that grows under load (a thousand one-way calls waiting for one
//! node) gets slower the longer it is. A `Queue` pops from the front in
//! `O(1)`; it grows by doubling, fallibly, like `KVec`, and never shrinks,
//! so a list that has held `n` items takes no allocation again until it
//! holds more than `n`. Like [`KVec`] it is plain safe code over a vector
//! of slots: each slot is an `Option<T>`, `Some` exactly for the queued
//! items.

use crate::alloc::{AllocError, Flags, KVec};

/// A first-in, first-out queue.
///
/// ```rust
/// use kernel::queue::Queue;
///
/// let mut q = Queue::new();
/// for i in 1..=5u32 {
///     q.push(i, GFP_KERNEL)?;
/// }
/// let (a, b) = (q.pop_front(), q.pop_front());
/// q.push(6, GFP_KERNEL)?;
/// let removed = q.remove(1);
/// let last = q.iter().rposition(|&i| i % 2 == 0);
/// pr_info!("{:?} {:?} removed {:?}, left {}, last even at {:?}\n", a, b, removed, q.len(), last);
/// if (a, b, removed, q.first(), last) != (Some(1), Some(2), Some(4), Some(&3), Some(2)) {
///     return Err(EINVAL);
/// }
/// ```
///
/// The `len` items are in `slots[(head + i) % slots.len()]` for `i` in
/// `0..len`, in queue order; every other slot is `None`.
pub struct Queue<T> {
    slots: KVec<Option<T>>,
    head: usize,
    len: usize,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Queue<T> {
    /// An empty queue; it allocates on its first [`Queue::push`].
    pub const fn new() -> Self {
        Queue {
            slots: KVec::new(),
            head: 0,
            len: 0,
        }
    }

    /// The number of items queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The slot of the `i`th item (`i < len`, so there are slots).
    fn slot(&self, i: usize) -> usize {
        (self.head + i) % self.slots.len()
    }

    /// The `i`th item from the front.
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        self.slots.get(self.slot(i)).and_then(Option::as_ref)
    }

    /// The item at the front.
    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }

    /// Makes room for one more item: every slot used means twice the
    /// slots (at least four), the items moved to the front in order.
    fn grow(&mut self, flags: Flags) -> Result<(), AllocError> {
        let cap = (self.slots.len() * 2).max(4);
        let mut slots = KVec::with_capacity(cap, flags)?;
        for i in 0..cap {
            let item = if i < self.len {
                let at = self.slot(i);
                self.slots.get_mut(at).and_then(Option::take)
            } else {
                None
            };
            // Within the capacity just allocated: cannot fail.
            if slots.push_within_capacity(item).is_err() {
                return Err(AllocError);
            }
        }
        self.slots = slots;
        self.head = 0;
        Ok(())
    }

    /// Adds `value` at the back; allocates only when every slot is used.
    pub fn push(&mut self, value: T, flags: Flags) -> Result<(), AllocError> {
        if self.len == self.slots.len() {
            self.grow(flags)?;
        }
        let at = self.slot(self.len);
        let slot = self.slots.get_mut(at).ok_or(AllocError)?;
        *slot = Some(value);
        self.len += 1;
        Ok(())
    }

    /// Takes the item at the front, in `O(1)`.
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let at = self.head;
        let value = self.slots.get_mut(at).and_then(Option::take);
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        value
    }

    /// Takes the item at the back, in `O(1)`.
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let at = self.slot(self.len - 1);
        self.len -= 1;
        self.slots.get_mut(at).and_then(Option::take)
    }

    /// Takes the `i`th item from the front; the items behind it move up
    /// one place.
    pub fn remove(&mut self, i: usize) -> Option<T> {
        if i >= self.len {
            return None;
        }
        let at = self.slot(i);
        let value = self.slots.get_mut(at).and_then(Option::take);
        for j in i..self.len - 1 {
            let (from, to) = (self.slot(j + 1), self.slot(j));
            let next = self.slots.get_mut(from).and_then(Option::take);
            if let Some(slot) = self.slots.get_mut(to) {
                *slot = next;
            }
        }
        self.len -= 1;
        value
    }

    /// The items from front to back.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            queue: self,
            front: 0,
            back: self.len,
        }
    }
}

/// An iterator over a [`Queue`]'s items from front to back.
pub struct Iter<'a, T> {
    queue: &'a Queue<T>,
    /// The items `front..back` are still to come.
    front: usize,
    back: usize,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<&'a T> {
        if self.front == self.back {
            return None;
        }
        self.front += 1;
        self.queue.get(self.front - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
}

impl<T> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        self.queue.get(self.back)
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}
