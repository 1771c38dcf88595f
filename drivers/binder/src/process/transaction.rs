//! Sending a transaction or a reply (C's `binder_transaction`).

use super::*;

/// Why a transaction failed: the `BR_*` the sender reads.
struct Failed(u32);

impl From<Error> for Failed {
    fn from(_: Error) -> Self {
        Failed(BR_FAILED_REPLY)
    }
}

impl From<kernel::alloc::AllocError> for Failed {
    fn from(_: kernel::alloc::AllocError) -> Self {
        Failed(BR_FAILED_REPLY)
    }
}

/// Where a transaction goes.
struct Target {
    proc: Arc<Process>,
    thread: Option<u64>,
    node: Option<Arc<Node>>,
    in_reply_to: Option<Arc<Transaction>>,
}

impl Process {
    // ANCHOR: transaction
    pub(super) fn transaction(this: &Arc<Self>, tid: u64, tr: &TxnData, reply: bool) -> Result {
        let target = match Process::find_target(this, tid, tr, reply) {
            Ok(target) => target,
            Err((Failed(cmd), in_reply_to)) => return Process::fail(this, tid, cmd, in_reply_to),
        };
        let in_reply_to = target.in_reply_to.clone();
        match Process::send(this, tid, tr, reply, target) {
            Ok(()) => Ok(()),
            Err(Failed(cmd)) => Process::fail(this, tid, cmd, in_reply_to),
        }
    }
    // ANCHOR_END: transaction

