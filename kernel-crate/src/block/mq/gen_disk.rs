//! [`GenDisk`]: a disk, `/dev/NAME`, served by a [`TagSet`]'s queues.
//!
//! C header: [`include/linux/blkdev.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/blkdev.h)

use core::ffi::{c_int, c_uint, c_ulong, c_void};
use core::fmt::{self, Write};
use core::marker::PhantomData;

use super::{Operations, TagSet};
use crate::alloc::{flags::GFP_KERNEL, KBox};
use crate::bindings;
use crate::block::SECTOR_SIZE;
use crate::error::{code::EINVAL, code::ENXIO, from_err_ptr, from_result, to_result, Result};
use crate::file::IoctlCommand;
use crate::page::PAGE_SIZE;
use crate::sync::{Arc, ArcBorrow, CondVar, LockClassKey, Mutex};
use crate::{new_condvar, new_mutex, pin_init, ThisModule};

/// How a disk was opened, as `ioctl` gets it.
#[cfg(not(kernel_blk_mode))]
type BlkMode = bindings::fmode_t;
#[cfg(kernel_blk_mode)]
type BlkMode = bindings::blk_mode_t;

/// The disk's `block_device_operations` for a driver `T`: the owner, so
/// that an open disk holds the module; `open` and `release`, which count
/// the opens on the disk's [`Gate`]; and `ioctl` if `T` has one.
struct DiskVTable<T>(PhantomData<T>);

impl<T: Operations> DiskVTable<T> {
    const VTABLE: bindings::block_device_operations = bindings::block_device_operations {
        owner: ThisModule::THIS.as_raw(),
        open: Some(Self::open),
        release: Some(Self::release),
        ioctl: vtable_slot!(T::HAS_IOCTL, Self::ioctl),
        // SAFETY: all-zero is a valid `block_device_operations`: every other
        // field is an optional function pointer.
        ..unsafe { core::mem::zeroed() }
    };

    /// The gate of `disk`, borrowed.
    ///
    /// # Safety
    ///
    /// `disk` is a disk made by [`GenDiskBuilder::build`] for `T`, and the
    /// caller holds a count on its gate for `'a` (an open of the disk, or
    /// `open` while the disk is live: see [`Gate`]).
    unsafe fn gate<'a>(disk: *mut bindings::gendisk) -> ArcBorrow<'a, Gate> {
        // SAFETY: `build` set `private_data` to a pointer from
        // `Arc::into_raw` before the disk could be opened; the caller's
        // count keeps it.
        unsafe { ArcBorrow::from_raw(bindings::rust_helper_disk_private_data(disk).cast::<Gate>()) }
    }

    /// `open` on 6.1: the block device.
    #[cfg(not(kernel_blk_mode))]
    unsafe extern "C" fn open(
        bdev: *mut bindings::block_device,
        _mode: bindings::fmode_t,
    ) -> c_int {
        // SAFETY: the block layer passes a block device of a disk made by
        // `build` for `T` (it has these operations), being opened.
        unsafe { Self::open_disk(bindings::rust_helper_bdev_disk(bdev)) }
    }

    /// `open` on 6.5+: the disk.
    #[cfg(kernel_blk_mode)]
    unsafe extern "C" fn open(disk: *mut bindings::gendisk, _mode: bindings::blk_mode_t) -> c_int {
        // SAFETY: as on 6.1.
        unsafe { Self::open_disk(disk) }
    }

    /// Takes the count of an open of `disk` on its gate.
    ///
    /// # Safety
    ///
    /// `disk` is a disk made by [`GenDiskBuilder::build`] for `T`, being
    /// opened (`block_device_operations.open`).
    unsafe fn open_disk(disk: *mut bindings::gendisk) -> c_int {
        // SAFETY: the block layer calls `open` with the disk live (under
        // `open_mutex`, after `disk_live`): its `GenDisk`, which deletes
        // the disk (`del_gendisk`, under the same mutex) before it gives
        // its own count back, still holds the gate.
        let gate = unsafe { Self::gate(disk) };
        // The open's count, which `release` takes back.
        let _ = Arc::into_raw(Arc::from(gate));
        0
    }

    #[cfg(not(kernel_blk_mode))]
    unsafe extern "C" fn release(disk: *mut bindings::gendisk, _mode: bindings::fmode_t) {
        // SAFETY: the block layer passes the disk of an open that ends.
        unsafe { Self::release_disk(disk) }
    }

