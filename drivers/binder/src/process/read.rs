//! The read half of `BINDER_WRITE_READ` (C's `binder_thread_read`).

use super::*;

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

impl Process {
    // ANCHOR: read
    pub(super) fn thread_read(
        this: &Arc<Self>,
        tid: u64,
        bwr: &mut WriteRead,
        nonblock: bool,
    ) -> Result {
        let buffer = bwr.read_buffer as usize;
        let end = buffer.wrapping_add(bwr.read_size as usize);
        let mut ptr = buffer.wrapping_add(bwr.read_consumed as usize);
        if bwr.read_consumed == 0 {
            write_user(&mut ptr, &BR_NOOP.to_ne_bytes())?;
        }
        'retry: loop {
            let mut inner = this.inner.lock();
            let proc_work = {
                let t = inner.thread(tid).ok_or(EINVAL)?;
                t.looper |= LOOPER_WAITING;
                let t: &Thread = t;
                available_for_proc_work(t)
            };
            let mut ret = Ok(());
            if nonblock {
                if !Process::has_work(&mut inner, tid, proc_work) {
                    ret = Err(EAGAIN);
                }
            } else {
                while !Process::has_work(&mut inner, tid, proc_work) {
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
            drop(inner);
            ret?;
            loop {
                let mut inner = this.inner.lock();
                let (from_thread, need_return) = {
                    let t = inner.thread(tid).ok_or(EINVAL)?;
                    (!t.todo.is_empty(), t.need_return)
                };
                if !from_thread && (!proc_work || inner.todo.is_empty()) {
                    drop(inner);
                    if ptr.wrapping_sub(buffer) == 4 && !need_return {
                        continue 'retry;
                    }
                    break 'retry;
                }
                if end.wrapping_sub(ptr) < 64 + 8 + 4 {
                    break 'retry;
                }
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
                let Some(w) = w else {
                    break 'retry;
                };
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
                        Process::node_work(&mut inner, node, &mut out);
                    }
                    &Work::Death(id) => {
                        let Some(d) = inner.death(id) else {
                            continue;
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
                        out.u32(cmd);
                        out.u64(cookie);
                        write_user(&mut ptr, &out.bytes[..out.len])?;
                        if cmd == BR_DEAD_BINDER {
                            break 'retry;
                        }
                        continue;
                    }
                    Work::Transaction(t) => {
                        drop(inner);
                        Process::deliver_to_user(this, tid, t.clone(), &mut ptr)?;
                        break 'retry;
                    }
                }
                drop(inner);
                write_user(&mut ptr, &out.bytes[..out.len])?;
            }
        }
        bwr.read_consumed = ptr.wrapping_sub(buffer) as u64;
        // Ask for another looper when none waits and there may be more.
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
    // ANCHOR_END: read

    /// A node's work: tells user space of counts gained and lost.
    fn node_work(inner: &mut ProcessInner, node: &Arc<Node>, out: &mut Out) {
        let dead = inner.dead;
        let Some(st) = inner.node_state(node) else {
            return;
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
        let mut cmd = |c: u32| {
            out.u32(c);
            out.u64(node.ptr);
            out.u64(node.cookie);
        };
        // At most two of these at once: the buffer holds 68 bytes.
        if weak && !has_weak {
            cmd(BR_INCREFS);
        }
        if strong && !has_strong {
            cmd(BR_ACQUIRE);
        }
        if !strong && has_strong {
            cmd(BR_RELEASE);
        }
        if !weak && has_weak {
            cmd(BR_DECREFS);
        }
    }

    // ANCHOR: deliver
    /// Returns a transaction to user space: `BR_TRANSACTION` or
    /// `BR_REPLY`, with the buffer's address in this process's mapping;
    /// passed files get their numbers here, in the receiver.
    fn deliver_to_user(this: &Arc<Self>, tid: u64, t: Arc<Transaction>, ptr: &mut usize) -> Result {
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
        let sender_pid = match &from {
            Some((p, ftid)) if p.inner.lock().thread(*ftid).is_some() => {
                p.task.tgid_in_current_ns()
            }
            _ => 0,
        };
        // Reserve every number first: installing cannot fail.
        let mut reserved = KVec::new();
        let mut ok = true;
        for _ in fds.iter() {
            match FdReservation::new_cloexec() {
                Ok(r) => {
                    if reserved.push(r, GFP_KERNEL).is_err() {
                        ok = false;
                        break;
                    }
                }
                Err(_) => {
                    ok = false;
                    break;
                }
            }
        }
        let mut inner = this.inner.lock();
        let Some(alloc) = inner.alloc.as_mut() else {
            return Ok(());
        };
        let base = alloc.base;
        if ok {
            for ((off, _), r) in fds.iter().zip(reserved.iter()) {
                if alloc
                    .pages()
                    .write(offset + off, &r.fd().to_ne_bytes())
                    .is_err()
                {
                    ok = false;
                }
            }
        }
        if !ok {
            drop(inner);
            drop(reserved);
            drop(fds);
            if cmd == BR_REPLY {
                write_user(ptr, &BR_FAILED_REPLY.to_ne_bytes())?;
            } else if !t.is_oneway() {
                super::transaction::send_failed_reply(t, BR_FAILED_REPLY);
            }
            return Ok(());
        }
        let (data_size, offsets_size) = match alloc.buffer_mut(offset) {
            Some(b) => {
                b.allow_user_free = true;
                (b.data_size, b.offsets_size)
            }
            None => (0, 0),
        };
        if cmd == BR_TRANSACTION && !t.is_oneway() {
            let old = inner.thread(tid).and_then(|th| th.stack.take());
            {
                let mut ti = t.inner.lock();
                ti.to_parent = old;
                ti.to_thread = Some(tid);
            }
            if let Some(th) = inner.thread(tid) {
                th.stack = Some(t.clone());
            }
        } else {
            t.inner.lock().buffer = None;
        }
        drop(inner);
        let mut fds = fds;
        while let (Some(r), Some((_, file))) = (reserved.pop(), fds.pop()) {
            r.commit(file);
        }
        let user = base + offset;
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
        write_user(ptr, &out)
    }
    // ANCHOR_END: deliver
}

fn write_user(at: &mut usize, bytes: &[u8]) -> Result {
    UserSlice::new(*at, bytes.len())?
        .writer()
        .write_slice(bytes)?;
    *at = at.wrapping_add(bytes.len());
    Ok(())
}
