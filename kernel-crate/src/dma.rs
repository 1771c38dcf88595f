//! DMA: memory the device reads and writes by bus address. The DMA mask,
//! coherent allocations (queues, identify buffers), a pool of small
//! coherent blocks (PRP lists), and scatterlists mapped for a device (a
//! request's pages).
//!
//! C headers: [`include/linux/dma-mapping.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/dma-mapping.h),
//! [`include/linux/dmapool.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/dmapool.h)
//!
//! The device may write coherent memory at any moment: this crate never
//! makes a Rust reference (`&T`, `&[T]`) to it. Elements are read and
//! written one at a time with volatile accesses (C's `READ_ONCE` and
//! `WRITE_ONCE`), so the compiler neither caches nor tears nor invents
//! them; ordering against the device (a doorbell write after the command
//! is in memory) comes from the MMIO accessors, which are ordered after
//! earlier memory writes on x86 (`writel` includes the barrier C needs).

use core::ffi::CStr;
use core::marker::PhantomData;
use core::ops::Deref;
use core::ptr::NonNull;

use crate::alloc::Flags;
use crate::bindings;
use crate::device::{Device, DeviceRef};
use crate::error::{code::EINVAL, code::ENOMEM, code::ERANGE, to_result, Result};
use crate::scatterlist::SgTable;
use crate::sync::Arc;

/// A bus address, as the device sees memory (`dma_addr_t`).
pub type DmaAddress = u64;

/// Sets the device's streaming and coherent DMA masks to `bits` bits of
/// address (`dma_set_mask_and_coherent`).
pub fn set_mask_and_coherent(dev: &Device, bits: u32) -> Result {
    let mask = match bits {
        64 => u64::MAX,
        1..=63 => (1u64 << bits) - 1,
        _ => return Err(EINVAL),
    };
    // SAFETY: the device is alive (type invariants of `Device`).
    to_result(unsafe { bindings::rust_helper_dma_set_mask_and_coherent(dev.as_raw(), mask) })
        .map(drop)
}

// ANCHOR: element
/// A type that may live in DMA memory: the device may write any bytes
/// into it.
///
/// # Safety
///
/// Every bit pattern of `size_of::<Self>()` bytes is a valid value, and the
/// type has no padding (writing one puts no uninitialised byte in memory
/// the device reads).
pub unsafe trait Element: Copy + Send + Sync + 'static {}
// ANCHOR_END: element

// SAFETY: integers: every bit pattern is a value, no padding.
unsafe impl Element for u8 {}
// SAFETY: as above.
unsafe impl Element for u16 {}
// SAFETY: as above.
unsafe impl Element for u32 {}
// SAFETY: as above.
unsafe impl Element for u64 {}
// SAFETY: an array of elements has no padding between them and every bit
// pattern of each is valid.
unsafe impl<T: Element, const N: usize> Element for [T; N] {}

/// `count` elements of `T` in DMA memory, at bus address `handle`: what a
/// [`CoherentAllocation`] and a [`PoolBlock`] both are (reached through
/// them by `Deref`). Each element is read and written on its own with a
/// volatile access.
///
/// # Invariants
///
/// `cpu` points at `count` elements of `T`, aligned for `T`, valid for
/// reads and writes while the owner of this view (an allocation) is
/// alive; the device reaches them at `handle`.
pub struct Elements<T> {
    cpu: NonNull<T>,
    count: usize,
    handle: DmaAddress,
}

impl<T: Element> Elements<T> {
    /// The bus address of element 0, for the device.
    pub fn dma_handle(&self) -> DmaAddress {
        self.handle
    }

    /// The bus address of element `index`; `ERANGE` past the end.
    pub fn dma_handle_of(&self, index: usize) -> Result<DmaAddress> {
        if index >= self.count {
            return Err(ERANGE);
        }
        Ok(self.handle + (index * size_of::<T>()) as u64)
    }

    /// How many elements.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Reads element `index`; `ERANGE` past the end.
    pub fn read(&self, index: usize) -> Result<T> {
        if index >= self.count {
            return Err(ERANGE);
        }
        // SAFETY: in bounds, valid (type invariants), and any bit pattern
        // is a `T` (`Element`); volatile because the device writes too.
        Ok(unsafe { self.cpu.as_ptr().add(index).read_volatile() })
    }

