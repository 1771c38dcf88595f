//! A thread that exits and a process that closes the device (C's
//! `binder_thread_release`, and `binder_deferred_release` on the system
//! workqueue).

use super::*;

impl Process {
    // ANCHOR: thread_exit
    /// Forgets a thread: a call it was handling fails with
    /// `BR_DEAD_REPLY` for its caller; calls it made lose their sender.
    pub(super) fn thread_exit(this: &Arc<Self>, tid: u64) {
        let thread = {
            let mut inner = this.inner.lock();
            let Some(i) = inner.threads.iter().position(|t| t.id == tid) else {
                return;
            };
            inner.threads.remove(i)
        };
        if let Some(th) = thread {
            Process::release_thread(this, th);
        }
    }
    // ANCHOR_END: thread_exit

    fn release_thread(this: &Arc<Self>, th: Thread) {
        let mut send_reply = None;
        let mut cur = th.stack.clone();
        let mut first = true;
        while let Some(t) = cur {
            let mut ti = t.inner.lock();
            if ti.to_thread == Some(th.id) && core::ptr::eq(&*t.to_proc, &**this) {
                if first {
                    send_reply = Some(t.clone());
                }
                ti.to_thread = None;
                cur = ti.to_parent.clone();
            } else if ti
                .from
                .as_ref()
                .is_some_and(|(p, id)| *id == th.id && core::ptr::eq(&**p, &**this))
            {
                ti.from = None;
                cur = t.from_parent.clone();
            } else {
                cur = None;
            }
            first = false;
        }
        if let Some(t) = send_reply {
            super::transaction::send_failed_reply(t, BR_DEAD_REPLY);
        }
        let mut todo = th.todo;
        Process::release_work(&mut todo);
    }

    /// Work that will never be read: calls waiting in it fail.
    fn release_work(todo: &mut List<WorkItem>) {
        while let Some(w) = todo.pop_back() {
            if let Work::Transaction(t) = &w.work {
                if t.target_node.is_some() && !t.is_oneway() {
                    super::transaction::send_failed_reply(t.clone(), BR_DEAD_REPLY);
                }
            }
        }
    }

    // ANCHOR: release
    /// The last close (C's `binder_release`): the teardown waits for the
    /// system workqueue, as C's does, so that `close` does not wait for it.
    pub(crate) fn release(this: Arc<Self>) {
        // Queued only here, once per process: it cannot be queued already.
        if let Err(this) = workqueue::queue(this) {
            Process::deferred_release(&this);
        }
    }

    /// The teardown (C's `binder_deferred_release`): nodes die (death
    /// notifications go out), references are dropped, and calls that wait
    /// here fail.
    fn deferred_release(this: &Arc<Self>) {
        {
            let mut mgr = this.ctx.manager.lock();
            if mgr
                .node
                .as_ref()
                .is_some_and(|n| core::ptr::eq(&*n.owner, &**this))
            {
                mgr.node = None;
            }
        }
        let (threads, mut todo, nodes, refs) = {
            let mut inner = this.inner.lock();
            inner.dead = true;
            (
                core::mem::take(&mut inner.threads),
                core::mem::take(&mut inner.todo),
                core::mem::take(&mut inner.nodes),
                {
                    inner.refs_by_node = RBTree::new();
                    core::mem::take(&mut inner.refs)
                },
            )
        };
        let mut threads = threads;
        while let Some(th) = threads.pop() {
            Process::release_thread(this, th);
        }
        // Every node dies, by `ptr` as in C; holders that asked hear of it.
        let mut nodes = nodes;
        while let Some(mut st) = nodes
            .first()
            .map(|(&ptr, _)| ptr)
            .and_then(|p| nodes.remove(&p))
        {
            while let Some(holder) = st.holders.pop() {
                let mut hi = holder.inner.lock();
                let death = hi.ref_by_node(&st.node).and_then(|r| r.death);
                if let Some(id) = death {
                    let queue = hi
                        .death(id)
                        .filter(|d| !d.work.is_queued() && !d.delivered)
                        .map(|d| d.work.clone());
                    if queue.is_some_and(|w| hi.todo.push_back(w).is_ok()) {
                        drop(hi);
                        holder.work.notify_all();
                    }
                }
            }
            while st.async_todo.pop_back().is_some() {}
        }
        // Every reference goes, by handle as in C.
        let mut refs = refs;
        while let Some(r) = refs.first().map(|(&h, _)| h).and_then(|h| refs.remove(&h)) {
            Process::put_ref_counts(this, &r.node, r.strong > 0, true);
        }
        Process::release_work(&mut todo);
        let mut inner = this.inner.lock();
        inner.deaths = KVec::new();
        // The buffers' target nodes hold strong counts: drop them.
        let mut nodes = KVec::new();
        if let Some(alloc) = inner.alloc.as_mut() {
            let mut offsets = KVec::new();
            for o in alloc.allocated() {
                if offsets.push(o, GFP_KERNEL).is_err() {
                    break;
                }
            }
            for &o in offsets.iter() {
                if let Some(n) = alloc.free_counted(o) {
                    let _ = nodes.push(n, GFP_KERNEL);
                }
            }
        }
        let pages = inner.alloc.take().map(|a| a.pages().clone());
        drop(inner);
        // Nothing left for the shrinker: the list keeps no pages of a
        // released process.
        if let Some(pages) = pages {
            this.ctx.reclaim.remove(&pages);
        }
        while let Some(node) = nodes.pop() {
            let wake = dec_node(&mut node.owner.inner.lock(), &node, true, false);
            if wake {
                node.owner.work.notify_all();
            }
        }
    }
    // ANCHOR_END: release
}

// ANCHOR: work_item
kernel::impl_has_work!(Process, deferred);

impl workqueue::WorkItem for Process {
    fn run(this: Arc<Self>) {
        Process::deferred_release(&this);
    }
}
// ANCHOR_END: work_item
