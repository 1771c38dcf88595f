//! Work for a thread to return from a read: the items of the work lists
//! of processes and threads (C's `binder_work`).

use kernel::impl_list_item;
use kernel::list::ListLinks;
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::node::Node;
use crate::transaction::Transaction;

/// An item of work for a thread to return from a read.
pub(crate) enum Work {
    Transaction(Arc<Transaction>),
    Complete,
    /// `BR_DEAD_REPLY`, `BR_FAILED_REPLY` and friends; `return_error`
    /// says whether it stops the thread's writes until read.
    Error {
        cmd: u32,
        return_error: bool,
    },
    Node(Arc<Node>),
    Death(u64),
}

// ANCHOR: work_item
/// An item of a work list: allocated before any lock is taken (or made
/// with what it reports, as a node's and a death's are), so that queueing
/// it never allocates. It is in at most one list at a time.
pub(crate) struct WorkItem {
    links: ListLinks<WorkItem>,
    pub(crate) work: Work,
}
impl_list_item!(WorkItem, links);

impl WorkItem {
    /// In a work list (as C's `!list_empty(&work->entry)`). Exact under
    /// the lock of the process whose lists it goes into.
    pub(crate) fn is_queued(&self) -> bool {
        self.links.is_listed()
    }

    pub(crate) fn new(work: Work) -> Result<Arc<WorkItem>, AllocError> {
        Arc::new(
            WorkItem {
                links: ListLinks::new(),
                work,
            },
            GFP_KERNEL,
        )
    }
}
// ANCHOR_END: work_item