    /// Writes element `index`; `ERANGE` past the end.
    pub fn write(&self, index: usize, value: T) -> Result {
        if index >= self.count {
            return Err(ERANGE);
        }
        // SAFETY: in bounds and valid (type invariants); volatile because
        // the device reads it.
        unsafe { self.cpu.as_ptr().add(index).write_volatile(value) };
        Ok(())
    }
}

// ANCHOR: coherent
/// `count` elements of `T` in coherent DMA memory (`dma_alloc_coherent`),
/// zeroed when allocated, freed on drop.
///
/// # Invariants
///
/// `elems` is a coherent allocation of `dev`, `count * size_of::<T>()`
/// bytes, owned by this value.
pub struct CoherentAllocation<T: Element> {
    dev: DeviceRef,
    elems: Elements<T>,
}
// ANCHOR_END: coherent

// SAFETY: the memory is owned by the allocation and accessed only with
// volatile element accesses, which any thread may do; `T: Send`.
unsafe impl<T: Element> Send for CoherentAllocation<T> {}
// SAFETY: as above: `&self` methods only do single volatile accesses.
unsafe impl<T: Element> Sync for CoherentAllocation<T> {}

impl<T: Element> CoherentAllocation<T> {
    /// Allocates `count` zeroed elements for `dev`.
    pub fn alloc(dev: &Device, count: usize, flags: Flags) -> Result<Self> {
        let size = count.checked_mul(size_of::<T>()).ok_or(ENOMEM)?;
        // Coherent memory is page aligned: enough for any `T` up to that.
        if size == 0 || align_of::<T>() > crate::page::PAGE_SIZE {
            return Err(EINVAL);
        }
        let mut handle: bindings::dma_addr_t = 0;
        let gfp = flags.as_raw() | bindings::RUST_CONST_HELPER___GFP_ZERO;
        // SAFETY: the device is alive; `handle` is valid for writes.
        let cpu = unsafe { bindings::dma_alloc_attrs(dev.as_raw(), size, &mut handle, gfp, 0) };
        let cpu = NonNull::new(cpu.cast::<T>()).ok_or(ENOMEM)?;
        // INVARIANT: just allocated for `dev`, `size` bytes at `handle`
        // (page aligned, so aligned for `T`: checked above).
        Ok(CoherentAllocation {
            dev: DeviceRef::new(dev),
            elems: Elements { cpu, count, handle },
        })
    }
}

impl<T: Element> Deref for CoherentAllocation<T> {
    type Target = Elements<T>;

    fn deref(&self) -> &Elements<T> {
        &self.elems
    }
}

impl<T: Element> Drop for CoherentAllocation<T> {
    fn drop(&mut self) {
        let size = self.elems.count * size_of::<T>();
        // SAFETY: allocated by `dma_alloc_attrs` for `dev` with this size
        // and handle (type invariants), freed once.
        unsafe {
            bindings::dma_free_attrs(
                self.dev.as_raw(),
                size,
                self.elems.cpu.as_ptr().cast(),
                self.elems.handle,
                0,
            )
        };
    }
}

// ANCHOR: pool
/// A pool of coherent blocks of `count` elements of `T` each
/// (`dma_pool_create`): cheaper than a coherent allocation per block, for
/// small blocks made and freed often (a request's PRP list).
///
/// # Invariants
///
/// `ptr` is a pool of `dev` whose blocks hold `count` elements of `T`,
/// destroyed on drop; every block holds an `Arc` on the pool, so none is
/// left then.
pub struct Pool<T: Element> {
    ptr: NonNull<bindings::dma_pool>,
    count: usize,
    _dev: DeviceRef,
    _elems: PhantomData<T>,
}
// ANCHOR_END: pool

// SAFETY: `dma_pool_alloc` and `dma_pool_free` lock inside, and the pool
// may be destroyed from any thread.
unsafe impl<T: Element> Send for Pool<T> {}
// SAFETY: as above.
unsafe impl<T: Element> Sync for Pool<T> {}

