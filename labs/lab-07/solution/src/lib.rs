//! Lab 07: a misc device with read and write (reference solution).
//!
//! `/dev/scratch` is a small file in memory, shared by every open: a
//! write stores bytes at the file position, a read returns them. Each open
//! has its own position; opening with `O_TRUNC` (as the shell's `>` does)
//! empties the buffer.

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
        let buffer = self.buffer.lock();
        let data = buffer.as_slice();
        // An offset past the end (or past usize) reads nothing: end of file.
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(data.len());
        let n = writer.len().min(data.len() - start);
        writer.write_slice(&data[start..start + n])?;
        Ok(n)
    }
    // ANCHOR_END: read

    // ANCHOR: write
    fn write(&self, file: &File, reader: &mut UserSliceReader, offset: u64) -> Result<usize> {
        let mut buffer = self.buffer.lock();
        // The shell's `>>` opens with O_APPEND: for a device, the driver
        // decides what that means.
        let start = if file.flags() & O_APPEND != 0 {
            buffer.len()
        } else {
            usize::try_from(offset).map_err(|_| EFBIG)?
        };
        if start >= CAPACITY {
            return Err(ENOSPC);
        }
        // Never more than fits: a huge length cannot make us allocate.
        let n = reader.len().min(CAPACITY - start);
        let mut chunk = [0u8; 256];
        let mut done = 0;
        while done < n {
            let part = &mut chunk[..(n - done).min(256)];
            reader.read_slice(part)?;
            let at = start + done;
            // Fill a hole left by a seek past the end with zeros.
            while buffer.len() < at {
                buffer.push(0, GFP_KERNEL)?;
            }
            let overlap = (buffer.len() - at).min(part.len());
            buffer.as_mut_slice()[at..at + overlap].copy_from_slice(&part[..overlap]);
            buffer.extend_from_slice(&part[overlap..], GFP_KERNEL)?;
            done += part.len();
        }
        Ok(n)
    }
    // ANCHOR_END: write

    // ANCHOR: seek
    fn seek(&self, _file: &File, pos: SeekFrom) -> Result<u64> {
        match pos {
            SeekFrom::Start(offset) => Ok(offset),
            // The file position lives in the VFS's `struct file`; without
            // it, only absolute seeks are offered here.
            SeekFrom::Current(_) | SeekFrom::End(_) => Err(EINVAL),
        }
    }
    // ANCHOR_END: seek

    // ANCHOR: ioctl
    fn ioctl(&self, _file: &File, cmd: IoctlCommand) -> Result<i32> {
        match cmd.cmd {
            SCRATCH_CLEAR => {
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
    fn init(module: &'static ThisModule) -> Result<Self> {
        let buffer: Shared = Arc::pin_init(new_mutex!(KVec::new()), GFP_KERNEL)?;
        let dev = miscdev::Registration::new_pinned(c_str!("scratch"), buffer, module)?;
        pr_info!("registered /dev/scratch\n");
        Ok(Scratch { _dev: dev })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        pr_info!("unregistered\n");
    }
}
