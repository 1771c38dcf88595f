//! Soundness tests of the kernel crate's memory abstractions, as a safe
//! module (no `unsafe` anywhere): what `lab.toml`'s guest steps load.
//!
//! - `list`, an array parameter of 65535 `u64`s (512 KiB): setting it from
//!   the `insmod` line or sysfs must not build a copy of the array on the
//!   16 KiB kernel stack, and a refused value must leave it as it was.
//! - `zeroed=1`: pages and DMA pool blocks are written with a pattern,
//!   freed, and allocated again (the allocators hand the same memory back
//!   first) without `__GFP_ZERO`: none of the pattern may be left. Debian's
//!   kernel zeroes on allocation anyway (`init_on_alloc=1`); the debug
//!   kernel does not, and showed the pattern before `Page::alloc` and
//!   `Pool::alloc` zeroed.
//!
//! The compile-fail cases in `compile-fail/` are included below, one per
//! build, by the checker's compile-fail steps.

#![no_std]
#![forbid(unsafe_code)]

use core::ffi::CStr;
use core::pin::Pin;

use kernel::c_str;
use kernel::dma::Pool;
use kernel::page::{Page, PAGE_SIZE};
use kernel::pci;
use kernel::prelude::*;

#[cfg(feature = "compile-fail")]
mod compile_fail {
    include!(env!("COMPILE_FAIL_CASE"));
}

module! {
    type: MemTests,
    name: "soundness_mem",
    author: "Rust kernel workbook",
    description: "Soundness tests: array parameters, zeroed pages and pool blocks",
    license: "GPL",
    params: {
        list: ArrayParam<u64, 65535> {
            default: [],
            permissions: 0o644,
            description: "Up to 65535 numbers (512 KiB of parameter)",
        },
        zeroed: bool {
            default: false,
            permissions: 0o444,
            description: "Check that new pages and pool blocks hold no old data",
        },
    },
}

/// How many pages (and pool blocks) are written, freed and taken again.
const ROUNDS: usize = 32;
/// The pattern the first allocations are filled with.
const PATTERN: u8 = 0xa5;
/// `u64`s in a pool block: one page, as an NVMe PRP list.
const BLOCK: usize = PAGE_SIZE / 8;

/// Fills `ROUNDS` pages with `PATTERN`, frees them, allocates as many
/// again and returns how many of their bytes are not zero.
fn stale_page_bytes() -> Result<usize> {
    let chunk = [PATTERN; 256];
    let mut pages = KVec::with_capacity(ROUNDS, GFP_KERNEL)?;
    for _ in 0..ROUNDS {
        let page = Page::alloc(GFP_KERNEL)?;
        for at in (0..PAGE_SIZE).step_by(chunk.len()) {
            page.write(at, &chunk)?;
        }
        pages.push(page, GFP_KERNEL)?;
    }
    drop(pages);
    let mut stale = 0;
    let mut again = KVec::with_capacity(ROUNDS, GFP_KERNEL)?;
    for _ in 0..ROUNDS {
        let page = Page::alloc(GFP_KERNEL)?;
        let mut buf = [0u8; 256];
        for at in (0..PAGE_SIZE).step_by(buf.len()) {
            page.read(at, &mut buf)?;
            stale += buf.iter().filter(|&&b| b != 0).count();
        }
        // Kept until all are taken, so that each is a different page.
        again.push(page, GFP_KERNEL)?;
    }
    Ok(stale)
}

/// As [`stale_page_bytes`], for the blocks of a DMA pool of `dev`;
/// returns how many of the new blocks' `u64`s are not zero.
fn stale_pool_words(dev: &pci::Device) -> Result<usize> {
    let pool = Pool::<u64>::new(dev.as_dev(), c_str!("soundness_mem"), BLOCK, 8, 0)?;
    let word = u64::from_ne_bytes([PATTERN; 8]);
    let mut blocks = KVec::with_capacity(ROUNDS, GFP_KERNEL)?;
    for _ in 0..ROUNDS {
        let block = Pool::alloc(&pool, GFP_KERNEL)?;
        for i in 0..block.count() {
            block.write(i, word)?;
        }
        blocks.push(block, GFP_KERNEL)?;
    }
    drop(blocks);
    let mut stale = 0;
    let mut again = KVec::with_capacity(ROUNDS, GFP_KERNEL)?;
    for _ in 0..ROUNDS {
        let block = Pool::alloc(&pool, GFP_KERNEL)?;
        for i in 0..block.count() {
            stale += usize::from(block.read(i)? != 0);
        }
        again.push(block, GFP_KERNEL)?;
    }
    Ok(stale)
}

/// A PCI driver for the guest's NVMe controller, which no other driver
/// holds here: its `probe` gives the `Device` a DMA pool needs. It never
/// enables the device (the pool's memory is the kernel's).
struct PoolProbe;

impl pci::Driver for PoolProbe {
    type Context = ();
    type Data = ();
    const NAME: &'static CStr = c_str!("soundness_mem");
    const ID_TABLE: &'static [pci::DeviceId] =
        &[pci::DeviceId::new(0x1b36, 0x0010), pci::DeviceId::END];

    fn probe(dev: &pci::Device, _id: &pci::DeviceId, _context: &()) -> Result {
        let stale = stale_pool_words(dev)?;
        pr_info!("pool: {stale} of {} words not zero\n", ROUNDS * BLOCK);
        Ok(())
    }
}

struct MemTests {
    _pci: Option<Pin<KBox<pci::Registration<PoolProbe>>>>,
}

impl kernel::Module for MemTests {
    fn init(module: &'static ThisModule) -> Result<Self> {
        {
            let lock = THIS_MODULE.kernel_param_lock();
            let values = list.read(&lock);
            if !values.is_empty() {
                pr_info!("list: {} values, first {}\n", values.len(), values[0]);
            }
        }
        if !*zeroed.read() {
            return Ok(MemTests { _pci: None });
        }
        let stale = stale_page_bytes()?;
        pr_info!("pages: {stale} of {} bytes not zero\n", ROUNDS * PAGE_SIZE);
        Ok(MemTests {
            _pci: Some(pci::Registration::new_pinned(module, ())?),
        })
    }
}