impl<T: Element> Pool<T> {
    /// A pool named `name` (in `/sys/.../pools`) of blocks of `count`
    /// elements, each block aligned to `align` bytes (a power of two) and
    /// never crossing a multiple of `boundary` bytes (0: no boundary).
    ///
    /// # Context
    ///
    /// May sleep (`dma_pool_create` allocates with `GFP_KERNEL`): process
    /// context only.
    pub fn new(
        dev: &Device,
        name: &CStr,
        count: usize,
        align: usize,
        boundary: usize,
    ) -> Result<Arc<Self>> {
        let size = count.checked_mul(size_of::<T>()).ok_or(ENOMEM)?;
        // Every block must be aligned for `T`: `Elements` relies on it.
        if size == 0 || !align.is_power_of_two() || align < align_of::<T>() {
            return Err(EINVAL);
        }
        // SAFETY: the device is alive; `dma_pool_create` copies `name`.
        let ptr = unsafe {
            bindings::dma_pool_create(name.as_ptr(), dev.as_raw(), size, align, boundary)
        };
        let ptr = NonNull::new(ptr).ok_or(ENOMEM)?;
        // INVARIANT: a new pool of `dev` with blocks of `count` elements.
        let pool = Pool {
            ptr,
            count,
            _dev: DeviceRef::new(dev),
            _elems: PhantomData,
        };
        Ok(Arc::new(pool, crate::alloc::flags::GFP_KERNEL)?)
    }

    // ANCHOR: pool_alloc
    /// Takes a zeroed block from the pool (`dma_pool_zalloc`). With
    /// `GFP_ATOMIC` it does not sleep. (An associated function: the block
    /// keeps `pool` alive.)
    ///
    /// Always zeroed, unlike C's `dma_pool_alloc`: a block
    /// comes back with what its last user (or the device) left there, and
    /// its elements can be read, and handed to user space, before the
    /// driver writes them. The cost is clearing the block (a PRP list: one
    /// page, a few hundred nanoseconds), which the device's fill of it
    /// dwarfs.
    pub fn alloc(pool: &Arc<Self>, flags: Flags) -> Result<PoolBlock<T>> {
        // `dma_pool_zalloc` is a static inline that does just this.
        let flags = flags | crate::alloc::flags::__GFP_ZERO;
        let mut handle: bindings::dma_addr_t = 0;
        // SAFETY: the pool is alive (type invariants); `handle` is valid
        // for writes.
        let cpu =
            unsafe { bindings::dma_pool_alloc(pool.ptr.as_ptr(), flags.as_raw(), &mut handle) };
        let cpu = NonNull::new(cpu.cast::<T>()).ok_or(ENOMEM)?;
        // INVARIANT: a block of this pool, `count` elements, at `handle`,
        // aligned as the pool's blocks are (at least for `T`, see `new`).
        Ok(PoolBlock {
            pool: pool.clone(),
            elems: Elements {
                cpu,
                count: pool.count,
                handle,
            },
        })
    }
    // ANCHOR_END: pool_alloc
}

impl<T: Element> Drop for Pool<T> {
    fn drop(&mut self) {
        // SAFETY: the pool is this value's and no block is left (type
        // invariants).
        unsafe { bindings::dma_pool_destroy(self.ptr.as_ptr()) };
    }
}

/// A block of a [`Pool`], returned to it on drop.
///
/// # Invariants
///
/// `elems` is a block of `pool`.
pub struct PoolBlock<T: Element> {
    pool: Arc<Pool<T>>,
    elems: Elements<T>,
}

// SAFETY: as for `CoherentAllocation`.
unsafe impl<T: Element> Send for PoolBlock<T> {}
// SAFETY: as for `CoherentAllocation`.
unsafe impl<T: Element> Sync for PoolBlock<T> {}

impl<T: Element> Deref for PoolBlock<T> {
    type Target = Elements<T>;

    fn deref(&self) -> &Elements<T> {
        &self.elems
    }
}

impl<T: Element> Drop for PoolBlock<T> {
    fn drop(&mut self) {
        // SAFETY: a block of this pool at this handle (type invariants),
        // freed once; the `Arc` keeps the pool alive until after this.
        unsafe {
            bindings::dma_pool_free(
                self.pool.ptr.as_ptr(),
                self.elems.cpu.as_ptr().cast(),
                self.elems.handle,
            )
        };
    }
}

/// Which way the data of a streaming mapping goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The device reads it (a write to a disk).
    ToDevice,
    /// The device writes it (a read from a disk).
    FromDevice,
    /// Both.
    Bidirectional,
}

impl Direction {
    fn as_raw(self) -> bindings::dma_data_direction {
        match self {
            Direction::ToDevice => bindings::DMA_TO_DEVICE,
            Direction::FromDevice => bindings::DMA_FROM_DEVICE,
            Direction::Bidirectional => bindings::DMA_BIDIRECTIONAL,
        }
    }
}

