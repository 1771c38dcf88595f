//! The controller's registers (NVMe base specification 2.0, section 3.1)
//! and what their fields mean.

use kernel::io;

/// The registers this driver reads at constant offsets, before the
/// doorbells: every access below 0x1000 is checked at compile time.
pub(crate) const REGS_SIZE: usize = 0x1000;

/// BAR 0 mapped, with at least the register block.
pub(crate) type Bar = io::Bar<REGS_SIZE>;

/// Controller capabilities (64 bits).
pub(crate) const CAP: usize = 0x00;
/// Version.
pub(crate) const VS: usize = 0x08;

/// CAP, decoded.
#[derive(Clone, Copy)]
pub(crate) struct Cap(pub(crate) u64);

impl Cap {
    /// Maximum entries per queue (MQES is zero-based).
    pub(crate) fn max_queue_entries(self) -> u32 {
        (self.0 & 0xffff) as u32 + 1
    }

    /// How long the controller may take to become ready or not ready
    /// (TO, in units of 500 ms).
    pub(crate) fn timeout_ms(self) -> u32 {
        ((self.0 >> 24) & 0xff) as u32 * 500
    }

    /// Doorbell stride: doorbells are `4 << DSTRD` bytes apart.
    pub(crate) fn doorbell_stride(self) -> u32 {
        ((self.0 >> 32) & 0xf) as u32
    }
}
