//! The context: who the context manager is (handle 0 in every process),
//! and every mapping's pages, for the module's shrinker.

use kernel::init::PinInit;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::{new_mutex, pin_init};

use crate::node::Node;
use crate::page_range::Reclaim;
use crate::process::Process;

/// The context of the device: one, made at module load.
pub(crate) struct Context {
    /// Lock 3 of the lock order (`page_range.rs`).
    pub(crate) manager: Mutex<Manager>,
    /// Every mapping's pages, which the module's shrinker reclaims from.
    pub(crate) reclaim: Arc<Reclaim>,
}

/// The context manager's node, and the euid that first became manager.
#[derive(Default)]
pub(crate) struct Manager {
    pub(crate) node: Option<Arc<Node>>,
    pub(crate) uid: Option<u32>,
}

impl Context {
    /// A context with no manager yet, whose mappings are listed in
    /// `reclaim`.
    pub(crate) fn new(reclaim: Arc<Reclaim>) -> impl PinInit<Self, Error> {
        pin_init!(Context {
            manager <- new_mutex!(Manager::default(), "Context::manager"),
            reclaim <- reclaim,
        })
    }

    /// Forgets the context manager if it is `owner`'s node (at `owner`'s
    /// release).
    pub(crate) fn forget_manager(&self, owner: &Process) {
        let mut mgr = self.manager.lock();
        if mgr
            .node
            .as_ref()
            .is_some_and(|n| core::ptr::eq(&*n.owner, owner))
        {
            mgr.node = None;
        }
    }

    /// The context manager's node, if there is one.
    pub(crate) fn manager_node(&self) -> Option<Arc<Node>> {
        self.manager.lock().node.clone()
    }
}
