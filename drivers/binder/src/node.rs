//! Nodes, the references to them, and death notifications (C's
//! `binder_node`, `binder_ref` and `binder_ref_death`). A node's counts
//! live in its owner's state, under the owner's lock: [`inc_node`] and
//! [`dec_node`] take that state.

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::list::List;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::uapi::binder::cmd::{BR_ACQUIRE, BR_DECREFS, BR_INCREFS, BR_RELEASE};
use kernel::uapi::binder::obj;

use crate::process::{Process, ProcessInner};
use crate::work::{Work, WorkItem};

/// Node ids are global, for identity only.
static NEXT_NODE_ID: AtomicU64 = AtomicU64::new(1);
/// Death notification ids too: one is drawn before the process lock is
/// taken, with the notification's work item.
static NEXT_DEATH_ID: AtomicU64 = AtomicU64::new(1);

// ANCHOR: node
/// A node: an object that lives in its owner process, to which other
/// processes hold references. Its counts are in the owner's state
/// ([`NodeState`]).
pub(crate) struct Node {
    pub(crate) id: u64,
    pub(crate) owner: Arc<Process>,
    pub(crate) ptr: u64,
    pub(crate) cookie: u64,
    pub(crate) accept_fds: bool,
}

/// A node's counts and work, in its owner's lock.
pub(crate) struct NodeState {
    pub(crate) node: Arc<Node>,
    pub(crate) internal_strong: u32,
    pub(crate) local_strong: u32,
    pub(crate) local_weak: u32,
    /// The processes that hold a reference, once per reference.
    pub(crate) holders: KVec<Arc<Process>>,
    pub(crate) has_strong: bool,
    pub(crate) has_weak: bool,
    pub(crate) pending_strong: bool,
    pub(crate) pending_weak: bool,
    /// The node's news for its owner (C's `node->work`), made with the
    /// node so that queueing it never allocates; queued while it is in a
    /// work list of the owner ([`WorkItem::is_queued`]).
    pub(crate) work: Arc<WorkItem>,
    pub(crate) is_manager: bool,
    /// A one-way transaction to it is being handled; later ones wait here.
    pub(crate) has_async: bool,
    pub(crate) async_todo: List<WorkItem>,
}

/// A reference from a process to a node, by handle.
pub(crate) struct Ref {
    pub(crate) handle: u32,
    pub(crate) node: Arc<Node>,
    pub(crate) strong: u32,
    pub(crate) weak: u32,
    /// The id of the death notification registered on it.
    pub(crate) death: Option<u64>,
}
// ANCHOR_END: node

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeathKind {
    Dead,
    DeadAndClear,
    Clear,
}

/// A death notification, in the state of the process that asked for it.
pub(crate) struct Death {
    pub(crate) id: u64,
    pub(crate) cookie: u64,
    pub(crate) kind: DeathKind,
    /// Delivered to user space, awaiting `BC_DEAD_BINDER_DONE`.
    pub(crate) delivered: bool,
    /// The reference still points at it.
    pub(crate) attached: bool,
    /// Its `Work::Death(id)`, made with it (C's `death->work`); queued
    /// while it is in a work list of this process.
    pub(crate) work: Arc<WorkItem>,
}

impl Node {
    /// A new node of `owner` for its object at `ptr`, and the work item
    /// that tells `owner` of its counts.
    pub(crate) fn new(
        owner: Arc<Process>,
        ptr: u64,
        cookie: u64,
        flags: u32,
    ) -> Result<(Arc<Node>, Arc<WorkItem>)> {
        let node = Arc::new(
            Node {
                id: NEXT_NODE_ID.fetch_add(1, Ordering::Relaxed),
                owner,
                ptr,
                cookie,
                accept_fds: flags & obj::FLAG_ACCEPTS_FDS != 0,
            },
            GFP_KERNEL,
        )?;
        let work = WorkItem::new(Work::Node(node.clone()))?;
        Ok((node, work))
    }
}

impl NodeState {
    /// A node's state with no counts yet; `work` is its work item.
    pub(crate) fn new(node: Arc<Node>, work: Arc<WorkItem>) -> Self {
        NodeState {
            node,
            internal_strong: 0,
            local_strong: 0,
            local_weak: 0,
            holders: KVec::new(),
            has_strong: false,
            has_weak: false,
            pending_strong: false,
            pending_weak: false,
            work,
            is_manager: false,
            has_async: false,
            async_todo: List::new(),
        }
    }
}

