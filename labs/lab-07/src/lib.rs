//! Lab 07: a misc device with read and write. Complete `read` and
//! `write_pos` (the `TODO`s); the book's chapter "Character and misc
//! devices" explains the user-memory API they use.
//!
//! `/dev/scratch` is a small file in memory, shared by every open: a
//! write stores bytes at the file position (at the end with `O_APPEND`),
//! a read returns them. Each open has its own position, which `lseek`
//! moves anywhere from 0 to the capacity; opening with `O_TRUNC` (as the
//! shell's `>` does) empties the buffer.

#![no_std]

use core::pin::Pin;

use kernel::file::flags::{O_APPEND, O_TRUNC};
use kernel::file::{File, FileOperations, IoctlCommand, SeekFrom};
use kernel::miscdev;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::user::{UserSliceReader, UserSliceWriter};
use kernel::{c_str, ioctl, new_mutex};

module! {
    type: Scratch,
    name: "scratch",
    author: "Rust kernel workbook",
    description: "A misc device holding a small shared buffer",
    license: "GPL",
}

/// The most bytes the device holds.
const CAPACITY: usize = 4096;

/// `SCRATCH_CLEAR`: empties the buffer.
const SCRATCH_CLEAR: u32 = ioctl::io(b'S', 1);

// ANCHOR: state
/// The buffer, shared by every open of the device.
type Shared = Arc<Mutex<KVec<u8>>>;

/// One open of `/dev/scratch`.
struct ScratchFile {
    buffer: Shared,
}
// ANCHOR_END: state

// ANCHOR: file_ops
#[vtable]
impl FileOperations for ScratchFile {
    type OpenData = Shared;

    fn open(shared: &Shared, file: &File) -> Result<Self> {
        if file.flags() & O_TRUNC != 0 {
            shared.lock().clear();
        }
        Ok(ScratchFile {
            buffer: shared.clone(),
        })
    }
    // ANCHOR_END: file_ops

    // ANCHOR: read
    fn read(&self, _file: &File, writer: &mut UserSliceWriter, offset: u64) -> Result<usize> {
        // TODO: copy the bytes of the buffer from `offset` on (at most
        // `writer.len()` of them) to user space with `writer.write_slice`,
        // and return how many. An offset at or past the end reads 0 bytes.
        // Never touch user memory with the lock held: copy the bytes into
        // a `KVec` under the lock, and to user space after it.
        let _ = (writer, offset);
        Err(EINVAL)
    }
    // ANCHOR_END: read

    // ANCHOR: write
    fn write_pos(&self, file: &File, reader: &mut UserSliceReader, pos: &mut u64) -> Result<usize> {
        // TODO: store the bytes user space wrote at `*pos` (at the end if
        // the file was opened with O_APPEND), growing the buffer up to
        // CAPACITY bytes (zeros fill a gap), set `*pos` just past them and
        // return how many were taken: 0 for an empty write, ENOSPC when
        // none fit. Take the bytes in with `reader.read_vec` *before* you
        // take the lock, never more than CAPACITY, whatever `reader.len()`
        // says; and fail (EFAULT, ENOMEM) without changing the buffer.
        let _ = (file, reader, pos, O_APPEND);
        Err(EINVAL)
    }
    // ANCHOR_END: write

    // ANCHOR: seek
    fn seek(&self, file: &File, pos: SeekFrom) -> Result<u64> {
        // What C's `generic_file_llseek_size` does for a file whose data
        // ends at the buffer's length: any position from 0 to CAPACITY.
        let end = self.buffer.lock().len() as u64;
        pos.resolve(file.pos(), end, CAPACITY as u64)
    }
    // ANCHOR_END: seek

    // ANCHOR: ioctl
    fn ioctl(&self, file: &File, cmd: IoctlCommand) -> Result<i32> {
        match cmd.cmd {
            SCRATCH_CLEAR => {
                // It changes the data: only through an open for writing.
                if !file.is_writable() {
                    return Err(EBADF);
                }
                self.buffer.lock().clear();
                Ok(0)
            }
            _ => Err(ENOTTY),
        }
    }
    // ANCHOR_END: ioctl
}

struct Scratch {
    _dev: Pin<KBox<miscdev::Registration<ScratchFile>>>,
}

impl kernel::Module for Scratch {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let buffer: Shared = Arc::pin_init(new_mutex!(KVec::new()), GFP_KERNEL)?;
        let dev = miscdev::Registration::new_pinned(c_str!("scratch"), buffer)?;
        pr_info!("registered /dev/scratch\n");
        Ok(Scratch { _dev: dev })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        pr_info!("unregistered\n");
    }
}
