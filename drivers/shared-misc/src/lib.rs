//! A misc device sample: `/dev/rust_shared_misc`, one queue of bytes shared
//! by every open, with `poll`.
//!
//! Whatever any open writes, any open reads, once: a read takes the bytes
//! it returns out of the queue, and returns 0 (end of file) when the queue
//! is empty, so `cat` drains it. The queue holds at most [`CAPACITY`]
//! unread bytes; a write beyond that is `ENOSPC`. `poll` reports the device
//! readable while the queue holds data, and registers the condition
//! variable that writes notify, so a sleeping `poll(2)`, `select(2)` or
//! `epoll_wait(2)` wakes as soon as data arrives.

#![no_std]

use core::pin::Pin;

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
}

/// The state every open shares: the registration keeps one `Arc` of it in
/// its `OpenData`, and each open another.
struct Shared {
    queue: Mutex<Queue>,
    /// Notified by every write that adds bytes.
    readable: CondVar,
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

    fn open(shared: &Arc<Shared>, _file: &File) -> Result<Self> {
        Ok(SharedFile {
            shared: shared.clone(),
        })
    }

    // ANCHOR: read_write
    fn read(&self, _file: &File, writer: &mut UserSliceWriter, _offset: u64) -> Result<usize> {
        let mut queue = self.shared.queue.lock();
        let n = writer.len().min(queue.unread());
        let head = queue.head;
        writer.write_slice(&queue.data.as_slice()[head..head + n])?;
        queue.head += n;
        if queue.unread() == 0 {
            queue.data.clear();
            queue.head = 0;
        }
        Ok(n)
    }

    fn write(&self, _file: &File, reader: &mut UserSliceReader, _offset: u64) -> Result<usize> {
        let mut queue = self.shared.queue.lock();
        let room = CAPACITY - queue.unread();
        if room == 0 && !reader.is_empty() {
            return Err(ENOSPC);
        }
        if queue.data.len() + reader.len().min(room) > CAPACITY {
            queue.compact();
        }
        // Never more than fits: a huge length cannot make us allocate.
        let n = reader.len().min(room);
        let mut chunk = [0u8; 256];
        let mut done = 0;
        let mut result = Ok(n);
        while done < n {
            let part = &mut chunk[..(n - done).min(256)];
            if let Err(e) = reader.read_slice(part) {
                result = Err(e);
                break;
            }
            if let Err(e) = queue.data.extend_from_slice(part, GFP_KERNEL) {
                result = Err(e.into());
                break;
            }
            done += part.len();
        }
        drop(queue);
        // Even a write that failed half-way may have added bytes.
        if done > 0 {
            self.shared.readable.notify_all();
        }
        result
    }
    // ANCHOR_END: read_write

    // ANCHOR: poll
    fn poll(&self, _file: &File, table: &PollTable<'_>) -> Result<u32> {
        // Register first, then look: a write between the two still wakes
        // the poller.
        table.register(&self.shared.readable);
        let queue = self.shared.queue.lock();
        let mut events = 0;
        if queue.unread() > 0 {
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
    fn init(module: &'static ThisModule) -> Result<Self> {
        let shared = Arc::pin_init(
            pin_init!(Shared {
                queue <- new_mutex!(Queue { data: KVec::new(), head: 0 }, "Shared::queue"),
                readable <- new_condvar!("Shared::readable"),
            }),
            GFP_KERNEL,
        )?;
        let dev = miscdev::Registration::new_pinned(c_str!("rust_shared_misc"), shared, module)?;
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
