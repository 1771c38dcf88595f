//! A thread of a process: its state, the read half of
//! `BINDER_WRITE_READ` (C's `binder_thread_read`), and its exit (C's
//! `binder_thread_release`). A thread lives in its process's state, under
//! the process's lock, known by an id.

use kernel::list::List;
use kernel::prelude::*;
use kernel::sync::{Arc, MutexGuard};
use kernel::uapi::binder::cmd::{
    BR_CLEAR_DEATH_NOTIFICATION_DONE, BR_DEAD_BINDER, BR_DEAD_REPLY, BR_NOOP, BR_SPAWN_LOOPER,
    BR_TRANSACTION_COMPLETE,
};
use kernel::user::UserSlice;

use crate::defs::{put_u32, put_u64, WriteRead};
use crate::node::{node_work, DeathKind};
use crate::process::{Process, ProcessInner};
use crate::transaction::{self, send_failed_reply, Transaction};
use crate::work::{Work, WorkItem};

pub(crate) const LOOPER_REGISTERED: u32 = 0x01;
pub(crate) const LOOPER_ENTERED: u32 = 0x02;
pub(crate) const LOOPER_EXITED: u32 = 0x04;
pub(crate) const LOOPER_INVALID: u32 = 0x08;
const LOOPER_WAITING: u32 = 0x10;
pub(crate) const LOOPER_POLL: u32 = 0x20;

/// The room a read needs before it takes an item, as C checks it: a
/// command and a `binder_transaction_data_secctx` (64 + 8 bytes).
const ITEM_ROOM: usize = 64 + 8 + 4;

/// A thread of a process, known by the pid of the task.
pub(crate) struct Thread {
    pub(crate) id: u64,
    pub(crate) pid: i32,
    pub(crate) looper: u32,
    pub(crate) need_return: bool,
    pub(crate) todo: List<WorkItem>,
    /// A return error is queued: writes stop until it is read.
    pub(crate) return_error: bool,
    /// Work that wakes the thread is queued (C's `process_todo`): work
    /// queued "deferred" (a call's completion, a node's news) waits in
    /// the list until something else wakes the thread.
    pub(crate) process_todo: bool,
    pub(crate) stack: Option<Arc<Transaction>>,
}

impl Thread {
    /// A new thread `id` of the task `pid`.
    pub(crate) fn new(id: u64, pid: i32) -> Self {
        Thread {
            id,
            pid,
            looper: 0,
            need_return: true,
            todo: List::new(),
            return_error: false,
            process_todo: false,
            stack: None,
        }
    }

    /// Whether the thread may take work queued for the whole process.
    pub(crate) fn available_for_proc_work(&self) -> bool {
        self.stack.is_none() && self.todo.is_empty()
    }
}

/// Whether thread `tid` has work to read (`proc_work`: it may take the
/// process's).
pub(crate) fn has_work(inner: &mut ProcessInner, tid: u64, proc_work: bool) -> bool {
    let proc_todo = !inner.todo.is_empty();
    // `process_todo` alone is not enough: a failed call takes its
    // queued completion back out of `todo` and leaves the flag set,
    // and a reader that counted that as work would find nothing to
    // read, retry at once and spin in the kernel forever.
    inner.thread(tid).is_some_and(|t| {
        (t.process_todo && !t.todo.is_empty()) || t.need_return || (proc_work && proc_todo)
    })
}

/// What one work item returns: at most a command and a transaction.
struct Out {
    bytes: [u8; 4 + 64],
    len: usize,
}

impl Out {
    fn new() -> Self {
        Out {
            bytes: [0; 68],
            len: 0,
        }
    }

    fn u32(&mut self, v: u32) {
        put_u32(&mut self.bytes, self.len, v);
        self.len += 4;
    }

    fn u64(&mut self, v: u64) {
        put_u64(&mut self.bytes, self.len, v);
        self.len += 8;
    }
}

/// After one item of work: read on, or return to user space.
enum After {
    More,
    Stop,
}

