//! Transactions and replies: sending one (C's `binder_transaction`) and
//! returning one to its receiver (C's `binder_thread_read`,
//! `BINDER_WORK_TRANSACTION`).

use kernel::fd::{FdReservation, FileRef};
use kernel::prelude::*;
use kernel::security;
use kernel::sync::{Arc, Mutex, MutexGuard};
use kernel::uapi::binder as uapi;
use kernel::uapi::binder::cmd::{
    BR_FAILED_REPLY, BR_REPLY, BR_TRANSACTION, BR_TRANSACTION_COMPLETE,
};
use kernel::uapi::binder::{obj, tf};
use kernel::user::UserSlice;
use kernel::{new_mutex, pin_init};

use crate::allocation::{Mapping, Object, TxnBuffer};
use crate::defs::{align8, put_u32, put_u64, u32_at, u64_at, TxnData};
use crate::error::BinderError;
use crate::node::{dec_node, inc_node, Node};
use crate::process::{Process, ProcessInner};
use crate::thread::write_user;
use crate::work::{Work, WorkItem};

// ANCHOR: transaction
/// A transaction or a reply, from its sending thread to its target.
pub(crate) struct Transaction {
    pub(crate) to_proc: Arc<Process>,
    pub(crate) target_node: Option<Arc<Node>>,
    pub(crate) from_parent: Option<Arc<Transaction>>,
    code: u32,
    pub(crate) flags: u32,
    sender_euid: u32,
    /// Lock 5 of the lock order (`page_range.rs`).
    pub(crate) inner: Mutex<TransactionInner>,
}

pub(crate) struct TransactionInner {
    /// The sending thread of a synchronous call, until it exits.
    pub(crate) from: Option<(Arc<Process>, u64)>,
    pub(crate) to_thread: Option<u64>,
    pub(crate) to_parent: Option<Arc<Transaction>>,
    /// The buffer in `to_proc`'s mapping, until freed.
    pub(crate) buffer: Option<usize>,
    /// Files to install in the receiver, and where their numbers go.
    fds: KVec<(usize, FileRef)>,
}
// ANCHOR_END: transaction

impl Transaction {
    pub(crate) fn is_oneway(&self) -> bool {
        self.flags & tf::ONE_WAY != 0
    }
}

/// Where a transaction goes.
struct Target {
    proc: Arc<Process>,
    thread: Option<u64>,
    node: Option<Arc<Node>>,
    in_reply_to: Option<Arc<Transaction>>,
}

/// A transaction that found no target, and the call it replied to, if
/// it was a reply (whose sender must hear of it).
type NoTarget = (BinderError, Option<Arc<Transaction>>);

// ANCHOR: submit
/// `BC_TRANSACTION` and `BC_REPLY` from thread `tid`: only a failure to
/// tell the sender fails the write; the transaction's own failure is
/// the sender's to read (`BR_FAILED_REPLY`, `BR_DEAD_REPLY`).
pub(crate) fn submit(this: &Arc<Process>, tid: u64, tr: &TxnData, reply: bool) -> Result {
    let target = match find_target(this, tid, tr, reply) {
        Ok(target) => target,
        Err((e, in_reply_to)) => return fail(this, tid, e, in_reply_to),
    };
    let in_reply_to = target.in_reply_to.clone();
    match send(this, tid, tr, reply, target) {
        Ok(()) => Ok(()),
        Err(e) => fail(this, tid, e, in_reply_to),
    }
}
// ANCHOR_END: submit

