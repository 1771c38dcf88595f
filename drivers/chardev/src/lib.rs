//! A char device sample: one region of four minors, `rust_chardev` in
//! `/proc/devices`, each minor with a buffer of its own.
//!
//! A region gets no `/dev` node by itself: make them with the major from
//! `/proc/devices` (`mknod /dev/rust_chardev0 c MAJOR 0`, and so on). Every
//! open of minor `n` shares buffer `n`; the four buffers are independent.
//! A write appends to the buffer (at most [`CAPACITY`] bytes, then
//! `ENOSPC`), a read returns it from the file position, and an open with
//! `O_TRUNC` (the shell's `>`) empties it.

#![no_std]

use core::pin::Pin;

use kernel::chrdev;
use kernel::file::flags::O_TRUNC;
use kernel::file::{File, FileOperations};
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

    fn read(&self, _file: &File, writer: &mut UserSliceWriter, offset: u64) -> Result<usize> {
        let buffer = self.buffer.lock();
        let data = buffer.as_slice();
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(data.len());
        let n = writer.len().min(data.len() - start);
        writer.write_slice(&data[start..start + n])?;
        Ok(n)
    }

    fn write(&self, _file: &File, reader: &mut UserSliceReader, _offset: u64) -> Result<usize> {
        let mut buffer = self.buffer.lock();
        let room = CAPACITY - buffer.len();
        if room == 0 && !reader.is_empty() {
            return Err(ENOSPC);
        }
        // Never more than fits: a huge length cannot make us allocate.
        let n = reader.len().min(room);
        let mut chunk = [0u8; 256];
        let mut done = 0;
        while done < n {
            let part = &mut chunk[..(n - done).min(256)];
            reader.read_slice(part)?;
            buffer.extend_from_slice(part, GFP_KERNEL)?;
            done += part.len();
        }
        Ok(n)
    }
}

struct RustChardev {
    _dev: Pin<KBox<chrdev::Registration<MinorFile>>>,
}

// ANCHOR: init
impl kernel::Module for RustChardev {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let mut buffers = KVec::new();
        for _ in 0..MINORS {
            let buffer: Buffer = Arc::pin_init(new_mutex!(KVec::new()), GFP_KERNEL)?;
            buffers.push(buffer, GFP_KERNEL)?;
        }
        let dev =
            chrdev::Registration::new_pinned(c_str!("rust_chardev"), MINORS, buffers, module)?;
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