// ANCHOR: read
/// The read half of `BINDER_WRITE_READ` for thread `tid`: waits for
/// work (unless `nonblock`), then returns as much as fits, stopping after
/// a transaction or a death.
pub(crate) fn read(this: &Arc<Process>, tid: u64, bwr: &mut WriteRead, nonblock: bool) -> Result {
    let buffer = bwr.read_buffer as usize;
    let end = buffer.wrapping_add(bwr.read_size as usize);
    let mut ptr = buffer.wrapping_add(bwr.read_consumed as usize);
    if bwr.read_consumed == 0 {
        write_user(&mut ptr, &BR_NOOP.to_ne_bytes())?;
    }
    loop {
        let proc_work = wait_for_work(this, tid, nonblock)?;
        if !read_work(this, tid, proc_work, buffer, end, &mut ptr)? {
            break;
        }
    }
    bwr.read_consumed = ptr.wrapping_sub(buffer) as u64;
    request_looper(this, tid, buffer)
}
// ANCHOR_END: read

/// Waits until thread `tid` has work, or at once with `EAGAIN` if
/// `nonblock`; `EINTR` on a signal. Returns whether the thread may take
/// the process's work.
fn wait_for_work(this: &Arc<Process>, tid: u64, nonblock: bool) -> Result<bool> {
    let mut inner = this.inner.lock();
    let proc_work = {
        let t = inner.thread(tid).ok_or(EINVAL)?;
        t.looper |= LOOPER_WAITING;
        t.available_for_proc_work()
    };
    let mut ret = Ok(proc_work);
    if nonblock {
        if !has_work(&mut inner, tid, proc_work) {
            ret = Err(EAGAIN);
        }
    } else {
        while !has_work(&mut inner, tid, proc_work) {
            if proc_work {
                inner.waiting_threads += 1;
            }
            let signal = this.work.wait_interruptible(&mut inner);
            if proc_work {
                inner.waiting_threads -= 1;
            }
            if signal {
                ret = Err(EINTR);
                break;
            }
        }
    }
    if let Some(t) = inner.thread(tid) {
        t.looper &= !LOOPER_WAITING;
    }
    ret
}

/// Returns work to user space at `*ptr` (up to `end`) until there is no
/// more, no room, or an item that ends the read. Returns whether nothing
/// but the `BR_NOOP` was read and the thread should wait again.
fn read_work(
    this: &Arc<Process>,
    tid: u64,
    proc_work: bool,
    buffer: usize,
    end: usize,
    ptr: &mut usize,
) -> Result<bool> {
    loop {
        let mut inner = this.inner.lock();
        let (from_thread, need_return) = {
            let t = inner.thread(tid).ok_or(EINVAL)?;
            (!t.todo.is_empty(), t.need_return)
        };
        if !from_thread && (!proc_work || inner.todo.is_empty()) {
            drop(inner);
            return Ok(ptr.wrapping_sub(buffer) == 4 && !need_return);
        }
        if end.wrapping_sub(*ptr) < ITEM_ROOM {
            return Ok(false);
        }
        let Some(w) = pop_work(&mut inner, tid, from_thread) else {
            return Ok(false);
        };
        if let After::Stop = write_work(this, tid, inner, &w, ptr)? {
            return Ok(false);
        }
    }
}

/// The next item: the thread's own first, else the process's.
fn pop_work(inner: &mut ProcessInner, tid: u64, from_thread: bool) -> Option<Arc<WorkItem>> {
    let w = if from_thread {
        inner.thread(tid).and_then(|t| t.todo.pop_front())
    } else {
        inner.todo.pop_front()
    };
    if let Some(t) = inner.thread(tid) {
        if t.todo.is_empty() {
            t.process_todo = false;
        }
    }
    w
}