/// The error path's end: the sender reads `e.reply`, or, for a reply that
/// failed, `BR_TRANSACTION_COMPLETE` while the error goes to whoever
/// waits for the reply.
fn fail(
    this: &Arc<Process>,
    tid: u64,
    e: BinderError,
    in_reply_to: Option<Arc<Transaction>>,
) -> Result {
    let w = WorkItem::new(Work::Error {
        cmd: if in_reply_to.is_some() {
            BR_TRANSACTION_COMPLETE
        } else {
            e.reply
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
        send_failed_reply(t, e.reply);
    }
    Ok(())
}

fn find_target(
    this: &Arc<Process>,
    tid: u64,
    tr: &TxnData,
    reply: bool,
) -> Result<Target, NoTarget> {
    if reply {
        find_reply_target(this, tid)
    } else {
        find_call_target(this, tid, tr).map_err(|e| (e, None))
    }
}

/// A reply goes to the thread that made the call on top of `tid`'s
/// stack, which it pops.
fn find_reply_target(this: &Arc<Process>, tid: u64) -> Result<Target, NoTarget> {
    let failed = || (BinderError::new_failed(), None);
    let in_reply_to = {
        let mut inner = this.inner.lock();
        let t = inner.thread(tid).ok_or_else(failed)?;
        let top = t.stack.clone().ok_or_else(failed)?;
        let ti = top.inner.lock();
        if ti.to_thread != Some(tid) || !core::ptr::eq(&*top.to_proc, &**this) {
            return Err(failed());
        }
        t.stack = ti.to_parent.clone();
        drop(ti);
        top
    };
    let from = in_reply_to.inner.lock().from.clone();
    let Some((proc, from_tid)) = from else {
        return Err((BinderError::new_dead(), Some(in_reply_to)));
    };
    {
        let mut pi = proc.inner.lock();
        match pi.thread(from_tid) {
            None => return Err((BinderError::new_dead(), Some(in_reply_to))),
            Some(ft)
                if !ft
                    .stack
                    .as_ref()
                    .is_some_and(|s| Arc::ptr_eq(s, &in_reply_to)) =>
            {
                return Err(failed());
            }
            Some(_) => {}
        }
    }
    Ok(Target {
        proc,
        thread: Some(from_tid),
        node: None,
        in_reply_to: Some(in_reply_to),
    })
}

/// A call goes to the node of handle `tr.target` (0: the context
/// manager), which it holds a strong count on.
fn find_call_target(this: &Arc<Process>, tid: u64, tr: &TxnData) -> Result<Target, BinderError> {
    let node = if tr.target as u32 != 0 {
        let mut inner = this.inner.lock();
        let r = inner
            .ref_by_handle(tr.target as u32, true)
            .ok_or_else(BinderError::new_failed)?;
        r.node.clone()
    } else {
        let node = this.ctx.manager_node();
        let node = node.ok_or_else(BinderError::new_dead)?;
        if *node.owner.task == *this.task {
            return Err(BinderError::new_failed());
        }
        node
    };
    if core::ptr::eq(&*node.owner, &**this) {
        return Err(BinderError::new_failed());
    }
    // A strong count on the node while the transaction lives.
    {
        let mut owner = node.owner.inner.lock();
        if owner.dead || owner.node_state(&node).is_none() {
            return Err(BinderError::new_dead());
        }
        let _ = inc_node(&mut owner, &node, true, false, None);
    }
    let oneway = tr.flags & tf::ONE_WAY != 0;
    match call_thread(this, tid, oneway, &node) {
        Ok(thread) => Ok(Target {
            proc: node.owner.clone(),
            thread,
            node: Some(node),
            in_reply_to: None,
        }),
        Err(e) => {
            put_txn_node(&node);
            Err(e)
        }
    }
}

/// The thread of `node`'s owner that a call from `tid` goes to: the one
/// that waits for us, for a call back into a process that waits. A
/// synchronous call is refused while `tid` has a call to read, or is
/// handling one that was not sent to it.
fn call_thread(
    this: &Arc<Process>,
    tid: u64,
    oneway: bool,
    node: &Node,
) -> Result<Option<u64>, BinderError> {
    let mut inner = this.inner.lock();
    let t = inner.thread(tid).ok_or_else(BinderError::new_failed)?;
    if oneway {
        return Ok(None);
    }
    let first = t.todo.front();
    if first.is_some_and(|w| matches!(w.work, Work::Transaction(_))) {
        return Err(BinderError::new_failed());
    }
    let Some(top) = t.stack.clone() else {
        return Ok(None);
    };
    if top.inner.lock().to_thread != Some(tid) {
        return Err(BinderError::new_failed());
    }
    let mut cur = Some(top);
    while let Some(tx) = cur {
        let from = tx.inner.lock().from.clone();
        if let Some((p, ftid)) = from {
            if Arc::ptr_eq(&p, &node.owner) {
                return Ok(Some(ftid));
            }
        }
        cur = tx.from_parent.clone();
    }
    Ok(None)
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
    this: &Arc<Process>,
    tid: u64,
    tr: &TxnData,
    reply: bool,
    target: Target,
) -> Result<(), BinderError> {
    let oneway = !reply && tr.flags & tf::ONE_WAY != 0;
    let data_size = usize::try_from(tr.data_size).map_err(|_| BinderError::new_failed())?;
    let offsets_size = usize::try_from(tr.offsets_size).map_err(|_| BinderError::new_failed())?;
    let to = &target.proc;
    security::binder_transaction(&this.cred, &to.cred)?;
    // The buffer first: no mapping in the target means it is dying.
    let buf = {
        let mut ti = to.inner.lock();
        let map = ti.mapping.as_mut().ok_or_else(BinderError::new_dead)?;
        let offset = map
            .alloc_counted(data_size, offsets_size, oneway)
            .map_err(BinderError::from_mapping)?;
        TxnBuffer {
            pages: map.pages().clone(),
            offset,
            data_size,
            offsets_size,
        }
    };
    let offset = buf.offset;
    let free = |node: &Option<Arc<Node>>| {
        to.release_buffer(offset);
        if let Some(node) = node {
            put_txn_node(node);
        }
    };
    // Its pages, outside the lock (it takes the target's mmap_lock).
    // The target's memory gone (it exited) is C's "no vma".
    if let Err(e) = buf.populate() {
        free(&target.node);
        return Err(BinderError::from_mapping(e));
    }
    let mut fds = KVec::new();
    let mut done = 0;
    let result = translate(this, tid, tr, &target, &buf, &mut fds, &mut done);
    if let Err(e) = result {
        Process::release_objects(to, &buf, done);
        free(&target.node);
        return Err(e);
    }
    let t = new_transaction(this, tid, tr, !reply && !oneway, &target, offset, fds);
    // The buffer holds a strong count on the node until it is freed.
    let t = t.ok().filter(|_| {
        let mut ti = to.inner.lock();
        let b = ti.mapping.as_mut().and_then(|m| m.buffer_mut(offset));
        b.map(|b| b.data = target.node.clone()).is_some()
    });
    let Some(t) = t else {
        Process::release_objects(to, &buf, done);
        free(&target.node);
        return Err(BinderError::new_failed());
    };
    deliver(this, tid, t, oneway, reply, target, &buf, done)
}
// ANCHOR_END: send

/// The transaction of `tr` from thread `tid`, whose buffer is at `offset`
/// in the target's mapping: a synchronous call goes on top of the
/// sender's stack and remembers its sender.
fn new_transaction(
    this: &Arc<Process>,
    tid: u64,
    tr: &TxnData,
    sync_call: bool,
    target: &Target,
    offset: usize,
    fds: KVec<(usize, FileRef)>,
) -> Result<Arc<Transaction>> {
    let parent = if sync_call {
        this.inner.lock().thread(tid).and_then(|t| t.stack.clone())
    } else {
        None
    };
    Arc::pin_init(
        pin_init!(Transaction {
            to_proc <- target.proc.clone(),
            target_node <- target.node.clone(),
            from_parent <- parent,
            code <- tr.code,
            flags <- tr.flags,
            sender_euid <- this.task.euid(),
            inner <- new_mutex!(TransactionInner {
                from: if sync_call { Some((this.clone(), tid)) } else { None },
                to_thread: None,
                to_parent: None,
                buffer: Some(offset),
                fds,
            }, "Transaction::inner"),
        }),
        GFP_KERNEL,
    )
}

// ANCHOR: deliver_send
/// Queues `t` for its target, and its completion for the sender; on
/// failure, undoes the whole transaction (its objects' counts, its
/// buffer, its node's count).
#[expect(
    clippy::too_many_arguments,
    reason = "the transaction's parts, as `send` made them"
)]
fn deliver(
    this: &Arc<Process>,
    tid: u64,
    t: Arc<Transaction>,
    oneway: bool,
    reply: bool,
    target: Target,
    buf: &TxnBuffer,
    done: usize,
) -> Result<(), BinderError> {
    let to = &target.proc;
    let undo = || {
        Process::release_objects(to, buf, done);
        to.release_buffer(buf.offset);
        if let Some(node) = &target.node {
            put_txn_node(node);
        }
    };
    // Both work items before any lock: queueing them cannot fail.
    let items = WorkItem::new(Work::Transaction(t.clone()))
        .and_then(|w| Ok((w, WorkItem::new(Work::Complete)?)));
    let Ok((work, complete)) = items else {
        t.inner.lock().buffer = None;
        undo();
        return Err(BinderError::new_failed());
    };
    let sync_call = !reply && !oneway;
    push_complete(this, tid, &t, &complete, sync_call)?;
    let queued = {
        let mut ti = to.inner.lock();
        if ti.dead {
            Err(BinderError::new_dead())
        } else if reply {
            queue_reply(&mut ti, &target, work)
        } else if oneway {
            queue_oneway(&mut ti, &target, work)
        } else {
            queue_call(&mut ti, &target, work)
        }
    };
    match queued {
        Ok(()) => {
            to.work.notify_all();
            Ok(())
        }
        Err(e) => {
            unwind_sender(this, tid, &t, &complete, sync_call);
            t.inner.lock().buffer = None;
            undo();
            Err(e)
        }
    }
}
// ANCHOR_END: deliver_send