    #[cfg(kernel_blk_mode)]
    unsafe extern "C" fn release(disk: *mut bindings::gendisk) {
        // SAFETY: the block layer passes the disk of an open that ends.
        unsafe { Self::release_disk(disk) }
    }

    /// Gives back the count of an open of `disk`.
    ///
    /// # Safety
    ///
    /// `disk` is a disk made by [`GenDiskBuilder::build`] for `T`, whose
    /// open (`open_disk`) ends (`block_device_operations.release`).
    unsafe fn release_disk(disk: *mut bindings::gendisk) {
        // SAFETY: every `release` follows a successful `open` of the disk,
        // whose count (from `into_raw` there) this takes back, once, before
        // the block layer drops its hold on the module.
        drop(unsafe {
            Arc::from_raw(bindings::rust_helper_disk_private_data(disk).cast::<Gate>())
        });
    }

    unsafe extern "C" fn ioctl(
        bdev: *mut bindings::block_device,
        _mode: BlkMode,
        cmd: c_uint,
        arg: c_ulong,
    ) -> c_int {
        // SAFETY: `ioctl` runs on an open block device of the disk, whose
        // open holds a count on the gate.
        let gate = unsafe { Self::gate(bindings::rust_helper_bdev_disk(bdev)) };
        from_result(|| {
            let user = gate.enter()?;
            // SAFETY: the gate is open, so the `GenDisk`, which closes it
            // and waits for its users before dropping the queue data, has
            // not dropped it; `user` holds it open until after the call.
            let queue_data = unsafe { &*gate.data.cast::<T::QueueData>() };
            // `unsigned long` and `usize` are both 64 bits on x86-64.
            let result = T::ioctl(
                queue_data,
                IoctlCommand {
                    cmd,
                    arg: arg as usize,
                },
            );
            drop(user);
            result
        })
    }
}

// ANCHOR: gate
/// What a disk's open files share with its [`GenDisk`]: a pointer to the
/// disk's queue data, whether it may still be used, and how many `ioctl`
/// calls use it now.
///
/// The block layer calls a disk's `ioctl` on any open file of it, also
/// after the driver deleted the disk (an open file outlives
/// `del_gendisk`), so the queue data cannot be reached through the disk
/// alone. The gate is counted: the `GenDisk` holds one count and each open
/// of the disk one (`open`, given back by `release`), so it lives as long
/// as anything may call `ioctl`. Dropping the `GenDisk` closes it and waits
/// for the `ioctl` calls under way; later calls fail with `ENXIO`, before
/// the queue data is dropped.
///
/// # Invariants
///
/// `data` points at the queue data of the disk while `state.live` is
/// true; while `state.users` is not zero, `state.live` is true or the
/// `GenDisk` is waiting for it to become zero before it drops the data.
struct Gate {
    data: *const c_void,
    state: Mutex<GateState>,
    idle: CondVar,
}
// ANCHOR_END: gate

/// A [`Gate`]'s state.
struct GateState {
    live: bool,
    users: usize,
}

// SAFETY: `data` is only dereferenced by `ioctl`, as the shared reference
// the driver's `Sync` queue data allows on any thread; the rest is locks.
unsafe impl Send for Gate {}
// SAFETY: as above.
unsafe impl Sync for Gate {}

impl Gate {
    /// Counts one user of the data; `ENXIO` once the disk is going away.
    fn enter(&self) -> Result<GateUser<'_>> {
        let mut state = self.state.lock();
        if !state.live {
            return Err(ENXIO);
        }
        state.users += 1;
        Ok(GateUser(self))
    }

    /// Closes the gate and waits until no one uses the data.
    fn close(&self) {
        let mut state = self.state.lock();
        state.live = false;
        while state.users > 0 {
            self.idle.wait(&mut state);
        }
    }
}

/// One counted user of a [`Gate`]'s data.
struct GateUser<'a>(&'a Gate);

impl Drop for GateUser<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock();
        state.users -= 1;
        if state.users == 0 {
            self.0.idle.notify_all();
        }
    }
}

/// The lockdep class of every disk's queue (one per call site of
/// `blk_mq_alloc_disk` in C; all of a module's disks share it here).
static QUEUE_LOCK_CLASS: LockClassKey = LockClassKey::new();

