//! A process: one open of the device, with its threads, nodes,
//! references, death notifications and mapping (C's `binder_proc`), and
//! the write half of `BINDER_WRITE_READ` (C's `binder_thread_write`).
//!
//! Each process has one mutex over all of its state (lock 4 of the lock
//! order, at the top of `page_range.rs`) and one condition variable that
//! every change to its work notifies. A node's counts live in its owner's
//! state. No code holds two process locks at once.

use kernel::cred::Credential;
use kernel::file::{File, IoctlCommand, PollTable, POLLIN};
use kernel::list::List;
use kernel::mm::{flags as vm, Vma};
use kernel::page::PAGE_SIZE;
use kernel::prelude::*;
use kernel::rbtree::RBTree;
use kernel::sync::{Arc, CondVar, Mutex};
use kernel::task::{Task, TaskRef};
use kernel::uapi::binder as uapi;
use kernel::uapi::binder::cmd::{
    BC_ACQUIRE, BC_ACQUIRE_DONE, BC_ACQUIRE_RESULT, BC_ATTEMPT_ACQUIRE,
    BC_CLEAR_DEATH_NOTIFICATION, BC_DEAD_BINDER_DONE, BC_DECREFS, BC_ENTER_LOOPER, BC_EXIT_LOOPER,
    BC_FREE_BUFFER, BC_INCREFS, BC_INCREFS_DONE, BC_REGISTER_LOOPER, BC_RELEASE, BC_REPLY,
    BC_REQUEST_DEATH_NOTIFICATION, BC_TRANSACTION,
};
use kernel::uapi::binder::obj;
use kernel::user::UserSlice;
use kernel::workqueue;
use kernel::{new_condvar, new_mutex, new_work, pin_init, security};

use crate::allocation::{Mapping, TxnBuffer};
use crate::context::Context;
use crate::defs::{put_u32, u32_at, u64_at, TxnData, WriteRead};
use crate::node::{dec_node, inc_node, Death, DeathKind, Node, NodeState, Ref};
use crate::page_range::Pages;
use crate::thread::{
    self, Thread, LOOPER_ENTERED, LOOPER_EXITED, LOOPER_INVALID, LOOPER_POLL, LOOPER_REGISTERED,
};
use crate::transaction;
use crate::work::WorkItem;

/// The largest mapping: more is accepted and the rest left unused.
const MAX_MAP: usize = 4 << 20;

// ANCHOR: process
/// A process: one open of the device.
pub(crate) struct Process {
    pub(crate) ctx: Arc<Context>,
    /// The opener's thread group leader (C's `proc->tsk`): the process's
    /// ids are its ids.
    pub(crate) task: TaskRef,
    /// Who opened the device (C's `proc->cred`), for the LSM hooks.
    pub(crate) cred: Credential,
    /// Lock 4 of the lock order (`page_range.rs`).
    pub(crate) inner: Mutex<ProcessInner>,
    /// Notified whenever work is queued (threads and `poll` wait on it).
    pub(crate) work: CondVar,
    /// Runs the teardown after the last close (C's `deferred_work`).
    deferred: workqueue::Work<Process>,
}
// ANCHOR_END: process

/// A process's state, under its lock.
pub(crate) struct ProcessInner {
    pub(crate) dead: bool,
    next_id: u64,
    pub(crate) threads: KVec<Thread>,
    pub(crate) todo: List<WorkItem>,
    /// By `ptr`, which is unique among a process's live nodes.
    pub(crate) nodes: RBTree<u64, NodeState>,
    /// References by handle, and the handle of each by node id.
    refs: RBTree<u32, Ref>,
    refs_by_node: RBTree<u64, u32>,
    pub(crate) deaths: KVec<Death>,
    pub(crate) mapping: Option<Mapping>,
    mapped: bool,
    pub(crate) max_threads: u32,
    pub(crate) requested_threads: u32,
    pub(crate) requested_threads_started: u32,
    pub(crate) waiting_threads: u32,
}

impl ProcessInner {
    pub(crate) fn thread(&mut self, id: u64) -> Option<&mut Thread> {
        self.threads.iter_mut().find(|t| t.id == id)
    }

    /// The node's state while it lives (a node that died may have left
    /// its `ptr` to a new one).
    pub(crate) fn node_state(&mut self, node: &Node) -> Option<&mut NodeState> {
        self.nodes
            .get_mut(&node.ptr)
            .filter(|n| n.node.id == node.id)
    }

    pub(crate) fn death(&mut self, id: u64) -> Option<&mut Death> {
        self.deaths.iter_mut().find(|d| d.id == id)
    }