/// Queues the sender's `BR_TRANSACTION_COMPLETE`: a synchronous call goes
/// on the sender's stack and its completion waits in the sender's list;
/// anything else's wakes the sender.
fn push_complete(
    this: &Arc<Process>,
    tid: u64,
    t: &Arc<Transaction>,
    complete: &Arc<WorkItem>,
    sync_call: bool,
) -> Result<(), BinderError> {
    let mut inner = this.inner.lock();
    let th = inner.thread(tid).ok_or_else(BinderError::new_failed)?;
    th.todo
        .push_back(complete.clone())
        .map_err(|_| BinderError::new_failed())?;
    if sync_call {
        th.stack = Some(t.clone());
    } else {
        th.process_todo = true;
    }
    Ok(())
}

/// Undoes [`push_complete`] for a transaction that could not be queued.
fn unwind_sender(
    this: &Arc<Process>,
    tid: u64,
    t: &Arc<Transaction>,
    complete: &Arc<WorkItem>,
    sync_call: bool,
) {
    {
        let mut inner = this.inner.lock();
        if let Some(th) = inner.thread(tid) {
            th.todo.remove(complete);
        }
    }
    if sync_call {
        let mut inner = this.inner.lock();
        if let Some(th) = inner.thread(tid) {
            if th.stack.as_ref().is_some_and(|s| Arc::ptr_eq(s, t)) {
                th.stack = t.from_parent.clone();
            }
        }
    }
}