/// Returns one item of work to user space at `*ptr`; the process lock
/// (`inner`) is dropped before anything is copied out.
fn write_work(
    this: &Arc<Process>,
    tid: u64,
    mut inner: MutexGuard<'_, ProcessInner>,
    w: &WorkItem,
    ptr: &mut usize,
) -> Result<After> {
    let mut out = Out::new();
    match &w.work {
        Work::Complete => out.u32(BR_TRANSACTION_COMPLETE),
        &Work::Error { cmd, return_error } => {
            if return_error {
                if let Some(t) = inner.thread(tid) {
                    t.return_error = false;
                }
            }
            out.u32(cmd);
        }
        Work::Node(node) => {
            for cmd in node_work(&mut inner, node).into_iter().flatten() {
                out.u32(cmd);
                out.u64(node.ptr);
                out.u64(node.cookie);
            }
        }
        &Work::Death(id) => return write_death(inner, id, ptr),
        Work::Transaction(t) => {
            drop(inner);
            transaction::deliver_to_user(this, tid, t.clone(), ptr)?;
            return Ok(After::Stop);
        }
    }
    drop(inner);
    write_user(ptr, &out.bytes[..out.len])?;
    Ok(After::More)
}

/// Returns death notification `id`: `BR_DEAD_BINDER`, which ends the
/// read, or `BR_CLEAR_DEATH_NOTIFICATION_DONE`, which forgets it.
fn write_death(mut inner: MutexGuard<'_, ProcessInner>, id: u64, ptr: &mut usize) -> Result<After> {
    let Some(d) = inner.death(id) else {
        return Ok(After::More);
    };
    let cookie = d.cookie;
    let cmd = if d.kind == DeathKind::Clear {
        BR_CLEAR_DEATH_NOTIFICATION_DONE
    } else {
        BR_DEAD_BINDER
    };
    if d.kind == DeathKind::Clear {
        if let Some(i) = inner.deaths.iter().position(|d| d.id == id) {
            inner.deaths.remove(i);
        }
    } else {
        d.delivered = true;
    }
    drop(inner);
    let mut out = Out::new();
    out.u32(cmd);
    out.u64(cookie);
    write_user(ptr, &out.bytes[..out.len])?;
    Ok(if cmd == BR_DEAD_BINDER {
        After::Stop
    } else {
        After::More
    })
}

/// Asks for another looper (`BR_SPAWN_LOOPER` over the read's first
/// word) when none waits and there may be more work.
fn request_looper(this: &Arc<Process>, tid: u64, buffer: usize) -> Result {
    let mut inner = this.inner.lock();
    let looper = inner.thread(tid).map_or(0, |t| t.looper);
    if inner.requested_threads == 0
        && inner.waiting_threads == 0
        && inner.requested_threads_started < inner.max_threads
        && looper & (LOOPER_REGISTERED | LOOPER_ENTERED) != 0
    {
        inner.requested_threads += 1;
        drop(inner);
        let mut at = buffer;
        write_user(&mut at, &BR_SPAWN_LOOPER.to_ne_bytes())?;
    }
    Ok(())
}

/// Copies `bytes` to user space at `*at`, and moves past them.
pub(crate) fn write_user(at: &mut usize, bytes: &[u8]) -> Result {
    UserSlice::new(*at, bytes.len())?
        .writer()
        .write_slice(bytes)?;
    *at = at.wrapping_add(bytes.len());
    Ok(())
}

// ANCHOR: thread_exit
/// Forgets a thread: a call it was handling fails with
/// `BR_DEAD_REPLY` for its caller; calls it made lose their sender.
pub(crate) fn exit(this: &Arc<Process>, tid: u64) {
    let thread = {
        let mut inner = this.inner.lock();
        let Some(i) = inner.threads.iter().position(|t| t.id == tid) else {
            return;
        };
        inner.threads.remove(i)
    };
    if let Some(th) = thread {
        release(this, th);
    }
}
// ANCHOR_END: thread_exit

/// Releases a thread taken out of its process: unwinds its stack of
/// calls, and fails the work it will never read.
pub(crate) fn release(this: &Arc<Process>, th: Thread) {
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
        send_failed_reply(t, BR_DEAD_REPLY);
    }
    let mut todo = th.todo;
    release_work(&mut todo);
}

/// Work that will never be read: calls waiting in it fail.
pub(crate) fn release_work(todo: &mut List<WorkItem>) {
    while let Some(w) = todo.pop_back() {
        if let Work::Transaction(t) = &w.work {
            if t.target_node.is_some() && !t.is_oneway() {
                send_failed_reply(t.clone(), BR_DEAD_REPLY);
            }
        }
    }
}
