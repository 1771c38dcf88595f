//! Memory-mapped I/O: a PCI BAR mapped into the kernel's address space,
//! with bounds-checked 32- and 64-bit register accesses.
//!
//! C headers: [`include/asm-generic/io.h`](https://elixir.bootlin.com/linux/v6.1/source/include/asm-generic/io.h)
//! (`readl`, `writel`, `readq`, `writeq`),
//! [`include/asm-generic/pci_iomap.h`](https://elixir.bootlin.com/linux/v6.1/source/include/asm-generic/pci_iomap.h)
//!
//! A register at a constant offset is read with `bar.read32::<OFFSET>()`:
//! the offset is checked against `SIZE`, the length the driver asked for
//! when it mapped the BAR, at compile time. An offset computed at run time
//! (a doorbell `0x1000 + (2 * qid) << stride`) goes through
//! `try_read32(offset)`, which checks it against the BAR's real length and
//! returns `ERANGE` past it. Both also refuse misaligned offsets.
//!
//! ```ignore
//! // In a PCI driver's probe, with `pdev: &pci::Device`:
//! let bar = pdev.iomap_region::<0x1000>(0, c_str!("mydrv"))?;
//! let version = bar.read32::<0x8>();
//! bar.try_write32(0x1000 + 8, 1)?;
//! ```

use core::ffi::{c_int, c_void, CStr};

use crate::bindings;
use crate::error::{code::ENODEV, code::ERANGE, Result};
use crate::pci;

// ANCHOR: bar
/// A mapped memory BAR of a PCI function, at least `SIZE` bytes long.
///
/// Holds a reference on the function, its BAR claimed under the driver's
/// name and the mapping; dropping it unmaps and releases the BAR.
///
/// # Invariants
///
/// `addr` is the start of a mapping of BAR `bar` of `pdev` that is `len`
/// bytes long, with `len >= SIZE`, and `bar` is claimed by this value.
pub struct Bar<const SIZE: usize> {
    pdev: pci::Device,
    bar: u32,
    addr: *mut c_void,
    len: usize,
}
// ANCHOR_END: bar

// SAFETY: MMIO through `readl`/`writel` may be done from any thread; the
// mapping is not tied to one.
unsafe impl<const SIZE: usize> Send for Bar<SIZE> {}
// SAFETY: every access is a single `readl`/`writel`-style instruction;
// concurrent ones are the device's business, not a data race in memory.
unsafe impl<const SIZE: usize> Sync for Bar<SIZE> {}

impl<const SIZE: usize> Bar<SIZE> {
    /// Claims memory BAR `bar` of `pdev` under `name` and maps all of it.
    /// `ENODEV` if the BAR is not memory or is shorter than `SIZE`.
    pub(crate) fn map(pdev: &pci::Device, bar: u32, name: &'static CStr) -> Result<Self> {
        let (len, is_mem) = pdev.resource(bar)?;
        if !is_mem || len < SIZE || len == 0 {
            return Err(ENODEV);
        }
        // SAFETY: the function is alive (`pdev`); `bar` is 0..=5 (checked
        // by `resource`), and `name` is `'static`, as the claim keeps it.
        crate::error::to_result(unsafe {
            bindings::pci_request_region(pdev.as_raw(), bar as c_int, name.as_ptr())
        })?;
        // SAFETY: as above; length 0 maps the whole BAR.
        let addr = unsafe { bindings::pci_iomap(pdev.as_raw(), bar as c_int, 0) };
        if addr.is_null() {
            // SAFETY: claimed just above.
            unsafe { bindings::pci_release_region(pdev.as_raw(), bar as c_int) };
            return Err(ENODEV);
        }
        // INVARIANT: `addr` maps all `len >= SIZE` bytes of the claimed BAR.
        Ok(Bar {
            pdev: pdev.clone(),
            bar,
            addr,
            len,
        })
    }

    /// The BAR's length in bytes (at least `SIZE`).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the BAR is empty: never, a mapped BAR has a length.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether an access of `width` bytes at `offset` stays inside `limit`
    /// and is aligned to its width.
    const fn fits(offset: usize, width: usize, limit: usize) -> bool {
        offset.is_multiple_of(width) && offset <= limit && width <= limit - offset
    }

    /// The address of an access of `width` bytes at `offset`, checked
    /// against the BAR's real length.
    fn checked(&self, offset: usize, width: usize) -> Result<*mut c_void> {
        if Self::fits(offset, width, self.len) {
            Ok(self.addr.wrapping_add(offset))
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
        impl<const SIZE: usize> Bar<SIZE> {
            // ANCHOR: read
            #[doc = concat!("Reads the `", stringify!($ty), "` register at `OFFSET`, checked at compile time.")]
            pub fn $read<const OFFSET: usize>(&self) -> $ty {
                const {
                    assert!(
                        Self::fits(OFFSET, size_of::<$ty>(), SIZE),
                        "MMIO read past the BAR's size, or misaligned"
                    )
                };
                // SAFETY: `OFFSET + width <= SIZE <= len` (checked above and
                // by the type invariants): the address is inside the mapping.
                unsafe { bindings::$c_read(self.addr.wrapping_add(OFFSET)) }
            }
            // ANCHOR_END: read

            #[doc = concat!("Writes the `", stringify!($ty), "` register at `OFFSET`, checked at compile time.")]
            pub fn $write<const OFFSET: usize>(&self, value: $ty) {
                const {
                    assert!(
                        Self::fits(OFFSET, size_of::<$ty>(), SIZE),
                        "MMIO write past the BAR's size, or misaligned"
                    )
                };
                // SAFETY: as for the read.
                unsafe { bindings::$c_write(value, self.addr.wrapping_add(OFFSET)) }
            }

            #[doc = concat!("Reads the `", stringify!($ty), "` register at `offset`; `ERANGE` past the BAR or misaligned.")]
            pub fn $try_read(&self, offset: usize) -> Result<$ty> {
                let addr = self.checked(offset, size_of::<$ty>())?;
                // SAFETY: `checked` keeps the access inside the mapping.
                Ok(unsafe { bindings::$c_read(addr) })
            }

            #[doc = concat!("Writes the `", stringify!($ty), "` register at `offset`; `ERANGE` past the BAR or misaligned.")]
            pub fn $try_write(&self, offset: usize, value: $ty) -> Result {
                let addr = self.checked(offset, size_of::<$ty>())?;
                // SAFETY: `checked` keeps the access inside the mapping.
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

impl<const SIZE: usize> Drop for Bar<SIZE> {
    fn drop(&mut self) {
        // SAFETY: the mapping and the claim are this value's (type
        // invariants), undone once; `pdev` keeps the function alive.
        unsafe {
            bindings::pci_iounmap(self.pdev.as_raw(), self.addr);
            bindings::pci_release_region(self.pdev.as_raw(), self.bar as c_int);
        }
    }
}