    /// The error path's end: the sender reads `cmd`, or, for a reply that
    /// failed, `BR_TRANSACTION_COMPLETE` while the error goes to whoever
    /// waits for the reply.
    fn fail(this: &Arc<Self>, tid: u64, cmd: u32, in_reply_to: Option<Arc<Transaction>>) -> Result {
        let w = WorkItem::new(Work::Error {
            cmd: if in_reply_to.is_some() {
                BR_TRANSACTION_COMPLETE
            } else {
                cmd
            },
            return_error: true,
        })?;
        {
            let mut inner = this.inner.lock();
            if let Some(t) = inner.thread(tid) {
                t.todo.push_back(w).map_err(|_| EINVAL)?;
                t.return_error = true;
                t.process_todo = true;
            }
        }
        if let Some(t) = in_reply_to {
            send_failed_reply(t, cmd);
        }
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    fn find_target(
        this: &Arc<Self>,
        tid: u64,
        tr: &TxnData,
        reply: bool,
    ) -> Result<Target, (Failed, Option<Arc<Transaction>>)> {
        let failed = |cmd| (Failed(cmd), None);
        if reply {
            let in_reply_to = {
                let mut inner = this.inner.lock();
                let t = inner.thread(tid).ok_or(failed(BR_FAILED_REPLY))?;
                let top = t.stack.clone().ok_or(failed(BR_FAILED_REPLY))?;
                let ti = top.inner.lock();
                if ti.to_thread != Some(tid) || !core::ptr::eq(&*top.to_proc, &**this) {
                    return Err(failed(BR_FAILED_REPLY));
                }
                t.stack = ti.to_parent.clone();
                drop(ti);
                top
            };
            let from = in_reply_to.inner.lock().from.clone();
            let Some((proc, from_tid)) = from else {
                return Err((Failed(BR_DEAD_REPLY), Some(in_reply_to)));
            };
            {
                let mut pi = proc.inner.lock();
                match pi.thread(from_tid) {
                    None => return Err((Failed(BR_DEAD_REPLY), Some(in_reply_to))),
                    Some(ft)
                        if !ft
                            .stack
                            .as_ref()
                            .is_some_and(|s| Arc::ptr_eq(s, &in_reply_to)) =>
                    {
                        return Err(failed(BR_FAILED_REPLY));
                    }
                    Some(_) => {}
                }
            }
            return Ok(Target {
                proc,
                thread: Some(from_tid),
                node: None,
                in_reply_to: Some(in_reply_to),
            });
        }
        let node = if tr.target as u32 != 0 {
            let mut inner = this.inner.lock();
            let r = inner
                .ref_by_handle(tr.target as u32, true)
                .ok_or(failed(BR_FAILED_REPLY))?;
            r.node.clone()
        } else {
            let node = this.ctx.manager_node();
            let node = node.ok_or(failed(BR_DEAD_REPLY))?;
            if *node.owner.task == *this.task {
                return Err(failed(BR_FAILED_REPLY));
            }
            node
        };
        if core::ptr::eq(&*node.owner, &**this) {
            return Err(failed(BR_FAILED_REPLY));
        }
        // A strong count on the node while the transaction lives.
        {
            let mut owner = node.owner.inner.lock();
            if owner.dead || owner.node_state(&node).is_none() {
                return Err(failed(BR_DEAD_REPLY));
            }
            let _ = inc_node(&mut owner, &node, true, false, None);
        }
        let oneway = tr.flags & tf::ONE_WAY != 0;
        let mut thread = None;
        let check = (|| {
            let mut inner = this.inner.lock();
            let t = inner.thread(tid).ok_or(BR_FAILED_REPLY)?;
            let first = t.todo.front();
            if !oneway && first.is_some_and(|w| matches!(w.work, Work::Transaction(_))) {
                return Err(BR_FAILED_REPLY);
            }
            if !oneway {
                if let Some(top) = t.stack.clone() {
                    if top.inner.lock().to_thread != Some(tid) {
                        return Err(BR_FAILED_REPLY);
                    }
                    // A call back into a process that waits for us goes
                    // to the thread that waits.
                    let mut cur = Some(top);
                    while let Some(tx) = cur {
                        let from = tx.inner.lock().from.clone();
                        if let Some((p, ftid)) = from {
                            if Arc::ptr_eq(&p, &node.owner) {
                                thread = Some(ftid);
                                break;
                            }
                        }
                        cur = tx.from_parent.clone();
                    }
                }
            }
            Ok(())
        })();
        if let Err(cmd) = check {
            Process::put_txn_node(&node);
            return Err(failed(cmd));
        }
        Ok(Target {
            proc: node.owner.clone(),
            thread,
            node: Some(node),
            in_reply_to: None,
        })
    }

    /// Drops the strong count a transaction held on its target node.
    fn put_txn_node(node: &Arc<Node>) {
        let wake = dec_node(&mut node.owner.inner.lock(), node, true, false);
        if wake {
            node.owner.work.notify_all();
        }
    }

    // ANCHOR: send
    fn send(
        this: &Arc<Self>,
        tid: u64,
        tr: &TxnData,
        reply: bool,
        target: Target,
    ) -> Result<(), Failed> {
        let oneway = !reply && tr.flags & tf::ONE_WAY != 0;
        let data_size = usize::try_from(tr.data_size).map_err(|_| Failed(BR_FAILED_REPLY))?;
        let offsets_size = usize::try_from(tr.offsets_size).map_err(|_| Failed(BR_FAILED_REPLY))?;
        let to = &target.proc;
        security::binder_transaction(&this.cred, &to.cred).map_err(|_| Failed(BR_FAILED_REPLY))?;
        // The buffer first: no mapping in the target means it is dying.
        let buf = {
            let mut ti = to.inner.lock();
            let alloc = ti.alloc.as_mut().ok_or(Failed(BR_DEAD_REPLY))?;
            let offset = alloc
                .alloc_counted(data_size, offsets_size, oneway)
                .map_err(|e| {
                    if e == ESRCH {
                        Failed(BR_DEAD_REPLY)
                    } else {
                        Failed(BR_FAILED_REPLY)
                    }
                })?;
            TxnBuffer {
                pages: alloc.pages().clone(),
                offset,
                data_size,
                offsets_size,
            }
        };
        let offset = buf.offset;
        let free = |node: &Option<Arc<Node>>| {
            to.release_buffer(offset);
            if let Some(node) = node {
                Process::put_txn_node(node);
            }
        };
        // Its pages, outside the lock (it takes the target's mmap_lock).
        // The target's memory gone (it exited) is C's "no vma".
        if let Err(e) = buf.populate() {
            free(&target.node);
            return Err(Failed(if e == ESRCH {
                BR_DEAD_REPLY
            } else {
                BR_FAILED_REPLY
            }));
        }
        let mut fds = KVec::new();
        let mut done = 0;
        let result = Process::translate(this, tid, tr, &target, &buf, &mut fds, &mut done);
        if let Err(f) = result {
            Process::release_objects(to, &buf, done);
            free(&target.node);
            return Err(f);
        }
        let parent = if !reply && !oneway {
            this.inner.lock().thread(tid).and_then(|t| t.stack.clone())
        } else {
            None
        };
        let tnode = target.node.clone();
        let t = Arc::pin_init(
            pin_init!(Transaction {
                to_proc <- to.clone(),
                target_node <- tnode,
                from_parent <- parent,
                code <- tr.code,
                flags <- tr.flags,
                sender_euid <- this.task.euid(),
                inner <- new_mutex!(TransactionInner {
                    from: if !reply && !oneway { Some((this.clone(), tid)) } else { None },
                    to_thread: None,
                    to_parent: None,
                    buffer: Some(offset),
                    fds,
                }, "Transaction::inner"),
            }),
            GFP_KERNEL,
        );
        // The buffer holds a strong count on the node until it is freed.
        let t = t.ok().filter(|_| {
            let mut ti = to.inner.lock();
            let b = ti.alloc.as_mut().and_then(|a| a.buffer_mut(offset));
            b.map(|b| b.target_node = target.node.clone()).is_some()
        });
        let Some(t) = t else {
            Process::release_objects(to, &buf, done);
            free(&target.node);
            return Err(Failed(BR_FAILED_REPLY));
        };
        Process::deliver(this, tid, t, oneway, reply, target, &buf, done)
    }
    // ANCHOR_END: send

    #[allow(clippy::too_many_arguments)]
    fn deliver(
        this: &Arc<Self>,
        tid: u64,
        t: Arc<Transaction>,
        oneway: bool,
        reply: bool,
        target: Target,
        buf: &TxnBuffer,
        done: usize,
    ) -> Result<(), Failed> {
        let to = &target.proc;
        let undo = || {
            Process::release_objects(to, buf, done);
            to.release_buffer(buf.offset);
            if let Some(node) = &target.node {
                Process::put_txn_node(node);
            }
        };
        // Both work items before any lock: queueing them cannot fail.
        let items = WorkItem::new(Work::Transaction(t.clone()))
            .and_then(|w| Ok((w, WorkItem::new(Work::Complete)?)));
        let Ok((work, complete)) = items else {
            t.inner.lock().buffer = None;
            undo();
            return Err(Failed(BR_FAILED_REPLY));
        };
        // A synchronous call goes on the sender's stack; its completion
        // waits in the sender's list.
        let t = if !reply && !oneway {
            let mut inner = this.inner.lock();
            let th = inner.thread(tid).ok_or(Failed(BR_FAILED_REPLY))?;
            th.todo
                .push_back(complete.clone())
                .map_err(|_| Failed(BR_FAILED_REPLY))?;
            th.stack = Some(t.clone());
            t
        } else {
            let mut inner = this.inner.lock();
            let th = inner.thread(tid).ok_or(Failed(BR_FAILED_REPLY))?;
            th.todo
                .push_back(complete.clone())
                .map_err(|_| Failed(BR_FAILED_REPLY))?;
            th.process_todo = true;
            t
        };
        let pop_complete = |me: &Arc<Process>| {
            let mut inner = me.inner.lock();
            if let Some(th) = inner.thread(tid) {
                th.todo.remove(&complete);
            }
        };
        let queued = {
            let mut ti = to.inner.lock();
            if ti.dead {
                Err(BR_DEAD_REPLY)
            } else if reply {
                let in_reply_to = target.in_reply_to.clone();
                match target.thread.and_then(|id| ti.thread(id)) {
                    None => Err(BR_DEAD_REPLY),
                    Some(th) => {
                        if let Some(irt) = &in_reply_to {
                            if th.stack.as_ref().is_some_and(|s| Arc::ptr_eq(s, irt)) {
                                th.stack = irt.from_parent.clone();
                            }
                        }
                        th.process_todo = true;
                        th.todo.push_back(work).map_err(|_| BR_FAILED_REPLY)
                    }
                }
            } else if oneway {
                let node = target.node.clone();
                match node.as_ref().and_then(|n| ti.node_state(n)) {
                    None => Err(BR_DEAD_REPLY),
                    Some(st) if st.has_async => {
                        st.async_todo.push_back(work).map_err(|_| BR_FAILED_REPLY)
                    }
                    Some(st) => {
                        st.has_async = true;
                        ti.todo.push_back(work).map_err(|_| BR_FAILED_REPLY)
                    }
                }
            } else {
                match target.thread {
                    Some(id) => match ti.thread(id) {
                        Some(th) => {
                            th.process_todo = true;
                            th.todo.push_back(work).map_err(|_| BR_FAILED_REPLY)
                        }
                        None => Err(BR_DEAD_REPLY),
                    },
                    None => ti.todo.push_back(work).map_err(|_| BR_FAILED_REPLY),
                }
            }
        };
        match queued {
            Ok(()) => {
                to.work.notify_all();
                Ok(())
            }
            Err(cmd) => {
                pop_complete(this);
                if !reply && !oneway {
                    let mut inner = this.inner.lock();
                    if let Some(th) = inner.thread(tid) {
                        if th.stack.as_ref().is_some_and(|s| Arc::ptr_eq(s, &t)) {
                            th.stack = t.from_parent.clone();
                        }
                    }
                }
                t.inner.lock().buffer = None;
                undo();
                Err(Failed(cmd))
            }
        }
    }

    // ANCHOR: translate
    /// Copies the data and offsets from the sender straight into the
    /// target's buffer and translates every object there, in place;
    /// `done` counts the objects translated (whose counts the error path
    /// drops).
    fn translate(
        this: &Arc<Self>,
        tid: u64,
        tr: &TxnData,
        target: &Target,
        buf: &TxnBuffer,
        fds: &mut KVec<(usize, FileRef)>,
        done: &mut usize,
    ) -> Result<(), Failed> {
        if !buf.offsets_size.is_multiple_of(8) {
            return Err(Failed(BR_FAILED_REPLY));
        }
        let mut r = UserSlice::new(tr.buffer as usize, buf.data_size)?.reader();
        buf.pages
            .write_from_user(buf.offset, &mut r, buf.data_size)?;
        let mut r = UserSlice::new(tr.offsets as usize, buf.offsets_size)?.reader();
        buf.pages
            .write_from_user(buf.offsets_start(), &mut r, buf.offsets_size)?;
        let mut off_min = 0usize;
        for i in 0..buf.count() {
            let mut o = buf.object(i).ok_or(Failed(BR_FAILED_REPLY))?;
            if o.off < off_min {
                return Err(Failed(BR_FAILED_REPLY));
            }
            off_min = o.off + uapi::FLAT_OBJECT_SIZE;
            let b = &mut o.bytes;
            match o.ty {
                obj::TYPE_BINDER | obj::TYPE_WEAK_BINDER => {
                    let (flags, ptr, cookie) = (u32_at(b, 4), u64_at(b, 8), u64_at(b, 16));
                    security::binder_transfer_binder(&this.cred, &target.proc.cred)?;
                    let node = Process::get_or_new_node(this, ptr, cookie, flags)?;
                    if node.cookie != cookie {
                        return Err(Failed(BR_FAILED_REPLY));
                    }
                    let strong = o.ty == obj::TYPE_BINDER;
                    let handle = Process::inc_ref_for_node(&target.proc, &node, strong, Some(tid))?;
                    let ty = if strong {
                        obj::TYPE_HANDLE
                    } else {
                        obj::TYPE_WEAK_HANDLE
                    };
                    put_u32(b, 0, ty);
                    put_u64(b, 8, handle.into());
                    put_u64(b, 16, 0);
                }
                obj::TYPE_HANDLE | obj::TYPE_WEAK_HANDLE => {
                    let strong = o.ty == obj::TYPE_HANDLE;
                    security::binder_transfer_binder(&this.cred, &target.proc.cred)?;
                    let node = {
                        let mut inner = this.inner.lock();
                        let r = inner
                            .ref_by_handle(u32_at(b, 8), strong)
                            .ok_or(Failed(BR_FAILED_REPLY))?;
                        r.node.clone()
                    };
                    if Arc::ptr_eq(&node.owner, &target.proc) {
                        inc_node(&mut target.proc.inner.lock(), &node, strong, false, None)?;
                        let ty = if strong {
                            obj::TYPE_BINDER
                        } else {
                            obj::TYPE_WEAK_BINDER
                        };
                        put_u32(b, 0, ty);
                        put_u64(b, 8, node.ptr);
                        put_u64(b, 16, node.cookie);
                    } else {
                        let handle = Process::inc_ref_for_node(&target.proc, &node, strong, None)?;
                        put_u64(b, 8, handle.into());
                        put_u64(b, 16, 0);
                    }
                }
                obj::TYPE_FD => {
                    let allowed = match &target.in_reply_to {
                        Some(t) => t.flags & tf::ACCEPT_FDS != 0,
                        None => target.node.as_ref().is_some_and(|n| n.accept_fds),
                    };
                    if !allowed {
                        return Err(Failed(BR_FAILED_REPLY));
                    }
                    let file = FileRef::fget(u32_at(b, 8))?;
                    security::binder_transfer_file(&this.cred, &target.proc.cred, &file)?;
                    fds.push((o.off + 8, file), GFP_KERNEL)?;
                    *done = i + 1;
                    continue;
                }
                _ => return Err(Failed(BR_FAILED_REPLY)),
            }
            // Counted once written back: the error path reads the object
            // from the buffer. (The write cannot fail: `object` just read
            // the same bytes.)
            buf.write_object(&o)?;
            *done = i + 1;
        }
        Ok(())
    }
    // ANCHOR_END: translate
}

// ANCHOR: failed_reply
/// Tells the thread waiting for `t`'s reply that none will come, or, if
/// it is gone, the one waiting further down the chain.
pub(super) fn send_failed_reply(t: Arc<Transaction>, cmd: u32) {
    let mut t = t;
    // Made before any lock; without memory for it, the waiting thread is
    // not told.
    let mut w = WorkItem::new(Work::Error {
        cmd,
        return_error: false,
    })
    .ok();
    loop {
        t.inner.lock().buffer = None;
        let from = t.inner.lock().from.clone();
        if let Some((proc, tid)) = from {
            let mut pi = proc.inner.lock();
            if let Some(th) = pi.thread(tid) {
                if th.stack.as_ref().is_some_and(|s| Arc::ptr_eq(s, &t)) {
                    th.stack = t.from_parent.clone();
                }
                th.process_todo = true;
                if let Some(w) = w.take() {
                    // A new item: it joins the list.
                    let _ = th.todo.push_back(w);
                }
                drop(pi);
                proc.work.notify_all();
                return;
            }
        }
        match t.from_parent.clone() {
            Some(next) => t = next,
            None => return,
        }
    }
}
// ANCHOR_END: failed_reply