/// A reply goes to the thread that waits for it, whose stack it pops.
fn queue_reply(
    ti: &mut MutexGuard<'_, ProcessInner>,
    target: &Target,
    work: Arc<WorkItem>,
) -> Result<(), BinderError> {
    let th = target
        .thread
        .and_then(|id| ti.thread(id))
        .ok_or_else(BinderError::new_dead)?;
    if let Some(irt) = &target.in_reply_to {
        if th.stack.as_ref().is_some_and(|s| Arc::ptr_eq(s, irt)) {
            th.stack = irt.from_parent.clone();
        }
    }
    th.process_todo = true;
    th.todo
        .push_back(work)
        .map_err(|_| BinderError::new_failed())
}

/// A one-way call goes to the process, or waits behind the one its node
/// is handling.
fn queue_oneway(
    ti: &mut MutexGuard<'_, ProcessInner>,
    target: &Target,
    work: Arc<WorkItem>,
) -> Result<(), BinderError> {
    let st = target
        .node
        .as_ref()
        .and_then(|n| ti.node_state(n))
        .ok_or_else(BinderError::new_dead)?;
    let pushed = if st.has_async {
        st.async_todo.push_back(work)
    } else {
        st.has_async = true;
        ti.todo.push_back(work)
    };
    pushed.map_err(|_| BinderError::new_failed())
}

/// A synchronous call goes to the thread found for it, or the process.
fn queue_call(
    ti: &mut MutexGuard<'_, ProcessInner>,
    target: &Target,
    work: Arc<WorkItem>,
) -> Result<(), BinderError> {
    let pushed = match target.thread {
        Some(id) => {
            let th = ti.thread(id).ok_or_else(BinderError::new_dead)?;
            th.process_todo = true;
            th.todo.push_back(work)
        }
        None => ti.todo.push_back(work),
    };
    pushed.map_err(|_| BinderError::new_failed())
}

