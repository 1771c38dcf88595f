//! Memory-mapped I/O: a region of device registers mapped into the
//! kernel's address space, with bounds-checked 32- and 64-bit accesses.
//! Who maps the region (a PCI BAR: [`crate::pci::Bar`]) owns it and lends
//! it out as an [`Io`]; this module knows nothing of buses.
//!
//! C header: [`include/asm-generic/io.h`](https://elixir.bootlin.com/linux/v6.1/source/include/asm-generic/io.h)
//! (`readl`, `writel`, `readq`, `writeq`)
//!
//! A register at a constant offset is read with `io.read32::<OFFSET>()`:
//! the offset is checked against `SIZE`, the length the driver asked for
//! when it mapped the region, at compile time. An offset computed at run
//! time (a doorbell `0x1000 + (2 * qid) << stride`) goes through
//! `try_read32(offset)`, which checks it against the region's real length
//! and returns `ERANGE` past it. Both also refuse misaligned offsets.
//!
//! ```ignore
//! // In a PCI driver's probe, with `pdev: &pci::Device`:
//! let bar = pdev.iomap_region::<0x1000>(0, c_str!("mydrv"))?;
//! let version = bar.read32::<0x8>();
//! bar.try_write32(0x1000 + 8, 1)?;
//! ```

use core::ffi::c_void;

use crate::bindings;
use crate::error::{code::ENODEV, code::ERANGE, Result};

// ANCHOR: io_raw
/// The address and length of a mapped register region, at least `SIZE`
/// bytes long. It promises nothing about the mapping: only its owner
/// (a [`crate::pci::Bar`]) knows how long it lives, and lends it out as
/// an [`Io`] ([`Io::from_raw`]).
///
/// # Invariants
///
/// `len >= SIZE` and `len > 0`.
pub struct IoRaw<const SIZE: usize> {
    addr: *mut c_void,
    len: usize,
}
// ANCHOR_END: io_raw

// SAFETY: an address and a length; what they point at is only touched
// through an `Io`, whose lender vouches for it.
unsafe impl<const SIZE: usize> Send for IoRaw<SIZE> {}
// SAFETY: as for `Send`: `&IoRaw` gives no access to the registers.
unsafe impl<const SIZE: usize> Sync for IoRaw<SIZE> {}

impl<const SIZE: usize> IoRaw<SIZE> {
    /// The region of `len` bytes at `addr`; `ENODEV` if it is empty or
    /// shorter than `SIZE`.
    pub fn new(addr: *mut c_void, len: usize) -> Result<Self> {
        if len < SIZE || len == 0 {
            return Err(ENODEV);
        }
        // INVARIANT: checked just above.
        Ok(IoRaw { addr, len })
    }

    /// The start of the region.
    pub fn addr(&self) -> *mut c_void {
        self.addr
    }

    /// The region's length in bytes (at least `SIZE`).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region is empty: never (type invariants).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

// ANCHOR: io
/// A mapped register region, at least `SIZE` bytes long, as its owner
/// lends it: every access through it is inside the mapping.
///
/// # Invariants
///
/// The `IoRaw`'s `len` bytes at its `addr` are an MMIO mapping for as
/// long as this value is borrowed.
#[repr(transparent)]
pub struct Io<const SIZE: usize>(IoRaw<SIZE>);
// ANCHOR_END: io

impl<const SIZE: usize> Io<SIZE> {
    /// Lends `raw` as registers.
    ///
    /// # Safety
    ///
    /// `raw`'s `len` bytes at its `addr` must be an MMIO mapping (as
    /// `ioremap` and `pci_iomap` return) that stays mapped while the
    /// returned reference lives.
    pub unsafe fn from_raw(raw: &IoRaw<SIZE>) -> &Self {
        // SAFETY: `Io` is a `repr(transparent)` wrapper of `IoRaw`, so the
        // cast keeps layout and lifetime. INVARIANT: the caller promises
        // the mapping while the reference lives.
        unsafe { &*core::ptr::from_ref(raw).cast::<Self>() }
    }

    /// The region's length in bytes (at least `SIZE`).
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether the region is empty: never, a mapped region has a length.
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// Whether an access of `width` bytes at `offset` stays inside `limit`
    /// and is aligned to its width.
    const fn fits(offset: usize, width: usize, limit: usize) -> bool {
        offset.is_multiple_of(width) && offset <= limit && width <= limit - offset
    }

    /// The address of an access of `width` bytes at `offset`, checked
    /// against the region's real length.
    fn checked(&self, offset: usize, width: usize) -> Result<*mut c_void> {
        if Self::fits(offset, width, self.0.len) {
            Ok(self.0.addr.wrapping_add(offset))
        } else {
            Err(ERANGE)
        }
    }
}

/// The four accessors of one width: a compile-time checked pair and a
/// run-time checked pair.
macro_rules! accessors {
    ($ty:ty, $read:ident, $write:ident, $try_read:ident, $try_write:ident,
     $c_read:ident, $c_write:ident) => {
        impl<const SIZE: usize> Io<SIZE> {
            // ANCHOR: read
            #[doc = concat!("Reads the `", stringify!($ty), "` register at `OFFSET`, checked at compile time.")]
            pub fn $read<const OFFSET: usize>(&self) -> $ty {
                const {
                    assert!(
                        Self::fits(OFFSET, size_of::<$ty>(), SIZE),
                        "MMIO read past the region's size, or misaligned"
                    )
                };
                // SAFETY: `OFFSET + width <= SIZE <= len` (checked above and
                // by `IoRaw`'s invariants), and the mapping lives while `self`
                // is borrowed (type invariants).
                unsafe { bindings::$c_read(self.0.addr.wrapping_add(OFFSET)) }
            }
            // ANCHOR_END: read

            #[doc = concat!("Writes the `", stringify!($ty), "` register at `OFFSET`, checked at compile time.")]
            pub fn $write<const OFFSET: usize>(&self, value: $ty) {
                const {
                    assert!(
                        Self::fits(OFFSET, size_of::<$ty>(), SIZE),
                        "MMIO write past the region's size, or misaligned"
                    )
                };
                // SAFETY: as for the read.
                unsafe { bindings::$c_write(value, self.0.addr.wrapping_add(OFFSET)) }
            }

            #[doc = concat!("Reads the `", stringify!($ty), "` register at `offset`; `ERANGE` past the region or misaligned.")]
            pub fn $try_read(&self, offset: usize) -> Result<$ty> {
                let addr = self.checked(offset, size_of::<$ty>())?;
                // SAFETY: `checked` keeps the access inside the mapping,
                // which lives while `self` is borrowed (type invariants).
                Ok(unsafe { bindings::$c_read(addr) })
            }

            #[doc = concat!("Writes the `", stringify!($ty), "` register at `offset`; `ERANGE` past the region or misaligned.")]
            pub fn $try_write(&self, offset: usize, value: $ty) -> Result {
                let addr = self.checked(offset, size_of::<$ty>())?;
                // SAFETY: `checked` keeps the access inside the mapping,
                // which lives while `self` is borrowed (type invariants).
                unsafe { bindings::$c_write(value, addr) };
                Ok(())
            }
        }
    };
}

accessors!(
    u32,
    read32,
    write32,
    try_read32,
    try_write32,
    rust_helper_readl,
    rust_helper_writel
);
accessors!(
    u64,
    read64,
    write64,
    try_read64,
    try_write64,
    rust_helper_readq,
    rust_helper_writeq
);