// ANCHOR: builder
/// The settings of a new [`GenDisk`]; [`build`](Self::build) makes and
/// adds the disk. Sizes are checked there.
#[derive(Clone, Copy, Debug)]
pub struct GenDiskBuilder {
    capacity_sectors: u64,
    logical_block_size: u32,
    physical_block_size: u32,
    max_hw_sectors: Option<u32>,
    max_segments: Option<u16>,
    virt_boundary: Option<u64>,
    dma_alignment: Option<u32>,
    write_cache: bool,
    fua: bool,
    rotational: bool,
    io_min: u32,
    io_opt: u32,
    discard: Option<(u32, u16)>,
    write_zeroes: Option<u32>,
}
// ANCHOR_END: builder

/// The builder's methods, each setting fields from its arguments:
/// `fn name(arg: Type) { field = value }` makes
/// `pub const fn name(mut self, arg: Type) -> Self`.
macro_rules! setters {
    ($(
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*) { $($field:ident = $value:expr),* }
    )*) => {
        $(
            $(#[$meta])*
            pub const fn $name(mut self, $($arg: $ty),*) -> Self {
                $(self.$field = $value;)*
                self
            }
        )*
    };
}

impl Default for GenDiskBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl GenDiskBuilder {
    /// An empty disk of 512-byte blocks, non-rotational, without a write
    /// cache, with blk-mq's default limits.
    pub const fn new() -> Self {
        GenDiskBuilder {
            capacity_sectors: 0,
            logical_block_size: SECTOR_SIZE,
            physical_block_size: SECTOR_SIZE,
            max_hw_sectors: None,
            max_segments: None,
            virt_boundary: None,
            dma_alignment: None,
            write_cache: false,
            fua: false,
            rotational: false,
            io_min: 0,
            io_opt: 0,
            discard: None,
            write_zeroes: None,
        }
    }

    setters! {
        /// The size in 512-byte sectors, whatever the block size.
        fn capacity_sectors(sectors: u64) { capacity_sectors = sectors }
        /// The smallest unit the device can address: a power of two from 512
        /// to the page size.
        fn logical_block_size(size: u32) { logical_block_size = size }
        /// The smallest unit the device writes without a read-modify-write: a
        /// power of two, at least the logical block size.
        fn physical_block_size(size: u32) { physical_block_size = size }
        /// The largest request in sectors (`blk_queue_max_hw_sectors`).
        fn max_hw_sectors(sectors: u32) { max_hw_sectors = Some(sectors) }
        /// The most segments of one request (`blk_queue_max_segments`): the
        /// capacity its scatterlists need.
        fn max_segments(segments: u16) { max_segments = Some(segments) }
        /// A mask no segment may cross but at its ends
        /// (`blk_queue_virt_boundary`): NVMe's PRP lists need `page size - 1`.
        fn virt_boundary(mask: u64) { virt_boundary = Some(mask) }
        /// The alignment mask of a direct I/O buffer (`blk_queue_dma_alignment`).
        fn dma_alignment(mask: u32) { dma_alignment = Some(mask) }
        /// The device has a volatile write cache, so flushes matter; `fua`: it
        /// honours forced unit access (`blk_queue_write_cache`).
        fn write_cache(enabled: bool, fua: bool) { write_cache = enabled, fua = fua }
        /// Whether the device is a spinning disk (default: no).
        fn rotational(rotational: bool) { rotational = rotational }
        // ANCHOR: limits
        /// The smallest I/O the device does without a penalty, in bytes
        /// (`blk_queue_io_min`, `BLKIOMIN`): 0 (the default) for the
        /// physical block size, else a multiple of the logical block size.
        fn io_min(bytes: u32) { io_min = bytes }
        /// The size of I/O the device prefers, in bytes (`blk_queue_io_opt`,
        /// `BLKIOOPT`): 0 (the default) for none, else a multiple of the
        /// logical block size.
        fn io_opt(bytes: u32) { io_opt = bytes }
        /// The device can drop the contents of sectors: the disk gets
        /// `Op::Discard` requests of at most `max_sectors` sectors in at most
        /// `max_segments` ranges (one per bio,
        /// [`Request::ranges`](super::Request::ranges)), in units of the
        /// logical block size (`blk_queue_max_discard_sectors`,
        /// `blk_queue_max_discard_segments`, `discard_granularity`).
        fn discard(max_sectors: u32, max_segments: u16) { discard = Some((max_sectors, max_segments)) }
        /// The device can write zeroes without data: the disk gets
        /// `Op::WriteZeroes` requests of at most `max_sectors` sectors
        /// (`blk_queue_max_write_zeroes_sectors`).
        fn write_zeroes(max_sectors: u32) { write_zeroes = Some(max_sectors) }
        // ANCHOR_END: limits
    }