    pub(crate) fn ref_by_handle(&mut self, handle: u32, need_strong: bool) -> Option<&mut Ref> {
        let r = self.refs.get_mut(&handle)?;
        if need_strong && r.strong == 0 {
            return None;
        }
        Some(r)
    }

    pub(crate) fn ref_by_node(&mut self, node: &Node) -> Option<&mut Ref> {
        let handle = *self.refs_by_node.get(&node.id)?;
        self.refs.get_mut(&handle)
    }

    pub(crate) fn remove_ref(&mut self, handle: u32) -> Option<Ref> {
        let r = self.refs.remove(&handle)?;
        self.refs_by_node.remove(&r.node.id);
        Some(r)
    }

    /// Takes `w` (a node's or a death's work) out of whichever list of
    /// this process holds it, if one does.
    pub(crate) fn dequeue(&mut self, w: &WorkItem) {
        if self.todo.remove(w).is_some() {
            return;
        }
        for t in self.threads.iter_mut() {
            if t.todo.remove(w).is_some() {
                return;
            }
        }
    }

    /// Queues a death's work to the thread if it is a looper, else to the
    /// process. Its work is in no list.
    pub(crate) fn queue_death(&mut self, thread: Option<u64>, w: Arc<WorkItem>) -> Result {
        if let Some(t) = thread.and_then(|tid| self.thread(tid)) {
            if t.looper & (LOOPER_REGISTERED | LOOPER_ENTERED) != 0 {
                t.todo.push_back(w).map_err(|_| EINVAL)?;
                t.process_todo = true;
                return Ok(());
            }
        }
        self.todo.push_back(w).map_err(|_| EINVAL)
    }
}

impl Process {
    pub(crate) fn new(ctx: Arc<Context>, cred: Credential) -> Result<Arc<Process>> {
        Arc::pin_init(
            pin_init!(Process {
                ctx <- ctx,
                task <- TaskRef::from(Task::current().group_leader()),
                cred <- cred,
                inner <- new_mutex!(ProcessInner {
                    dead: false,
                    next_id: 1,
                    threads: KVec::new(),
                    todo: List::new(),
                    nodes: RBTree::new(),
                    refs: RBTree::new(),
                    refs_by_node: RBTree::new(),
                    deaths: KVec::new(),
                    mapping: None,
                    mapped: false,
                    max_threads: 0,
                    requested_threads: 0,
                    requested_threads_started: 0,
                    waiting_threads: 0,
                }, "Process::inner"),
                work <- new_condvar!("Process::work"),
                deferred <- new_work!("Process::deferred"),
            }),
            GFP_KERNEL,
        )
    }

    /// The calling thread's id, made on first use (C's `binder_get_thread`).
    fn thread_id(inner: &mut ProcessInner) -> Result<u64> {
        let pid = Task::current().pid();
        if let Some(t) = inner.threads.iter().find(|t| t.pid == pid) {
            return Ok(t.id);
        }
        let id = inner.next_id;
        inner.next_id += 1;
        inner.threads.push(Thread::new(id, pid), GFP_KERNEL)?;
        Ok(id)
    }

    // ANCHOR: mmap
    pub(crate) fn mmap(this: &Arc<Self>, vma: &mut Vma) -> Result {
        if *Task::current().group_leader() != *this.task {
            return Err(EINVAL);
        }
        if vma.flags() & vm::WRITE != 0 {
            return Err(EPERM);
        }
        vma.set_dontcopy();
        vma.set_mixedmap();
        vma.try_clear_maywrite()?;
        vma.set_inserted_pages_only();
        let mut inner = this.inner.lock();
        if inner.mapped {
            return Err(EBUSY);
        }
        // No pages yet: a buffer's are made when it is allocated. The
        // process's address marks the area as ours.
        let size = (vma.end() - vma.start()).min(MAX_MAP);
        let mark = &**this as *const Process as usize;
        let pages = Pages::new(vma, mark, size / PAGE_SIZE)?;
        inner.mapping = Some(Mapping::new(vma.start(), size, pages.clone())?);
        inner.mapped = true;
        // Its freed buffers' pages may be reclaimed (until release).
        this.ctx.reclaim.add(pages);
        Ok(())
    }
    // ANCHOR_END: mmap

    /// A `close` of the device (C's `binder_flush`): every thread returns
    /// to user space from the read it may be waiting in, with nothing
    /// read, so that a thread of the closing process does not sleep on.
    pub(crate) fn flush(this: &Arc<Self>) {
        let mut inner = this.inner.lock();
        for t in inner.threads.iter_mut() {
            t.need_return = true;
        }
        drop(inner);
        this.work.notify_all();
    }