// ANCHOR: translate
/// Copies the data and offsets from the sender straight into the
/// target's buffer and translates every object there, in place;
/// `done` counts the objects translated (whose counts the error path
/// drops).
fn translate(
    this: &Arc<Process>,
    tid: u64,
    tr: &TxnData,
    target: &Target,
    buf: &TxnBuffer,
    fds: &mut KVec<(usize, FileRef)>,
    done: &mut usize,
) -> Result<(), BinderError> {
    if !buf.offsets_size.is_multiple_of(8) {
        return Err(BinderError::new_failed());
    }
    let mut r = UserSlice::new(tr.buffer as usize, buf.data_size)?.reader();
    buf.pages
        .write_from_user(buf.offset, &mut r, buf.data_size)?;
    let mut r = UserSlice::new(tr.offsets as usize, buf.offsets_size)?.reader();
    buf.pages
        .write_from_user(buf.offsets_start(), &mut r, buf.offsets_size)?;
    let mut off_min = 0usize;
    for i in 0..buf.count() {
        let mut o = buf.object(i).ok_or_else(BinderError::new_failed)?;
        if o.off < off_min {
            return Err(BinderError::new_failed());
        }
        off_min = o.off + uapi::FLAT_OBJECT_SIZE;
        match o.ty {
            obj::TYPE_BINDER | obj::TYPE_WEAK_BINDER => {
                translate_binder(this, tid, target, &mut o)?
            }
            obj::TYPE_HANDLE | obj::TYPE_WEAK_HANDLE => translate_handle(this, target, &mut o)?,
            obj::TYPE_FD => {
                // Its number is written when the receiver reads it.
                fds.push((o.off + 8, translate_fd(this, target, &o)?), GFP_KERNEL)?;
                *done = i + 1;
                continue;
            }
            _ => return Err(BinderError::new_failed()),
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

/// A node of the sender becomes a handle of the target: the node is made
/// if new, and the target's reference to it counted (its first count is
/// news for the sender thread `tid`'s list).
fn translate_binder(
    this: &Arc<Process>,
    tid: u64,
    target: &Target,
    o: &mut Object,
) -> Result<(), BinderError> {
    let b = &mut o.bytes;
    let (flags, ptr, cookie) = (u32_at(b, 4), u64_at(b, 8), u64_at(b, 16));
    security::binder_transfer_binder(&this.cred, &target.proc.cred)?;
    let node = Process::get_or_new_node(this, ptr, cookie, flags)?;
    if node.cookie != cookie {
        return Err(BinderError::new_failed());
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
    Ok(())
}

/// A handle of the sender becomes the target's own node, if the target
/// owns it, else the target's handle for the same node.
fn translate_handle(
    this: &Arc<Process>,
    target: &Target,
    o: &mut Object,
) -> Result<(), BinderError> {
    let strong = o.ty == obj::TYPE_HANDLE;
    let b = &mut o.bytes;
    security::binder_transfer_binder(&this.cred, &target.proc.cred)?;
    let node = {
        let mut inner = this.inner.lock();
        let r = inner
            .ref_by_handle(u32_at(b, 8), strong)
            .ok_or_else(BinderError::new_failed)?;
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
    Ok(())
}

/// The sender's file of a file object, if the target accepts files.
fn translate_fd(this: &Arc<Process>, target: &Target, o: &Object) -> Result<FileRef, BinderError> {
    let allowed = match &target.in_reply_to {
        Some(t) => t.flags & tf::ACCEPT_FDS != 0,
        None => target.node.as_ref().is_some_and(|n| n.accept_fds),
    };
    if !allowed {
        return Err(BinderError::new_failed());
    }
    let file = FileRef::fget(u32_at(&o.bytes, 8))?;
    security::binder_transfer_file(&this.cred, &target.proc.cred, &file)?;
    Ok(file)
}

// ANCHOR: failed_reply
/// Tells the thread waiting for `t`'s reply that none will come, or, if
/// it is gone, the one waiting further down the chain.
pub(crate) fn send_failed_reply(t: Arc<Transaction>, cmd: u32) {
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

// ANCHOR: deliver
/// Returns `t` to user space at `*ptr` (C's `BINDER_WORK_TRANSACTION` in
/// `binder_thread_read`): `BR_TRANSACTION` or `BR_REPLY`, with the
/// buffer's address in this process's mapping; passed files get their
/// numbers here, in the receiver, or the transaction fails.
pub(crate) fn deliver_to_user(
    this: &Arc<Process>,
    tid: u64,
    t: Arc<Transaction>,
    ptr: &mut usize,
) -> Result {
    let (buffer, from, fds) = {
        let mut ti = t.inner.lock();
        (ti.buffer, ti.from.clone(), core::mem::take(&mut ti.fds))
    };
    let cmd = if t.target_node.is_some() {
        BR_TRANSACTION
    } else {
        BR_REPLY
    };
    let Some(offset) = buffer else {
        return Ok(());
    };
    let sender_pid = sender_pid(&from);
    let reserved = reserve_fds(fds.len());
    let mut inner = this.inner.lock();
    let Some(map) = inner.mapping.as_mut() else {
        return Ok(());
    };
    let base = map.base;
    let reserved = match reserved {
        Some(r) if write_fd_numbers(map, offset, &fds, &r) => r,
        r => {
            drop(inner);
            drop(r);
            drop(fds);
            return refuse(t, cmd, ptr);
        }
    };
    let (data_size, offsets_size) = match map.buffer_mut(offset) {
        Some(b) => {
            b.allow_user_free = true;
            (b.data_size, b.offsets_size)
        }
        None => (0, 0),
    };
    if cmd == BR_TRANSACTION && !t.is_oneway() {
        push_on_stack(&mut inner, tid, &t);
    } else {
        t.inner.lock().buffer = None;
    }
    drop(inner);
    install_fds(reserved, fds);
    let user = base + offset;
    write_user(
        ptr,
        &returned(&t, cmd, user, data_size, offsets_size, sender_pid),
    )
}
// ANCHOR_END: deliver

/// The sender's pid as the receiver sees it, while its thread lives.
fn sender_pid(from: &Option<(Arc<Process>, u64)>) -> i32 {
    match from {
        Some((p, ftid)) if p.inner.lock().thread(*ftid).is_some() => p.task.tgid_in_current_ns(),
        _ => 0,
    }
}

/// Reserves `n` file numbers in the receiver, all or none: installing
/// them later cannot fail.
fn reserve_fds(n: usize) -> Option<KVec<FdReservation>> {
    let mut reserved = KVec::new();
    for _ in 0..n {
        let r = FdReservation::new_cloexec().ok()?;
        reserved.push(r, GFP_KERNEL).ok()?;
    }
    Some(reserved)
}

/// Writes the reserved numbers where the files' objects want them, in
/// the buffer at `offset`; whether all were written.
fn write_fd_numbers(
    map: &Mapping,
    offset: usize,
    fds: &KVec<(usize, FileRef)>,
    reserved: &KVec<FdReservation>,
) -> bool {
    let mut ok = true;
    for ((off, _), r) in fds.iter().zip(reserved.iter()) {
        if map
            .pages()
            .write(offset + off, &r.fd().to_ne_bytes())
            .is_err()
        {
            ok = false;
        }
    }
    ok
}

/// A transaction that cannot be returned (its files found no numbers):
/// a reply is `BR_FAILED_REPLY` here, a call fails for its sender.
fn refuse(t: Arc<Transaction>, cmd: u32, ptr: &mut usize) -> Result {
    if cmd == BR_REPLY {
        write_user(ptr, &BR_FAILED_REPLY.to_ne_bytes())?;
    } else if !t.is_oneway() {
        send_failed_reply(t, BR_FAILED_REPLY);
    }
    Ok(())
}

/// A synchronous call read by thread `tid` goes on top of its stack.
fn push_on_stack(inner: &mut ProcessInner, tid: u64, t: &Arc<Transaction>) {
    let old = inner.thread(tid).and_then(|th| th.stack.take());
    {
        let mut ti = t.inner.lock();
        ti.to_parent = old;
        ti.to_thread = Some(tid);
    }
    if let Some(th) = inner.thread(tid) {
        th.stack = Some(t.clone());
    }
}

/// Installs the passed files under their reserved numbers.
fn install_fds(mut reserved: KVec<FdReservation>, mut fds: KVec<(usize, FileRef)>) {
    while let (Some(r), Some((_, file))) = (reserved.pop(), fds.pop()) {
        r.commit(file);
    }
}

/// What the receiver reads: `cmd` and its `binder_transaction_data`,
/// the buffer at user address `user`.
fn returned(
    t: &Transaction,
    cmd: u32,
    user: usize,
    data_size: usize,
    offsets_size: usize,
    sender_pid: i32,
) -> [u8; 68] {
    let node = t.target_node.as_ref();
    let tr = TxnData {
        target: node.map_or(0, |n| n.ptr),
        cookie: node.map_or(0, |n| n.cookie),
        code: t.code,
        flags: t.flags,
        sender_pid,
        sender_euid: t.sender_euid,
        data_size: data_size as u64,
        offsets_size: offsets_size as u64,
        buffer: user as u64,
        offsets: (user + align8(data_size).unwrap_or(0)) as u64,
    };
    let mut out = [0u8; 68];
    put_u32(&mut out, 0, cmd);
    out[4..].copy_from_slice(&tr.to_bytes());
    out
}