    fn check(&self) -> Result {
        let lbs = self.logical_block_size;
        let pbs = self.physical_block_size;
        let block_ok =
            |size: u32| size.is_power_of_two() && size >= SECTOR_SIZE && size as usize <= PAGE_SIZE;
        if !block_ok(lbs) || !pbs.is_power_of_two() || pbs < lbs {
            return Err(EINVAL);
        }
        // The capacity is in sectors; it must be whole logical blocks.
        if !self
            .capacity_sectors
            .is_multiple_of(u64::from(lbs / SECTOR_SIZE))
        {
            return Err(EINVAL);
        }
        let too_small = |sectors: u32| sectors < lbs / SECTOR_SIZE;
        if self.max_segments == Some(0) || self.max_hw_sectors.is_some_and(too_small) {
            return Err(EINVAL);
        }
        if !self.io_opt.is_multiple_of(lbs)
            || !self.io_min.is_multiple_of(lbs)
            || self
                .discard
                .is_some_and(|(sectors, segments)| too_small(sectors) || segments == 0)
            || self.write_zeroes.is_some_and(too_small)
        {
            return Err(EINVAL);
        }
        if self
            .virt_boundary
            .is_some_and(|m| m != 0 && !(m + 1).is_power_of_two())
            || self
                .dma_alignment
                .is_some_and(|m| !(m + 1).is_power_of_two())
        {
            return Err(EINVAL);
        }
        Ok(())
    }

    /// `__blk_mq_alloc_disk` on 6.1: the limits are set on the queue
    /// afterwards (`build`), with the `blk_queue_*` setters.
    #[cfg(not(kernel_queue_limits))]
    fn alloc_disk<T: Operations>(
        &self,
        tag_set: &TagSet<T>,
        queue_data: *mut T::QueueData,
        _dma_alignment: Option<core::ffi::c_int>,
    ) -> *mut bindings::gendisk {
        // SAFETY: the tag set is allocated (type invariant of `TagSet`) and
        // outlives the disk (the `GenDisk` holds its `Arc`); the queue data
        // lives until the `GenDisk` drops it, after the disk is gone; the
        // key is static.
        unsafe {
            bindings::__blk_mq_alloc_disk(
                tag_set.as_raw(),
                queue_data.cast(),
                QUEUE_LOCK_CLASS.as_raw(),
            )
        }
    }

    /// `__blk_mq_alloc_disk` on 6.11+: the limits and features go with
    /// the allocation (`struct queue_limits`; the `blk_queue_*` setters
    /// are gone), and the block layer checks them (`blk_validate_limits`).
    /// Zero means "the default" for every limit left unset.
    #[cfg(kernel_queue_limits)]
    fn alloc_disk<T: Operations>(
        &self,
        tag_set: &TagSet<T>,
        queue_data: *mut T::QueueData,
        dma_alignment: Option<core::ffi::c_int>,
    ) -> *mut bindings::gendisk {
        // SAFETY: all zeroes is a valid `struct queue_limits` (integers and
        // flags), and the one `blk_validate_limits` fills with defaults.
        let mut lim: bindings::queue_limits = unsafe { core::mem::zeroed() };
        lim.logical_block_size = self.logical_block_size;
        lim.physical_block_size = self.physical_block_size;
        lim.max_hw_sectors = self.max_hw_sectors.unwrap_or(0);
        lim.max_segments = self.max_segments.unwrap_or(0);
        // `check` accepted only masks that fit (a power of two minus one).
        lim.virt_boundary_mask = self.virt_boundary.unwrap_or(0) as core::ffi::c_ulong;
        lim.dma_alignment = dma_alignment.map_or(0, |m| m as core::ffi::c_uint);
        if self.write_cache {
            lim.features |= bindings::RUST_CONST_HELPER_BLK_FEAT_WRITE_CACHE;
            if self.fua {
                lim.features |= bindings::RUST_CONST_HELPER_BLK_FEAT_FUA;
            }
        }
        if self.rotational {
            lim.features |= bindings::RUST_CONST_HELPER_BLK_FEAT_ROTATIONAL;
        }
        lim.io_min = self.io_min;
        lim.io_opt = self.io_opt;
        if let Some((sectors, segments)) = self.discard {
            lim.discard_granularity = self.logical_block_size;
            lim.max_hw_discard_sectors = sectors;
            lim.max_user_discard_sectors = u32::MAX;
            lim.max_discard_segments = segments;
        }
        lim.max_write_zeroes_sectors = self.write_zeroes.unwrap_or(0);
        // SAFETY: as for 6.1's `alloc_disk`; `lim` is only read during the
        // call (copied into the queue).
        unsafe {
            bindings::__blk_mq_alloc_disk(
                tag_set.as_raw(),
                &mut lim,
                queue_data.cast(),
                QUEUE_LOCK_CLASS.as_raw(),
            )
        }
    }