    pub(crate) fn poll<'a>(this: &'a Arc<Self>, table: &PollTable<'a>) -> Result<u32> {
        let mut inner = this.inner.lock();
        let tid = Process::thread_id(&mut inner)?;
        let proc_work = {
            let t = inner.thread(tid).ok_or(EINVAL)?;
            t.looper |= LOOPER_POLL;
            t.available_for_proc_work()
        };
        table.register(&this.work);
        Ok(if thread::has_work(&mut inner, tid, proc_work) {
            POLLIN
        } else {
            0
        })
    }

    // ANCHOR: ioctl
    pub(crate) fn ioctl(this: &Arc<Self>, file: &File, cmd: IoctlCommand) -> Result<i32> {
        let tid = {
            let mut inner = this.inner.lock();
            Process::thread_id(&mut inner)?
        };
        let result = match cmd.cmd {
            uapi::WRITE_READ => Process::write_read(this, file, tid, cmd.arg),
            uapi::SET_MAX_THREADS => {
                let mut r = UserSlice::new(cmd.arg, 4)?.reader();
                let max = r.read_bytes::<4>().map_err(|_| EINVAL)?;
                this.inner.lock().max_threads = u32::from_ne_bytes(max);
                Ok(())
            }
            uapi::SET_CONTEXT_MGR_EXT => {
                let mut r = UserSlice::new(cmd.arg, 24)?.reader();
                let fbo = r.read_bytes::<24>().map_err(|_| EINVAL)?;
                Process::set_context_mgr(this, u64_at(&fbo, 8), u64_at(&fbo, 16), u32_at(&fbo, 4))
            }
            uapi::SET_CONTEXT_MGR => Process::set_context_mgr(this, 0, 0, 0),
            uapi::THREAD_EXIT => {
                thread::exit(this, tid);
                return Ok(0);
            }
            uapi::VERSION => {
                let mut w = UserSlice::new(cmd.arg, 4)?.writer();
                w.write_slice(&uapi::CURRENT_PROTOCOL_VERSION.to_ne_bytes())
                    .map_err(|_| EINVAL)
            }
            uapi::GET_NODE_INFO_FOR_REF => Process::node_info_for_ref(this, cmd.arg),
            _ => Err(EINVAL),
        };
        if let Some(t) = this.inner.lock().thread(tid) {
            t.need_return = false;
        }
        result.map(|()| 0)
    }
    // ANCHOR_END: ioctl

    fn set_context_mgr(this: &Arc<Self>, ptr: u64, cookie: u64, flags: u32) -> Result {
        let mut mgr = this.ctx.manager.lock();
        if mgr.node.is_some() {
            return Err(EBUSY);
        }
        security::binder_set_context_mgr(&this.cred)?;
        let euid = Task::current().euid();
        match mgr.uid {
            Some(uid) if uid != euid => return Err(EPERM),
            _ => mgr.uid = Some(euid),
        }
        // The node is made with the process lock dropped; a buffer freed
        // meanwhile by another thread may have released it again, so the
        // counts are taken on the node found under the lock, or it is made
        // again (C holds a temporary reference instead).
        let node = loop {
            let node = Process::get_or_new_node(this, ptr, cookie, flags)?;
            let mut inner = this.inner.lock();
            if let Some(st) = inner.node_state(&node) {
                st.local_weak += 1;
                st.local_strong += 1;
                st.has_strong = true;
                st.has_weak = true;
                st.is_manager = true;
                break node;
            }
        };
        mgr.node = Some(node);
        Ok(())
    }

    /// The process's node for `ptr`, made if there is none: what a new
    /// one needs is allocated before the lock is taken again.
    pub(crate) fn get_or_new_node(
        this: &Arc<Self>,
        ptr: u64,
        cookie: u64,
        flags: u32,
    ) -> Result<Arc<Node>> {
        if let Some(st) = this.inner.lock().nodes.get(&ptr) {
            return Ok(st.node.clone());
        }
        let reservation = RBTree::try_reserve_node(GFP_KERNEL)?;
        let (node, work) = Node::new(this.clone(), ptr, cookie, flags)?;
        let mut inner = this.inner.lock();
        // Another thread may have made it meanwhile.
        if let Some(st) = inner.nodes.get(&ptr) {
            return Ok(st.node.clone());
        }
        inner
            .nodes
            .insert(reservation, ptr, NodeState::new(node.clone(), work));
        Ok(node)
    }

    fn node_info_for_ref(this: &Arc<Self>, arg: usize) -> Result {
        let mut info = UserSlice::new(arg, 24)?.reader().read_bytes::<24>()?;
        if info[4..].iter().any(|&b| b != 0) {
            return Err(EINVAL);
        }
        let is_mgr = this
            .ctx
            .manager_node()
            .is_some_and(|n| core::ptr::eq(&*n.owner, &**this));
        if !is_mgr {
            return Err(EPERM);
        }
        let node = {
            let mut inner = this.inner.lock();
            let r = inner.ref_by_handle(u32_at(&info, 0), true).ok_or(EINVAL)?;
            r.node.clone()
        };
        let (strong, weak) = {
            let mut owner = node.owner.inner.lock();
            owner.node_state(&node).map_or((0, 0), |st| {
                (st.local_strong + st.internal_strong, st.local_weak)
            })
        };
        put_u32(&mut info, 4, strong);
        put_u32(&mut info, 8, weak);
        UserSlice::new(arg, 24)?.writer().write_slice(&info)
    }

    // ANCHOR: write_read
    fn write_read(this: &Arc<Self>, file: &File, tid: u64, arg: usize) -> Result {
        let bytes = UserSlice::new(arg, 48)?.reader().read_bytes::<48>()?;
        let mut bwr = WriteRead::from_bytes(&bytes);
        if bwr.write_size > 0 {
            if let Err(e) = Process::thread_write(this, tid, &mut bwr) {
                bwr.read_consumed = 0;
                UserSlice::new(arg, 48)?
                    .writer()
                    .write_slice(&bwr.to_bytes())?;
                return Err(e);
            }
        }
        if bwr.read_size > 0 {
            let nonblock = file.flags() & kernel::file::flags::O_NONBLOCK != 0;
            let ret = thread::read(this, tid, &mut bwr, nonblock);
            if !this.inner.lock().todo.is_empty() {
                this.work.notify_all();
            }
            if let Err(e) = ret {
                UserSlice::new(arg, 48)?
                    .writer()
                    .write_slice(&bwr.to_bytes())?;
                return Err(e);
            }
        }
        UserSlice::new(arg, 48)?
            .writer()
            .write_slice(&bwr.to_bytes())
    }
    // ANCHOR_END: write_read

    fn thread_write(this: &Arc<Self>, tid: u64, bwr: &mut WriteRead) -> Result {
        let buffer = bwr.write_buffer as usize;
        // As C computes it: a size that wraps makes `end` fall before the
        // start, and nothing is written.
        let end = buffer.wrapping_add(bwr.write_size as usize);
        loop {
            let mut at = buffer.wrapping_add(bwr.write_consumed as usize);
            if at >= end {
                return Ok(());
            }
            if this.inner.lock().thread(tid).is_none_or(|t| t.return_error) {
                return Ok(());
            }
            let cmd = read_user_u32(&mut at)?;
            Process::command(this, tid, cmd, &mut at)?;
            bwr.write_consumed = at.wrapping_sub(buffer) as u64;
        }
    }

    // ANCHOR: command
    /// One `BC_*` command; its arguments follow it at `*at`, which moves
    /// past them. Only a bad user pointer or an unknown command fails the
    /// whole write; misuse is ignored, as C ignores it.
    fn command(this: &Arc<Self>, tid: u64, cmd: u32, at: &mut usize) -> Result {
        match cmd {
            BC_INCREFS | BC_ACQUIRE | BC_RELEASE | BC_DECREFS => {
                let handle = read_user_u32(at)?;
                let strong = cmd == BC_ACQUIRE || cmd == BC_RELEASE;
                let increment = cmd == BC_INCREFS || cmd == BC_ACQUIRE;
                Process::update_ref(this, handle, increment, strong)?;
            }
            BC_INCREFS_DONE | BC_ACQUIRE_DONE => {
                let ptr = read_user_u64(at)?;
                let cookie = read_user_u64(at)?;
                Process::ref_done(this, ptr, cookie, cmd == BC_ACQUIRE_DONE);
            }
            BC_ATTEMPT_ACQUIRE | BC_ACQUIRE_RESULT => return Err(EINVAL),
            BC_FREE_BUFFER => {
                let ptr = read_user_u64(at)?;
                Process::free_buffer(this, ptr as usize);
            }
            BC_TRANSACTION | BC_REPLY => {
                let tr = read_user_txn(at)?;
                transaction::submit(this, tid, &tr, cmd == BC_REPLY)?;
            }
            BC_REGISTER_LOOPER | BC_ENTER_LOOPER | BC_EXIT_LOOPER => {
                Process::looper(this, tid, cmd);
            }
            BC_REQUEST_DEATH_NOTIFICATION | BC_CLEAR_DEATH_NOTIFICATION => {
                let handle = read_user_u32(at)?;
                let cookie = read_user_u64(at)?;
                Process::death_notification(
                    this,
                    tid,
                    handle,
                    cookie,
                    cmd == BC_REQUEST_DEATH_NOTIFICATION,
                )?;
            }
            BC_DEAD_BINDER_DONE => {
                let cookie = read_user_u64(at)?;
                Process::dead_binder_done(this, tid, cookie)?;
            }
            _ => return Err(EINVAL),
        }
        Ok(())
    }
    // ANCHOR_END: command

    /// `BC_REGISTER_LOOPER`, `BC_ENTER_LOOPER`, `BC_EXIT_LOOPER`: a looper
    /// registers (asked for by `BR_SPAWN_LOOPER`) or enters on its own,
    /// never both.
    fn looper(this: &Arc<Self>, tid: u64, cmd: u32) {
        let mut inner = this.inner.lock();
        let (requested, started) = (inner.requested_threads, inner.requested_threads_started);
        let mut delta = (0, 0);
        if let Some(t) = inner.thread(tid) {
            if cmd == BC_REGISTER_LOOPER {
                if t.looper & LOOPER_ENTERED != 0 || requested == 0 {
                    t.looper |= LOOPER_INVALID;
                } else {
                    delta = (1, 1);
                }
                t.looper |= LOOPER_REGISTERED;
            } else if cmd == BC_ENTER_LOOPER {
                if t.looper & LOOPER_REGISTERED != 0 {
                    t.looper |= LOOPER_INVALID;
                }
                t.looper |= LOOPER_ENTERED;
            } else {
                t.looper |= LOOPER_EXITED;
            }
        }
        inner.requested_threads = requested - delta.0;
        inner.requested_threads_started = started + delta.1;
    }

    /// `BC_DEAD_BINDER_DONE`: the delivered notification of `cookie` is
    /// done with; one cleared meanwhile now says so.
    fn dead_binder_done(this: &Arc<Self>, tid: u64, cookie: u64) -> Result {
        let mut inner = this.inner.lock();
        let Some(i) = inner
            .deaths
            .iter()
            .position(|d| d.delivered && d.cookie == cookie)
        else {
            return Ok(());
        };
        let d = &mut inner.deaths[i];
        d.delivered = false;
        if d.kind == DeathKind::DeadAndClear {
            d.kind = DeathKind::Clear;
            let w = d.work.clone();
            inner.queue_death(Some(tid), w)?;
            drop(inner);
            this.work.notify_all();
        } else if !d.attached {
            inner.deaths.remove(i);
        }
        Ok(())
    }

    /// `BC_INCREFS`, `BC_ACQUIRE`, `BC_RELEASE`, `BC_DECREFS`.
    fn update_ref(this: &Arc<Self>, handle: u32, increment: bool, strong: bool) -> Result {
        let mut done = false;
        if increment && handle == 0 {
            let mgr = this.ctx.manager_node();
            if let Some(node) = mgr {
                if core::ptr::eq(&*node.owner, &**this) {
                    return Err(EINVAL);
                }
                done = Process::inc_ref_for_node(this, &node, strong, None).is_ok();
            }
        }
        if !done {
            if increment {
                let node = {
                    let mut inner = this.inner.lock();
                    let Some(r) = inner.ref_by_handle(handle, strong) else {
                        return Ok(());
                    };
                    r.node.clone()
                };
                let _ = Process::inc_ref_for_node(this, &node, strong, None);
            } else {
                Process::dec_ref_for_handle(this, handle, strong);
            }
        }
        Ok(())
    }

    // ANCHOR: inc_ref
    /// Takes a reference (strong or weak) from this process on `node`,
    /// making one with the lowest free handle if there is none; the node
    /// hears of a first reference in `thread`'s list, if given. Returns
    /// the handle.
    pub(crate) fn inc_ref_for_node(
        this: &Arc<Self>,
        node: &Arc<Node>,
        strong: bool,
        thread: Option<u64>,
    ) -> Result<u32> {
        let (handle, first, new) = Process::get_or_new_ref(this, node, strong)?;
        if first || new {
            let mut owner = node.owner.inner.lock();
            if new {
                if let Some(st) = owner.node_state(node) {
                    st.holders.push(this.clone(), GFP_KERNEL)?;
                }
            }
            if first {
                if let Err(e) = inc_node(&mut owner, node, strong, true, thread) {
                    drop(owner);
                    if new {
                        Process::drop_new_ref(this, node);
                    }
                    return Err(e);
                }
            }
        }
        let mut inner = this.inner.lock();
        if let Some(r) = inner.ref_by_node(node) {
            if strong {
                r.strong += 1;
            } else {
                r.weak += 1;
            }
        }
        Ok(handle)
    }

    /// This process's reference to `node`, made with the lowest free
    /// handle if there is none. Returns its handle, whether the count
    /// taken (strong or weak) is its first, and whether it is new.
    fn get_or_new_ref(
        this: &Arc<Self>,
        node: &Arc<Node>,
        strong: bool,
    ) -> Result<(u32, bool, bool)> {
        let is_mgr = this.ctx.manager_node().is_some_and(|m| m.id == node.id);
        // A new reference's tree nodes are reserved with no lock held,
        // the first time round, if there is no reference yet.
        let mut reserved = None;
        loop {
            let mut inner = this.inner.lock();
            let (handle, new) = match inner.refs_by_node.get(&node.id) {
                Some(&handle) => (handle, false),
                None => {
                    let Some((by_handle, by_node)) = reserved.take() else {
                        drop(inner);
                        reserved = Some((
                            RBTree::try_reserve_node(GFP_KERNEL)?,
                            RBTree::try_reserve_node(GFP_KERNEL)?,
                        ));
                        continue;
                    };
                    // The lowest free handle; 0 only for the manager.
                    let mut handle = if is_mgr { 0 } else { 1 };
                    for (&h, _) in inner.refs.iter() {
                        if h > handle {
                            break;
                        }
                        handle = h + 1;
                    }
                    let r = Ref {
                        handle,
                        node: node.clone(),
                        strong: 0,
                        weak: 0,
                        death: None,
                    };
                    inner.refs.insert(by_handle, handle, r);
                    inner.refs_by_node.insert(by_node, node.id, handle);
                    (handle, true)
                }
            };
            let r = inner.refs.get_mut(&handle).ok_or(EINVAL)?;
            let first = if strong { r.strong == 0 } else { r.weak == 0 };
            return Ok((handle, first, new));
        }
    }
    // ANCHOR_END: inc_ref

    /// Undoes a reference just made whose node refused the count.
    fn drop_new_ref(this: &Arc<Self>, node: &Arc<Node>) {
        {
            let mut inner = this.inner.lock();
            let unused = inner
                .ref_by_node(node)
                .filter(|r| r.strong == 0 && r.weak == 0)
                .map(|r| r.handle);
            if let Some(handle) = unused {
                inner.remove_ref(handle);
            }
        }
        let mut owner = node.owner.inner.lock();
        if let Some(st) = owner.node_state(node) {
            if let Some(i) = st.holders.iter().position(|p| core::ptr::eq(&**p, &**this)) {
                st.holders.remove(i);
            }
        }
    }

    /// Drops a count of the reference `handle`, and the reference with
    /// its last count.
    fn dec_ref_for_handle(this: &Arc<Self>, handle: u32, strong: bool) {
        let (node, dec_strong, cleanup) = {
            let mut inner = this.inner.lock();
            let Some(r) = inner.ref_by_handle(handle, strong) else {
                return;
            };
            let mut dec_strong = false;
            if strong {
                r.strong -= 1;
                dec_strong = r.strong == 0;
            } else if r.weak == 0 {
                return;
            } else {
                r.weak -= 1;
            }
            let cleanup = r.strong == 0 && r.weak == 0;
            let node = r.node.clone();
            if cleanup {
                if let Some(r) = inner.remove_ref(handle) {
                    if let Some(id) = r.death {
                        Process::detach_death(&mut inner, id);
                    }
                }
            }
            (node, dec_strong, cleanup)
        };
        Process::put_ref_counts(this, &node, dec_strong, cleanup);
    }

    /// Drops in `node`'s owner what a reference of `this` held: a strong
    /// count if `strong`, and, if the reference is gone (`last`), `this`
    /// as a holder and the weak count every reference holds.
    fn put_ref_counts(this: &Arc<Self>, node: &Arc<Node>, strong: bool, last: bool) {
        let wake = {
            let mut owner = node.owner.inner.lock();
            let mut wake = strong && dec_node(&mut owner, node, true, true);
            if last {
                if let Some(st) = owner.node_state(node) {
                    if let Some(i) = st.holders.iter().position(|p| core::ptr::eq(&**p, &**this)) {
                        st.holders.remove(i);
                    }
                }
                wake |= dec_node(&mut owner, node, false, true);
            }
            wake
        };
        if wake {
            node.owner.work.notify_all();
        }
    }

    /// A reference with a death notification goes away: the notification
    /// is dropped with it, unless it was delivered and awaits its done.
    fn detach_death(inner: &mut ProcessInner, id: u64) {
        if let Some(w) = inner.death(id).map(|d| d.work.clone()) {
            inner.dequeue(&w);
        }
        if let Some(i) = inner.deaths.iter().position(|d| d.id == id) {
            if inner.deaths[i].delivered {
                inner.deaths[i].attached = false;
            } else {
                inner.deaths.remove(i);
            }
        }
    }

    /// `BC_INCREFS_DONE`, `BC_ACQUIRE_DONE`.
    fn ref_done(this: &Arc<Self>, ptr: u64, cookie: u64, strong: bool) {
        let mut inner = this.inner.lock();
        let Some(st) = inner.nodes.get_mut(&ptr) else {
            return;
        };
        if st.node.cookie != cookie {
            return;
        }
        if strong {
            if !st.pending_strong {
                return;
            }
            st.pending_strong = false;
        } else {
            if !st.pending_weak {
                return;
            }
            st.pending_weak = false;
        }
        let node = st.node.clone();
        if dec_node(&mut inner, &node, strong, false) {
            drop(inner);
            this.work.notify_all();
        }
    }

    /// `BC_REQUEST_DEATH_NOTIFICATION`, `BC_CLEAR_DEATH_NOTIFICATION`.
    fn death_notification(
        this: &Arc<Self>,
        tid: u64,
        handle: u32,
        cookie: u64,
        request: bool,
    ) -> Result {
        if request {
            Process::request_death(this, handle, cookie)
        } else {
            Process::clear_death(this, tid, handle, cookie)
        }
    }

    /// Registers a death notification on the reference `handle`; it
    /// fires at once if the node's owner is already gone.
    fn request_death(this: &Arc<Self>, handle: u32, cookie: u64) -> Result {
        // The notification's work, made before the lock is taken.
        let (id, work) = Death::new_work()?;
        let mut inner = this.inner.lock();
        let Some(r) = inner.ref_by_handle(handle, false) else {
            return Ok(());
        };
        let node = r.node.clone();
        if r.death.is_some() {
            return Ok(());
        }
        r.death = Some(id);
        let death = Death {
            id,
            cookie,
            kind: DeathKind::Dead,
            delivered: false,
            attached: true,
            work,
        };
        if let Err(e) = inner.deaths.push(death, GFP_KERNEL) {
            if let Some(r) = inner.ref_by_handle(handle, false) {
                r.death = None;
            }
            return Err(e.into());
        }
        drop(inner);
        // A node whose owner is gone: the notification fires at once.
        let dead = node.owner.inner.lock().dead;
        if dead {
            let mut inner = this.inner.lock();
            if let Some(d) = inner.death(id) {
                let w = d.work.clone();
                // Refused only if the owner's release queued it meanwhile.
                let _ = inner.todo.push_back(w);
            }
            drop(inner);
            this.work.notify_all();
        }
        Ok(())
    }

    /// Clears the death notification of `cookie` on the reference
    /// `handle`: `BR_CLEAR_DEATH_NOTIFICATION_DONE` now, or after the
    /// `BR_DEAD_BINDER` under way is done with.
    fn clear_death(this: &Arc<Self>, tid: u64, handle: u32, cookie: u64) -> Result {
        let mut inner = this.inner.lock();
        let Some(r) = inner.ref_by_handle(handle, false) else {
            return Ok(());
        };
        let Some(did) = r.death else {
            return Ok(());
        };
        let Some(d) = inner.death(did) else {
            return Ok(());
        };
        if d.cookie != cookie {
            return Ok(());
        }
        d.attached = false;
        if let Some(r) = inner.ref_by_handle(handle, false) {
            r.death = None;
        }
        let d = inner.death(did).ok_or(EINVAL)?;
        if !d.work.is_queued() && !d.delivered {
            d.kind = DeathKind::Clear;
            let w = d.work.clone();
            inner.queue_death(Some(tid), w)?;
            drop(inner);
            this.work.notify_all();
        } else {
            d.kind = DeathKind::DeadAndClear;
        }
        Ok(())
    }

    /// `BC_FREE_BUFFER`.
    fn free_buffer(this: &Arc<Self>, ptr: usize) {
        let (offset, objects, target_node, next_async) = {
            let mut inner = this.inner.lock();
            let Some(map) = inner.mapping.as_mut() else {
                return;
            };
            let offset = ptr.wrapping_sub(map.base);
            let Some(b) = map.buffer_mut(offset) else {
                return;
            };
            if !b.allow_user_free {
                return;
            }
            let (ds, os, is_async) = (b.data_size, b.offsets_size, b.is_async);
            let node = b.data.clone();
            // Only a buffer with objects has references to release; they
            // are read after the lock is dropped.
            let objects = (os > 0).then(|| TxnBuffer {
                pages: map.pages().clone(),
                offset,
                data_size: ds,
                offsets_size: os,
            });
            // The next one-way transaction to the node may go now: its
            // work item moves to the process's list.
            let mut next_async = None;
            if is_async {
                if let Some(node) = &node {
                    if let Some(st) = inner.node_state(node) {
                        if st.async_todo.is_empty() {
                            st.has_async = false;
                        } else {
                            next_async = st.async_todo.pop_front();
                        }
                    }
                }
            }
            let next_async = next_async.is_some_and(|w| inner.todo.push_back(w).is_ok());
            (offset, objects, node, next_async)
        };
        if next_async {
            this.work.notify_all();
        }
        if let Some(buf) = &objects {
            Process::release_objects(this, buf, buf.count());
        }
        if let Some(node) = &target_node {
            let wake = dec_node(&mut node.owner.inner.lock(), node, true, false);
            if wake {
                node.owner.work.notify_all();
            }
        }
        this.release_buffer(offset);
    }

    /// Gives the buffer at `offset` back to the allocator, uncounted from
    /// its pages, unless the mapping is gone (teardown freed it).
    pub(crate) fn release_buffer(&self, offset: usize) {
        let mut inner = self.inner.lock();
        if let Some(map) = inner.mapping.as_mut() {
            drop(map.free_counted(offset));
        }
    }

    // ANCHOR: release_objects
    /// Drops the counts that the first `count` objects of a buffer of
    /// this process hold (C's `binder_transaction_buffer_release`).
    pub(crate) fn release_objects(this: &Arc<Self>, buf: &TxnBuffer, count: usize) {
        for o in (0..count).filter_map(|i| buf.object(i)) {
            match o.ty {
                obj::TYPE_BINDER | obj::TYPE_WEAK_BINDER => {
                    let ptr = u64_at(&o.bytes, 8);
                    let mut inner = this.inner.lock();
                    let node = inner.nodes.get(&ptr).map(|n| n.node.clone());
                    if let Some(node) = node {
                        if dec_node(&mut inner, &node, o.ty == obj::TYPE_BINDER, false) {
                            drop(inner);
                            this.work.notify_all();
                        }
                    }
                }
                obj::TYPE_HANDLE | obj::TYPE_WEAK_HANDLE => {
                    Process::dec_ref_for_handle(
                        this,
                        u32_at(&o.bytes, 8),
                        o.ty == obj::TYPE_HANDLE,
                    );
                }
                _ => {}
            }
        }
    }
    // ANCHOR_END: release_objects
}

