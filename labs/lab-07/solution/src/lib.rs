// TODO-BEGIN
//! Lab 07: a misc device with read and write (reference solution).
// TODO-ELSE
// //! Lab 07: a misc device with read and write. Complete `read` and
// //! `write_pos` (the `TODO`s); the book's chapter "Character and misc
// //! devices" explains the user-memory API they use.
// TODO-END
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
        // TODO-BEGIN
        // Copy the bytes out under the lock, to user space after it: a
        // page fault on the user's buffer may last forever.
        let chunk = {
            let buffer = self.buffer.lock();
            let data = buffer.as_slice();
            // An offset past the end (or past usize) reads nothing: end of file.
            let start = usize::try_from(offset)
                .unwrap_or(usize::MAX)
                .min(data.len());
            let n = writer.len().min(data.len() - start);
            let mut chunk = KVec::with_capacity(n, GFP_KERNEL)?;
            chunk.extend_from_slice(&data[start..start + n], GFP_KERNEL)?;
            chunk
        };
        writer.write_slice(&chunk)?;
        Ok(chunk.len())
        // TODO-ELSE
        // // TODO: copy the bytes of the buffer from `offset` on (at most
        // // `writer.len()` of them) to user space with `writer.write_slice`,
        // // and return how many. An offset at or past the end reads 0 bytes.
        // // Never touch user memory with the lock held: copy the bytes into
        // // a `KVec` under the lock, and to user space after it.
        // let _ = (writer, offset);
        // Err(EINVAL)
        // TODO-END
    }
    // ANCHOR_END: read

    // ANCHOR: write
    fn write_pos(&self, file: &File, reader: &mut UserSliceReader, pos: &mut u64) -> Result<usize> {
        // TODO-BEGIN
        if reader.is_empty() {
            return Ok(0);
        }
        // The shell's `>>` opens with O_APPEND: for a device, the driver
        // decides what that means. The end is only sure under the lock.
        let append = file.flags() & O_APPEND != 0;
        let start = if append {
            self.buffer.lock().len()
        } else {
            usize::try_from(*pos).unwrap_or(usize::MAX)
        };
        if start >= CAPACITY {
            return Err(ENOSPC);
        }
        // Copy in before taking the lock, and never more than fits: a
        // huge length cannot make us allocate.
        let data = reader.read_vec(reader.len().min(CAPACITY - start), GFP_KERNEL)?;
        let mut buffer = self.buffer.lock();
        let start = if append { buffer.len() } else { start };
        if start >= CAPACITY {
            return Err(ENOSPC);
        }
        let n = data.len().min(CAPACITY - start);
        // Allocate first: past this point nothing fails, so an error
        // leaves the buffer as it was.
        let grow = (start + n).saturating_sub(buffer.len());
        buffer.reserve(grow, GFP_KERNEL)?;
        // Fill a hole left by a seek past the end with zeros.
        while buffer.len() < start {
            buffer.push(0, GFP_KERNEL)?;
        }
        let overlap = (buffer.len() - start).min(n);
        buffer.as_mut_slice()[start..start + overlap].copy_from_slice(&data[..overlap]);
        buffer.extend_from_slice(&data[overlap..n], GFP_KERNEL)?;
        *pos = (start + n) as u64;
        Ok(n)
        // TODO-ELSE
        // // TODO: store the bytes user space wrote at `*pos` (at the end if
        // // the file was opened with O_APPEND), growing the buffer up to
        // // CAPACITY bytes (zeros fill a gap), set `*pos` just past them and
        // // return how many were taken: 0 for an empty write, ENOSPC when
        // // none fit. Take the bytes in with `reader.read_vec` *before* you
        // // take the lock, never more than CAPACITY, whatever `reader.len()`
        // // says; and fail (EFAULT, ENOMEM) without changing the buffer.
        // let _ = (file, reader, pos, O_APPEND);
        // Err(EINVAL)
        // TODO-END
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