    // ANCHOR: build
    /// Makes the disk `name` on `tag_set`'s queues with `queue_data`
    /// (`__blk_mq_alloc_disk`), applies the settings and adds it
    /// (`add_disk`): `/dev/NAME` appears, and blk-mq may call `queue_rq`
    /// before this returns (the partition scan reads the disk).
    /// `EINVAL` for settings out of range or a name longer than 31 bytes.
    ///
    /// # Context
    ///
    /// May sleep (allocating the disk and `add_disk`): process context only.
    pub fn build<T: Operations>(
        self,
        name: fmt::Arguments<'_>,
        tag_set: Arc<TagSet<T>>,
        queue_data: T::QueueData,
    ) -> Result<GenDisk<T>> {
        self.check()?;
        let dma_alignment = self
            .dma_alignment
            .map(core::ffi::c_int::try_from)
            .transpose()
            .map_err(|_| EINVAL)?;
        let queue_data = KBox::new(queue_data, GFP_KERNEL)?;
        let data = core::ptr::from_ref::<T::QueueData>(&queue_data).cast::<c_void>();
        // INVARIANT: `data` is the queue data, which the `GenDisk` drops
        // only after it closed the gate.
        let gate = Arc::pin_init(
            pin_init!(Gate {
                data <- data,
                state <- new_mutex!(GateState { live: true, users: 0 }),
                idle <- new_condvar!(),
            }),
            GFP_KERNEL,
        )?;
        let gate = Arc::into_raw(gate);
        let queue_data_ptr = KBox::into_raw(queue_data);
        let disk = from_err_ptr(self.alloc_disk(&tag_set, queue_data_ptr, dma_alignment));
        // SAFETY: `queue_data_ptr` came from `KBox::into_raw` above; on
        // failure no queue points at it.
        let queue_data = unsafe { KBox::from_raw(queue_data_ptr) };
        let disk = match disk {
            Ok(disk) => disk,
            Err(e) => {
                // SAFETY: from `into_raw` above, taken back once; no disk
                // points at it.
                drop(unsafe { Arc::from_raw(gate) });
                return Err(e);
            }
        };
        // INVARIANT: a disk from `__blk_mq_alloc_disk` on `tag_set` with
        // `queue_data`, not added yet.
        let mut this = GenDisk {
            disk,
            added: false,
            queue_data,
            gate,
            _tag_set: tag_set,
        };
        this.set_name(name)?;
        // 6.1: the limits are set on the new queue (6.11+: at allocation).
        #[cfg(not(kernel_queue_limits))]
        // SAFETY: the disk is new and not added: nothing else uses its
        // queue yet.
        unsafe {
            self.set_limits(bindings::rust_helper_disk_queue(disk), dma_alignment);
        }
        // SAFETY: the disk is new and not added: nothing reads its
        // operations, data or capacity yet; `gate` lives as long as the
        // disk may be opened (see `Gate`).
        unsafe {
            bindings::rust_helper_disk_set_private_data(disk, gate.cast_mut().cast());
            bindings::rust_helper_disk_set_fops(disk, &DiskVTable::<T>::VTABLE);
            bindings::set_capacity(disk, self.capacity_sectors);
        }
        // SAFETY: the disk is set up and not added yet.
        to_result(unsafe { bindings::rust_helper_add_disk(disk) })?;
        // INVARIANT: the disk is added now.
        this.added = true;
        Ok(this)
    }
    // ANCHOR_END: build