impl Process {
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
        this.ctx.forget_manager(this);
        let (mut threads, mut todo, nodes, refs) = {
            let mut inner = this.inner.lock();
            inner.dead = true;
            inner.refs_by_node = RBTree::new();
            (
                core::mem::take(&mut inner.threads),
                core::mem::take(&mut inner.todo),
                core::mem::take(&mut inner.nodes),
                core::mem::take(&mut inner.refs),
            )
        };
        while let Some(th) = threads.pop() {
            thread::release(this, th);
        }
        Process::kill_nodes(nodes);
        // Every reference goes, by handle as in C.
        let mut refs = refs;
        while let Some(r) = refs.first().map(|(&h, _)| h).and_then(|h| refs.remove(&h)) {
            Process::put_ref_counts(this, &r.node, r.strong > 0, true);
        }
        thread::release_work(&mut todo);
        Process::free_mapping(this);
    }

    /// Every node of a released process dies, by `ptr` as in C; holders
    /// that asked hear of it.
    fn kill_nodes(mut nodes: RBTree<u64, NodeState>) {
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
    }

    /// Frees a released process's buffers (their target nodes' strong
    /// counts go) and its mapping, whose pages leave the shrinker's list.
    fn free_mapping(this: &Arc<Self>) {
        let mut inner = this.inner.lock();
        inner.deaths = KVec::new();
        let mut nodes = KVec::new();
        if let Some(map) = inner.mapping.as_mut() {
            let mut offsets = KVec::new();
            for o in map.allocated() {
                if offsets.push(o, GFP_KERNEL).is_err() {
                    break;
                }
            }
            for &o in offsets.iter() {
                if let Some(n) = map.free_counted(o) {
                    let _ = nodes.push(n, GFP_KERNEL);
                }
            }
        }
        let pages = inner.mapping.take().map(|m| m.pages().clone());
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

// ANCHOR: deferred_work
kernel::impl_has_work!(Process, deferred);

impl workqueue::WorkItem for Process {
    fn run(this: Arc<Self>) {
        Process::deferred_release(&this);
    }
}
// ANCHOR_END: deferred_work

fn read_user_u32(at: &mut usize) -> Result<u32> {
    let b = UserSlice::new(*at, 4)?.reader().read_bytes::<4>()?;
    *at = at.wrapping_add(4);
    Ok(u32::from_ne_bytes(b))
}

fn read_user_u64(at: &mut usize) -> Result<u64> {
    let b = UserSlice::new(*at, 8)?.reader().read_bytes::<8>()?;
    *at = at.wrapping_add(8);
    Ok(u64::from_ne_bytes(b))
}

fn read_user_txn(at: &mut usize) -> Result<TxnData> {
    let b = UserSlice::new(*at, 64)?.reader().read_bytes::<64>()?;
    *at = at.wrapping_add(64);
    Ok(TxnData::from_bytes(&b))
}