impl Death {
    /// A new death notification's id and work item, made before the
    /// process lock is taken.
    pub(crate) fn new_work() -> Result<(u64, Arc<WorkItem>)> {
        let id = NEXT_DEATH_ID.fetch_add(1, Ordering::Relaxed);
        Ok((id, WorkItem::new(Work::Death(id))?))
    }
}

// ANCHOR: inc_node
/// C's `binder_inc_node_nilocked`: `thread` is the thread whose list gets
/// the node's work (the sender of a new reference), if any.
pub(crate) fn inc_node(
    inner: &mut ProcessInner,
    node: &Arc<Node>,
    strong: bool,
    internal: bool,
    thread: Option<u64>,
) -> Result {
    let Some(st) = inner.node_state(node) else {
        // A dead node: counts no longer matter.
        return Ok(());
    };
    let mut queue = false;
    if strong {
        if internal {
            if thread.is_none() && st.internal_strong == 0 && !(st.is_manager && st.has_strong) {
                return Err(EINVAL);
            }
            st.internal_strong += 1;
        } else {
            st.local_strong += 1;
        }
        if !st.has_strong && thread.is_some() {
            queue = true;
        }
    } else {
        if !internal {
            st.local_weak += 1;
        }
        if !st.has_weak && thread.is_some() && !st.work.is_queued() {
            queue = true;
        }
    }
    if queue {
        let work = st.work.clone();
        inner.dequeue(&work);
        if let Some(t) = thread.and_then(|tid| inner.thread(tid)) {
            // Just taken out of any list: it joins this one.
            t.todo.push_back(work).map_err(|_| EINVAL)?;
        }
    }
    Ok(())
}
// ANCHOR_END: inc_node

/// C's `binder_dec_node_nilocked`; queues the node's work when user space
/// must hear that a count it holds dropped, and forgets a node nobody
/// refers to. Returns whether the process must be woken.
pub(crate) fn dec_node(
    inner: &mut ProcessInner,
    node: &Node,
    strong: bool,
    internal: bool,
) -> bool {
    let dead = inner.dead;
    let Some(st) = inner.node_state(node) else {
        return false;
    };
    if strong {
        if internal {
            st.internal_strong = st.internal_strong.saturating_sub(1);
        } else {
            st.local_strong = st.local_strong.saturating_sub(1);
        }
        if st.local_strong != 0 || st.internal_strong != 0 {
            return false;
        }
    } else {
        if !internal {
            st.local_weak = st.local_weak.saturating_sub(1);
        }
        if st.local_weak != 0 || !st.holders.is_empty() {
            return false;
        }
    }
    if !dead && (st.has_strong || st.has_weak) {
        if !st.work.is_queued() {
            let w = st.work.clone();
            // In no list: it cannot be refused.
            let _ = inner.todo.push_back(w);
            return true;
        }
    } else if st.holders.is_empty() && st.local_strong == 0 && st.local_weak == 0 {
        let w = st.work.clone();
        inner.dequeue(&w);
        inner.nodes.remove(&node.ptr);
    }
    false
}

/// A node's work (C's `binder_thread_read`, `BINDER_WORK_NODE`): brings
/// `has_strong`/`has_weak` in line with the counts, and returns what user
/// space must hear, in order (at most two of these).
pub(crate) fn node_work(inner: &mut ProcessInner, node: &Node) -> [Option<u32>; 4] {
    let dead = inner.dead;
    let Some(st) = inner.node_state(node) else {
        return [None; 4];
    };
    let strong = st.internal_strong != 0 || st.local_strong != 0;
    let weak = !st.holders.is_empty() || st.local_weak != 0 || strong;
    let (has_strong, has_weak) = (st.has_strong, st.has_weak);
    if weak && !has_weak {
        st.has_weak = true;
        st.pending_weak = true;
        st.local_weak += 1;
    }
    if strong && !has_strong {
        st.has_strong = true;
        st.pending_strong = true;
        st.local_strong += 1;
    }
    if !strong && has_strong {
        st.has_strong = false;
    }
    if !weak && has_weak {
        st.has_weak = false;
    }
    if !weak && !strong && !dead {
        inner.nodes.remove(&node.ptr);
    }
    [
        (weak && !has_weak).then_some(BR_INCREFS),
        (strong && !has_strong).then_some(BR_ACQUIRE),
        (!strong && has_strong).then_some(BR_RELEASE),
        (!weak && has_weak).then_some(BR_DECREFS),
    ]
}