    // ANCHOR: set_limits
    /// Applies the builder's queue limits, checked by `check`, to `q` on
    /// 6.1 (6.11+: `alloc_disk` passes them).
    ///
    /// # Safety
    ///
    /// `q` is the queue of a disk that is not added yet: nothing else reads
    /// or writes its limits.
    #[cfg(not(kernel_queue_limits))]
    unsafe fn set_limits(&self, q: *mut bindings::request_queue, dma_alignment: Option<c_int>) {
        // SAFETY: the caller guarantees that `q` is live and ours alone;
        // each call takes a value checked by `check`.
        unsafe {
            bindings::blk_queue_logical_block_size(q, self.logical_block_size);
            bindings::blk_queue_physical_block_size(q, self.physical_block_size);
            if let Some(sectors) = self.max_hw_sectors {
                bindings::blk_queue_max_hw_sectors(q, sectors);
            }
            if let Some(segments) = self.max_segments {
                bindings::blk_queue_max_segments(q, segments);
            }
            if let Some(mask) = self.virt_boundary {
                bindings::blk_queue_virt_boundary(q, mask);
            }
            if let Some(mask) = dma_alignment {
                bindings::blk_queue_dma_alignment(q, mask);
            }
            bindings::blk_queue_write_cache(q, self.write_cache, self.fua);
            if !self.rotational {
                bindings::rust_helper_blk_queue_set_nonrot(q);
            }
            if self.io_min != 0 {
                bindings::blk_queue_io_min(q, self.io_min);
            }
            bindings::blk_queue_io_opt(q, self.io_opt);
            if let Some((sectors, segments)) = self.discard {
                bindings::rust_helper_blk_queue_discard_granularity(q, self.logical_block_size);
                bindings::blk_queue_max_discard_sectors(q, sectors);
                bindings::blk_queue_max_discard_segments(q, segments);
            }
            if let Some(sectors) = self.write_zeroes {
                bindings::blk_queue_max_write_zeroes_sectors(q, sectors);
            }
        }
    }
    // ANCHOR_END: set_limits
}

// ANCHOR: gen_disk
/// A disk of the block layer: `/dev/NAME` while it lives. Dropping it
/// removes the disk (`del_gendisk`, which waits for its requests to end)
/// and frees it (`put_disk`).
///
/// # Invariants
///
/// `disk` comes from `__blk_mq_alloc_disk` on `_tag_set` with `queue_data`
/// as its queue's `queuedata`; `added` says whether `add_disk` succeeded.
/// `gate`, from `Arc::into_raw`, is the disk's `private_data` and holds
/// the `GenDisk`'s count on the `Gate`, whose `data` is `queue_data`.
/// The `GenDisk` holds the only reference the driver has on it.
pub struct GenDisk<T: Operations> {
    disk: *mut bindings::gendisk,
    added: bool,
    queue_data: KBox<T::QueueData>,
    gate: *const Gate,
    _tag_set: Arc<TagSet<T>>,
}
// ANCHOR_END: gen_disk

// SAFETY: the disk may be removed from any thread; the queue data is
// `Send + Sync`, and the tag set's `Arc` is `Send`.
unsafe impl<T: Operations> Send for GenDisk<T> {}
// SAFETY: `&GenDisk` only reads the queue data (`Sync`) and calls C
// functions that synchronise themselves (freeze, quiesce, capacity).
unsafe impl<T: Operations> Sync for GenDisk<T> {}

