//! A misc device sample: `/dev/rust_shared_misc`, one queue of bytes shared
//! by every open, with `poll`.
//!
//! Whatever any open writes, any open reads, once: a read takes the bytes
//! it returns out of the queue, and returns 0 (end of file) when the queue
//! is empty, so `cat` drains it. The queue holds at most [`CAPACITY`]
//! unread bytes; a write takes what fits and is `ENOSPC` when nothing
//! does. The device is a stream, like a pipe: it has no position, so
//! `lseek`, `pread` and `pwrite` fail with `ESPIPE`.
//!
//! `poll` reports the device readable while the queue holds data and
//! writable while it has room, and registers the condition variable that
//! every change notifies, so a sleeping `poll(2)`, `select(2)` or
//! `epoll_wait(2)` wakes as soon as data arrives or room is made.
//!
//! User memory is only ever copied with no lock held: a page fault on a
//! user buffer can last as long as user space wants (`userfaultfd`). A
//! write copies the bytes in first; a read copies them out and takes them
//! from the queue only once they reached user space, so a bad buffer costs
//! no data. Until then, other reads wait for it (interruptibly), or fail
//! with `EAGAIN` on an `O_NONBLOCK` open: the only time this device makes
//! anyone wait.

#![no_std]

use core::pin::Pin;

use kernel::file::flags::O_NONBLOCK;
use kernel::file::{File, FileOperations, PollTable, POLLIN, POLLOUT};
use kernel::miscdev;
use kernel::prelude::*;
use kernel::sync::{Arc, CondVar, Mutex};
use kernel::user::{UserSliceReader, UserSliceWriter};
use kernel::{c_str, new_condvar, new_mutex, pin_init};

module! {
    type: RustSharedMisc,
    name: "rust_shared_misc",
    author: "Rust kernel workbook",
    description: "A misc device whose queue is shared by every open",
    license: "GPL",
}

/// The most unread bytes the queue holds.
const CAPACITY: usize = 4096;

// ANCHOR: shared
/// The bytes written and not read yet: `data[head..]`.
struct Queue {
    data: KVec<u8>,
    head: usize,
    /// A read is copying the first unread bytes to user space; it takes
    /// them out of the queue when that worked.
    reading: bool,
}

/// The state every open shares: the registration keeps one `Arc` of it in
/// its `OpenData`, and each open another.
struct Shared {
    queue: Mutex<Queue>,
    /// Notified by every change: bytes written, bytes read, a read done.
    changed: CondVar,
}

/// One open of the device: nothing of its own.
struct SharedFile {
    shared: Arc<Shared>,
}
// ANCHOR_END: shared

impl Queue {
    fn unread(&self) -> usize {
        self.data.len() - self.head
    }

    /// Moves the unread bytes to the front, making room at the end.
    fn compact(&mut self) {
        let head = self.head;
        self.data.as_mut_slice().copy_within(head.., 0);
        for _ in 0..head {
            self.data.pop();
        }
        self.head = 0;
    }
}

#[vtable]
impl FileOperations for SharedFile {
    type OpenData = Arc<Shared>;

    /// No position: `ESPIPE` for `lseek`, `pread` and `pwrite`.
    const STREAM: bool = true;

    fn open(shared: &Arc<Shared>, _file: &File) -> Result<Self> {
        Ok(SharedFile {
            shared: shared.clone(),
        })
    }

    // ANCHOR: read_write
    fn read(&self, file: &File, writer: &mut UserSliceWriter, _offset: u64) -> Result<usize> {
        if writer.is_empty() {
            return Ok(0);
        }
        // ANCHOR: wait
        let mut queue = self.shared.queue.lock();
        // One read at a time between the copy and taking the bytes.
        while queue.reading {
            if file.flags() & O_NONBLOCK != 0 {
                return Err(EAGAIN);
            }
            // A signal ends the wait: the system call is restarted, or
            // fails with EINTR (C's -ERESTARTSYS).
            if self.shared.changed.wait_interruptible(&mut queue) {
                return Err(ERESTARTSYS);
            }
        }
        // ANCHOR_END: wait
        let n = writer.len().min(queue.unread());
        if n == 0 {
            return Ok(0);
        }
        let head = queue.head;
        let mut chunk = KVec::with_capacity(n, GFP_KERNEL)?;
        chunk.extend_from_slice(&queue.data.as_slice()[head..head + n], GFP_KERNEL)?;
        queue.reading = true;
        drop(queue);

        // No lock held while user memory is touched.
        let copied = writer.write_slice(&chunk);

        let mut queue = self.shared.queue.lock();
        queue.reading = false;
        if copied.is_ok() {
            // Only reads take bytes, and no other read ran: the first `n`
            // unread bytes are still the ones copied (a write may have
            // moved them to the front, never changed them).
            queue.head += n;
            if queue.unread() == 0 {
                queue.data.clear();
                queue.head = 0;
            }
        }
        drop(queue);
        self.shared.changed.notify_all();
        copied.map(|()| n)
    }

    fn write(&self, _file: &File, reader: &mut UserSliceReader, _offset: u64) -> Result<usize> {
        if reader.is_empty() {
            return Ok(0);
        }
        // Copy in before taking the lock: at most what fits now, so that
        // a huge length cannot make us allocate.
        let room = CAPACITY - self.shared.queue.lock().unread();
        if room == 0 {
            return Err(ENOSPC);
        }
        let data = reader.read_vec(reader.len().min(room), GFP_KERNEL)?;
        let mut queue = self.shared.queue.lock();
        // Another writer may have filled the queue in the meantime.
        let room = CAPACITY - queue.unread();
        if room == 0 {
            return Err(ENOSPC);
        }
        let n = data.len().min(room);
        if queue.data.len() + n > CAPACITY {
            queue.compact();
        }
        queue.data.extend_from_slice(&data[..n], GFP_KERNEL)?;
        drop(queue);
        self.shared.changed.notify_all();
        Ok(n)
    }
    // ANCHOR_END: read_write

    // ANCHOR: poll
    fn poll<'a>(&'a self, _file: &File, table: &PollTable<'a>) -> Result<u32> {
        // Register first, then look: a change between the two still wakes
        // the poller.
        table.register(&self.shared.changed);
        let queue = self.shared.queue.lock();
        let mut events = 0;
        // While another read copies out, a read would wait.
        if queue.unread() > 0 && !queue.reading {
            events |= POLLIN;
        }
        if queue.unread() < CAPACITY {
            events |= POLLOUT;
        }
        Ok(events)
    }
    // ANCHOR_END: poll
}

struct RustSharedMisc {
    _dev: Pin<KBox<miscdev::Registration<SharedFile>>>,
}

// ANCHOR: init
impl kernel::Module for RustSharedMisc {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let shared = Arc::pin_init(
            pin_init!(Shared {
                queue <- new_mutex!(
                    Queue { data: KVec::new(), head: 0, reading: false },
                    "Shared::queue"
                ),
                changed <- new_condvar!("Shared::changed"),
            }),
            GFP_KERNEL,
        )?;
        let dev = miscdev::Registration::new_pinned(c_str!("rust_shared_misc"), shared)?;
        pr_info!("registered /dev/rust_shared_misc\n");
        Ok(RustSharedMisc { _dev: dev })
    }
}
// ANCHOR_END: init

impl Drop for RustSharedMisc {
    fn drop(&mut self) {
        pr_info!("unregistered\n");
    }
}
