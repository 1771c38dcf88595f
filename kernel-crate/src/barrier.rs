//! Memory barriers for memory that a device shares with the CPU: the
//! order in which the CPU reads what the device wrote, and writes what
//! the device will read.
//!
//! C header: [`include/asm-generic/barrier.h`](https://elixir.bootlin.com/linux/v6.1/source/include/asm-generic/barrier.h)
//! (x86: [`arch/x86/include/asm/barrier.h`](https://elixir.bootlin.com/linux/v6.1/source/arch/x86/include/asm/barrier.h)),
//! and `Documentation/memory-barriers.txt`, "dma_rmb() and dma_wmb()".
//!
//! Rust's atomic fences order memory for other CPUs, not for a device,
//! so these call the kernel's own barriers. On x86 both DMA barriers are
//! only compiler barriers (the CPU keeps loads in order with loads and
//! stores with stores), and [`mb`] is `mfence`; the calls still say where
//! the order matters, and keep it on a kernel whose architecture needs
//! more.

use crate::bindings;

/// Reads of coherent DMA memory after this one happen after the reads
/// before it (`dma_rmb`): read a descriptor's "ready" word (an NVMe
/// completion's phase bit), then `dma_rmb()`, then its other words.
pub fn dma_rmb() {
    // SAFETY: a barrier has no preconditions.
    unsafe { bindings::rust_helper_dma_rmb() }
}

/// Writes to coherent DMA memory before this one are seen by the device
/// before the writes after it (`dma_wmb`): fill a descriptor, then
/// `dma_wmb()`, then the word that hands it to the device.
pub fn dma_wmb() {
    // SAFETY: a barrier has no preconditions.
    unsafe { bindings::rust_helper_dma_wmb() }
}

/// A full barrier (`mb`): every memory access before it, reads and
/// writes, happens before every one after it, for the device as for
/// other CPUs.
pub fn mb() {
    // SAFETY: a barrier has no preconditions.
    unsafe { bindings::rust_helper_mb() }
}
