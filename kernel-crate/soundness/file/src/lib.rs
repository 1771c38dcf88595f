//! Soundness tests for files and char devices (issue 22, items 3 to 5),
//! in safe Rust only.
//!
//! The module registers a char device region, `sound_file` in
//! `/proc/devices`, and a misc device, `/dev/sound_file_ctl`: writing
//! `drop` to the misc device drops the region's registration, whatever
//! files of it are open or being opened. The guest steps (lab.toml) keep
//! a file of the region open across that drop, open one while it happens,
//! and try `rmmod` with a file open: the cdev must outlive the open file
//! (it was freed with the registration, and the last `close` wrote to it),
//! the drop must wait for an `open` that uses the registration's data, and
//! the module must stay loaded while a file is open.
//!
//! The compile-fail cases (compile-fail/*.rs) are built into this crate
//! with the `compile-fail` feature: a poll that registers a condition
//! variable which may die before the poller's entry, and per-open state
//! that borrows what the registration's owner may free.

#![no_std]
#![forbid(unsafe_code)]

use core::pin::Pin;
use core::sync::atomic::{AtomicU32, Ordering};

use kernel::file::{File, FileOperations};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::user::{UserSliceReader, UserSliceWriter};
use kernel::{c_str, chrdev, delay, miscdev, new_mutex};

module! {
    type: SoundFile,
    name: "sound_file",
    author: "Rust kernel workbook",
    description: "Soundness tests: char device lifetimes",
    license: "GPL",
}

/// How long each open of the region sleeps before it reads the shared
/// data: long enough for a step to drop the registration meanwhile.
const OPEN_DELAY_MS: u32 = 300;

/// Opens of the region under way, which a read of the control device
/// reports: a step waits for one before it drops the registration.
static OPENING: AtomicU32 = AtomicU32::new(0);

/// What the region's registration keeps for every open: a heap buffer, so
/// that an open reading it after the registration is freed reads freed
/// memory (KASAN checks the `memcpy`).
const SHARED: &[u8] = b"the region's shared data, read by every open\n";

/// One open of the region: its own copy of the shared data.
struct RegionFile {
    data: KVec<u8>,
}

#[vtable]
impl FileOperations for RegionFile {
    type OpenData = KVec<u8>;

    fn open(shared: &KVec<u8>, _file: &File) -> Result<Self> {
        OPENING.fetch_add(1, Ordering::Relaxed);
        delay::msleep(OPEN_DELAY_MS);
        OPENING.fetch_sub(1, Ordering::Relaxed);
        let mut data = KVec::with_capacity(shared.len(), GFP_KERNEL)?;
        data.extend_from_slice(shared, GFP_KERNEL)?;
        Ok(RegionFile { data })
    }

    fn read(&self, _file: &File, writer: &mut UserSliceWriter, offset: u64) -> Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.data.len());
        let n = writer.len().min(self.data.len() - start);
        writer.write_slice(&self.data[start..start + n])?;
        Ok(n)
    }
}

/// Where the region's registration lives until a `drop` takes it.
type Slot = Arc<Mutex<Option<Pin<KBox<chrdev::Registration<RegionFile>>>>>>;

/// One open of the control device.
struct CtlFile {
    slot: Slot,
}

#[vtable]
impl FileOperations for CtlFile {
    type OpenData = Slot;

    fn open(slot: &Slot, _file: &File) -> Result<Self> {
        Ok(CtlFile { slot: slot.clone() })
    }

    fn read(&self, _file: &File, writer: &mut UserSliceWriter, offset: u64) -> Result<usize> {
        if offset > 0 {
            return Ok(0);
        }
        // At most a few opens at a time: one digit.
        let opening = OPENING.load(Ordering::Relaxed).min(9) as u8;
        writer.write_slice(&[b'0' + opening, b'\n'])?;
        Ok(2)
    }

    fn write(&self, _file: &File, reader: &mut UserSliceReader, _offset: u64) -> Result<usize> {
        let n = reader.len();
        let command = reader.read_vec(n.min(16), GFP_KERNEL)?;
        if command.as_slice().trim_ascii() != b"drop" {
            return Err(EINVAL);
        }
        // Taken under the lock, dropped after it: the drop waits for the
        // opens under way.
        let registration = self.slot.lock().take().ok_or(ENOENT)?;
        drop(registration);
        pr_info!("region dropped\n");
        Ok(n)
    }
}

struct SoundFile {
    _ctl: Pin<KBox<miscdev::Registration<CtlFile>>>,
}

impl kernel::Module for SoundFile {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let mut shared = KVec::with_capacity(SHARED.len(), GFP_KERNEL)?;
        shared.extend_from_slice(SHARED, GFP_KERNEL)?;
        let region = chrdev::Registration::new_pinned(c_str!("sound_file"), 1, shared)?;
        let slot: Slot = Arc::pin_init(new_mutex!(Some(region)), GFP_KERNEL)?;
        let ctl = miscdev::Registration::new_pinned(c_str!("sound_file_ctl"), slot)?;
        Ok(SoundFile { _ctl: ctl })
    }
}

#[cfg(feature = "compile-fail")]
mod compile_fail {
    include!(env!("COMPILE_FAIL_CASE"));
}
