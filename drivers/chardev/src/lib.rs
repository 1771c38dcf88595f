//! A char device sample: one region of four minors, `rust_chardev` in
//! `/proc/devices`, each minor with a buffer of its own.
//!
//! A region gets no `/dev` node by itself: make them with the major from
//! `/proc/devices` (`mknod /dev/rust_chardev0 c MAJOR 0`, and so on). Every
//! open of minor `n` shares buffer `n`; the four buffers are independent.
//! A write appends to the buffer, wherever the file position is (at most
//! `CAPACITY`, 4096 bytes, then `ENOSPC`), and leaves the position at the new
//! end, as `O_APPEND` does for a file. A read returns the buffer from the
//! file position, `lseek` moves it anywhere from 0 to `CAPACITY` (all
//! `whence`s, `SEEK_DATA` and `SEEK_HOLE` included, as for a file), and an
//! open with `O_TRUNC` (the shell's `>`) empties the buffer.
//!
//! User memory is only ever copied with no lock held: a page fault on a
//! user buffer can last as long as user space wants (`userfaultfd`), and
//! nobody waits for it but the caller. Nothing else in this driver sleeps
//! for long, so `O_NONBLOCK` changes nothing.

#![no_std]

use core::pin::Pin;

use kernel::chrdev;
use kernel::file::flags::O_TRUNC;
use kernel::file::{File, FileOperations, SeekFrom};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::user::{UserSliceReader, UserSliceWriter};
use kernel::{c_str, new_mutex};

module! {
    type: RustChardev,
    name: "rust_chardev",
    author: "Rust kernel workbook",
    description: "A char device region with four minors",
    license: "GPL",
}

/// How many minors the region has.
const MINORS: u32 = 4;

/// The most bytes one minor's buffer holds.
const CAPACITY: usize = 4096;

// ANCHOR: state
/// One minor's buffer, shared by every open of that minor.
type Buffer = Arc<Mutex<KVec<u8>>>;

/// One open: the buffer of the minor it was opened through.
struct MinorFile {
    buffer: Buffer,
}
// ANCHOR_END: state

// ANCHOR: open
#[vtable]
impl FileOperations for MinorFile {
    /// The buffers, indexed by minor.
    type OpenData = KVec<Buffer>;

    fn open(buffers: &KVec<Buffer>, file: &File) -> Result<Self> {
        // The region has exactly `MINORS` numbers, but a wrong index must
        // not panic: ENXIO, as for a minor without a device.
        let minor = usize::try_from(file.minor()).map_err(|_| ENXIO)?;
        let buffer = buffers.get(minor).ok_or(ENXIO)?.clone();
        if file.flags() & O_TRUNC != 0 {
            buffer.lock().clear();
        }
        Ok(MinorFile { buffer })
    }
    // ANCHOR_END: open

    // ANCHOR: read_write
    fn read(&self, _file: &File, writer: &mut UserSliceWriter, offset: u64) -> Result<usize> {
        // Copy out under the lock, to user space after it.
        let chunk = {
            let buffer = self.buffer.lock();
            let data = buffer.as_slice();
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
    }

    fn write_pos(
        &self,
        _file: &File,
        reader: &mut UserSliceReader,
        pos: &mut u64,
    ) -> Result<usize> {
        if reader.is_empty() {
            return Ok(0);
        }
        // Copy in before taking the lock: at most what fits now, so that
        // a huge length cannot make us allocate.
        let room = CAPACITY - self.buffer.lock().len();
        if room == 0 {
            return Err(ENOSPC);
        }
        let data = reader.read_vec(reader.len().min(room), GFP_KERNEL)?;
        let mut buffer = self.buffer.lock();
        // Another writer may have filled it in the meantime.
        let room = CAPACITY - buffer.len();
        if room == 0 {
            return Err(ENOSPC);
        }
        let n = data.len().min(room);
        buffer.extend_from_slice(&data[..n], GFP_KERNEL)?;
        *pos = buffer.len() as u64;
        Ok(n)
    }
    // ANCHOR_END: read_write

    // ANCHOR: seek
    fn seek(&self, file: &File, pos: SeekFrom) -> Result<u64> {
        let end = self.buffer.lock().len() as u64;
        pos.resolve(file.pos(), end, CAPACITY as u64)
    }
    // ANCHOR_END: seek
}

struct RustChardev {
    _dev: Pin<KBox<chrdev::Registration<MinorFile>>>,
}

// ANCHOR: init
impl kernel::Module for RustChardev {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let mut buffers = KVec::new();
        for _ in 0..MINORS {
            let buffer: Buffer = Arc::pin_init(new_mutex!(KVec::new()), GFP_KERNEL)?;
            buffers.push(buffer, GFP_KERNEL)?;
        }
        let dev = chrdev::Registration::new_pinned(c_str!("rust_chardev"), MINORS, buffers)?;
        pr_info!("registered {} minors\n", MINORS);
        Ok(RustChardev { _dev: dev })
    }
}
// ANCHOR_END: init

impl Drop for RustChardev {
    fn drop(&mut self) {
        pr_info!("unregistered\n");
    }
}