// ANCHOR: sg_mapping
/// A request's scatterlist mapped for a device (`dma_map_sg`): the device
/// may use its entries' bus addresses while the request has the mapping.
///
/// Only [`Request::map_dma`](crate::block::mq::Request::map_dma) makes one,
/// and the request keeps it: its pages are the request's, and every way of
/// giving the request back to blk-mq (which may then free them) unmaps them
/// first. The driver sees the mapping through the request
/// ([`Request::dma_mapping`](crate::block::mq::Request::dma_mapping)) and
/// takes the table back with
/// [`Request::unmap_dma`](crate::block::mq::Request::unmap_dma). The
/// mapping owns the table, so nothing can refill or reuse it while the
/// device may still touch its pages.
///
/// Mainline Rust for Linux has no block-layer DMA mapping yet (its
/// `scatterlist` module maps an `SGTable` that owns its pages); this crate
/// ties the mapping to the request instead, because the pages are the
/// request's and a mapping that outlived its request (made from a table
/// filled by an earlier request, or dropped after `end`) would have the
/// device, or a bounce buffer's copy-back at unmap, write pages the block
/// layer has freed.
///
/// # Invariants
///
/// The first `table.len()` entries of `table` are mapped for `dev` in
/// direction `dir`, which made `dma_count` DMA segments.
pub struct SgMapping {
    table: SgTable,
    dev: DeviceRef,
    dir: Direction,
    dma_count: usize,
}
// ANCHOR_END: sg_mapping

/// A failed [`Request::map_dma`](crate::block::mq::Request::map_dma): the
/// error, and the table back.
pub struct MapSgError {
    /// Why it failed.
    pub error: crate::error::Error,
    /// The table, as it was.
    pub table: SgTable,
}

impl SgMapping {
    /// Maps the filled entries of `table` for `dev`. For `Request::map_dma`
    /// only, just after it filled the table with the request's segments:
    /// the request keeps the mapping and drops it before its pages go.
    pub(crate) fn map(
        dev: &Device,
        mut table: SgTable,
        dir: Direction,
    ) -> Result<Self, MapSgError> {
        let Ok(nents) = core::ffi::c_int::try_from(table.len()) else {
            return Err(MapSgError {
                error: EINVAL,
                table,
            });
        };
        if nents == 0 {
            return Err(MapSgError {
                error: EINVAL,
                table,
            });
        }
        // SAFETY: the device is alive; the table's first `nents` entries
        // are an initialised, filled scatterlist (type invariants of
        // `SgTable`) that this mapping owns until it is unmapped.
        let count = unsafe {
            bindings::dma_map_sg_attrs(dev.as_raw(), table.as_raw(), nents, dir.as_raw(), 0)
        };
        if count == 0 {
            return Err(MapSgError {
                error: ENOMEM,
                table,
            });
        }
        // INVARIANT: just mapped, `count` DMA segments.
        Ok(SgMapping {
            table,
            dev: DeviceRef::new(dev),
            dir,
            dma_count: count as usize,
        })
    }

    /// The DMA segments, in order: each one's bus address and length.
    pub fn iter(&self) -> impl Iterator<Item = (DmaAddress, u32)> + '_ {
        (self.table.iter())
            .take(self.dma_count)
            .map(|e| (e.dma_address(), e.dma_len()))
    }

    /// How many DMA segments.
    pub fn len(&self) -> usize {
        self.dma_count
    }

    /// Whether there is none: never, a mapping has at least one.
    pub fn is_empty(&self) -> bool {
        self.dma_count == 0
    }

    /// Unmaps the entries (the device must be done with them) and gives
    /// the table back ([`Request::unmap_dma`](crate::block::mq::Request::unmap_dma)).
    pub(crate) fn unmap(self) -> SgTable {
        let mut this = core::mem::ManuallyDrop::new(self);
        this.unmap_in_place();
        // SAFETY: `this` is never used or dropped again; each field is
        // read out once.
        let (table, _dev) = unsafe { (core::ptr::read(&this.table), core::ptr::read(&this.dev)) };
        table
    }

    fn unmap_in_place(&mut self) {
        // `new` checked that the length fits.
        let nents = self.table.len() as core::ffi::c_int;
        let sg = self.table.as_raw();
        // SAFETY: mapped with these arguments (type invariants), unmapped
        // once: `unmap` consumes the mapping and `Drop` runs only without
        // it.
        unsafe { bindings::dma_unmap_sg_attrs(self.dev.as_raw(), sg, nents, self.dir.as_raw(), 0) };
    }
}

impl Drop for SgMapping {
    fn drop(&mut self) {
        self.unmap_in_place();
    }
}