impl<T: Operations> GenDisk<T> {
    fn set_name(&mut self, name: fmt::Arguments<'_>) -> Result {
        /// Writes into `disk_name`, keeping room for the final NUL.
        struct NameWriter {
            buf: *mut u8,
            len: usize,
            cap: usize,
        }
        impl Write for NameWriter {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                if s.len() > self.cap - 1 - self.len || s.as_bytes().contains(&0) {
                    return Err(fmt::Error);
                }
                // SAFETY: `buf` has `cap` bytes, of which `len + s.len()
                // < cap` are written (checked above).
                unsafe {
                    core::ptr::copy_nonoverlapping(s.as_ptr(), self.buf.add(self.len), s.len())
                };
                self.len += s.len();
                Ok(())
            }
        }
        let mut writer = NameWriter {
            // SAFETY: the disk is live (type invariant); its name is a
            // `char[DISK_NAME_LEN]` that nothing else writes before
            // `add_disk`.
            buf: unsafe { bindings::rust_helper_disk_name(self.disk) }.cast(),
            len: 0,
            cap: bindings::RUST_CONST_HELPER_DISK_NAME_LEN as usize,
        };
        if writer.write_fmt(name).is_err() || writer.len == 0 {
            return Err(EINVAL);
        }
        // SAFETY: `len < cap` (kept by `write_str`).
        unsafe { writer.buf.add(writer.len).write(0) };
        Ok(())
    }

    /// The data given to [`GenDiskBuilder::build`].
    pub fn queue_data(&self) -> &T::QueueData {
        &self.queue_data
    }

    fn queue(&self) -> *mut bindings::request_queue {
        // SAFETY: the disk is live (type invariant).
        unsafe { bindings::rust_helper_disk_queue(self.disk) }
    }

    /// Changes the size, in 512-byte sectors (`set_capacity`).
    pub fn set_capacity(&self, sectors: u64) {
        // SAFETY: the disk is live (type invariant); the size is read
        // atomically by the block layer.
        unsafe { bindings::set_capacity(self.disk, sectors) };
    }

    /// Waits for every request of the disk to end and holds new ones back
    /// (`blk_mq_freeze_queue`) until the guard is dropped.
    ///
    /// # Context
    ///
    /// May sleep: it waits until no request is in flight. Process context only.
    pub fn freeze(&self) -> QueueGuard<'_> {
        self.hold(QueueHold::Freeze)
    }

    /// Stops calls to `queue_rq` and waits for those running
    /// (`blk_mq_quiesce_queue`) until the guard is dropped: requests the
    /// device holds are unaffected (a controller reset's first step).
    ///
    /// # Context
    ///
    /// May sleep: it waits for running `queue_rq` calls (an RCU grace period).
    /// Process context only.
    pub fn quiesce(&self) -> QueueGuard<'_> {
        self.hold(QueueHold::Quiesce)
    }

    fn hold(&self, hold: QueueHold) -> QueueGuard<'_> {
        let queue = self.queue();
        // SAFETY: the queue is live while the disk is (type invariant);
        // the guard undoes this once.
        unsafe {
            match hold {
                QueueHold::Freeze => bindings::blk_mq_freeze_queue(queue),
                QueueHold::Quiesce => bindings::blk_mq_quiesce_queue(queue),
            }
        };
        // INVARIANT: held just now; the guard borrows the disk.
        QueueGuard {
            queue,
            hold,
            _disk: core::marker::PhantomData,
        }
    }

    /// The device is gone: fail all I/O to the disk from now on
    /// (`blk_mark_disk_dead`), before it is dropped.
    pub fn mark_dead(&self) {
        // SAFETY: the disk is live (type invariant).
        unsafe { bindings::blk_mark_disk_dead(self.disk) };
    }
}

impl<T: Operations> Drop for GenDisk<T> {
    fn drop(&mut self) {
        // SAFETY: the gate lives while the `GenDisk` holds its count (type
        // invariant), given back below.
        let gate = unsafe { Arc::from_raw(self.gate) };
        // No `ioctl` reaches the queue data from here on.
        gate.close();
        if self.added {
            // SAFETY: the disk was added (type invariant) and is deleted
            // once; this waits for its requests and tears its queue down
            // (the disk owns it), calling `exit_hctx`.
            unsafe { bindings::del_gendisk(self.disk) };
        }
        // SAFETY: our reference, dropped once; an open of the disk may
        // still hold another (and the module: the disk's `owner`).
        unsafe { bindings::put_disk(self.disk) };
        // The `GenDisk`'s count; an open file of the disk may hold others.
        drop(gate);
        // Then the queue data and the tag set's `Arc` (fields), which no
        // queue uses any more.
    }
}

/// How a [`QueueGuard`] holds its queue.
#[derive(Clone, Copy)]
enum QueueHold {
    Freeze,
    Quiesce,
}

/// A frozen ([`GenDisk::freeze`]) or quiesced ([`GenDisk::quiesce`])
/// queue; unfrozen or unquiesced when dropped.
///
/// # Invariants
///
/// `queue` is the queue of a disk borrowed for `'a`, frozen or quiesced
/// (as `hold` says) once by this guard.
pub struct QueueGuard<'a> {
    queue: *mut bindings::request_queue,
    hold: QueueHold,
    _disk: core::marker::PhantomData<&'a ()>,
}

impl Drop for QueueGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the queue is live and was held so by this guard (type
        // invariants).
        unsafe {
            match self.hold {
                QueueHold::Freeze => bindings::blk_mq_unfreeze_queue(self.queue),
                QueueHold::Quiesce => bindings::blk_mq_unquiesce_queue(self.queue),
            }
        };
    }
}
