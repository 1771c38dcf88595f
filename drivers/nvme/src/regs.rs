//! The controller's registers (NVMe base specification 2.0, section 3.1)
//! and what their fields mean.

use kernel::pci;

// ANCHOR: bar
/// The registers this driver reads at constant offsets, before the
/// doorbells: every access below 0x1000 is checked at compile time.
pub(crate) const REGS_SIZE: usize = 0x1000;

/// BAR 0 mapped, with at least the register block.
pub(crate) type Bar = pci::Bar<REGS_SIZE>;
// ANCHOR_END: bar

/// Controller capabilities (64 bits).
pub(crate) const CAP: usize = 0x00;
/// Version.
pub(crate) const VS: usize = 0x08;
/// Controller configuration.
pub(crate) const CC: usize = 0x14;
/// Controller status.
pub(crate) const CSTS: usize = 0x1c;
/// Admin queue attributes.
pub(crate) const AQA: usize = 0x24;
/// Admin submission queue base address (64 bits).
pub(crate) const ASQ: usize = 0x28;
/// Admin completion queue base address (64 bits).
pub(crate) const ACQ: usize = 0x30;
/// The first doorbell: the admin submission queue's tail.
pub(crate) const DOORBELLS: usize = 0x1000;

/// CC.EN: the controller processes commands.
pub(crate) const CC_ENABLE: u32 = 1;
/// CC.IOSQES and CC.IOCQES: 64-byte submission and 16-byte completion
/// queue entries (log2: 6 and 4).
pub(crate) const CC_ENTRY_SIZES: u32 = (6 << 16) | (4 << 20);
/// CC.SHN = 01b: normal shutdown.
pub(crate) const CC_SHN_NORMAL: u32 = 1 << 14;
/// CC.SHN's two bits.
pub(crate) const CC_SHN_MASK: u32 = 3 << 14;
/// CSTS.RDY: the controller is ready.
pub(crate) const CSTS_RDY: u32 = 1;
/// CSTS.CFS: controller fatal status.
pub(crate) const CSTS_CFS: u32 = 1 << 1;
/// CSTS.SHST's two bits.
pub(crate) const CSTS_SHST_MASK: u32 = 3 << 2;
/// CSTS.SHST = 10b: shutdown complete.
pub(crate) const CSTS_SHST_CMPLT: u32 = 2 << 2;

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

    /// Smallest memory page size the controller supports, as MPSMIN: the
    /// size is `2 ^ (12 + MPSMIN)` bytes.
    pub(crate) fn min_page_shift(self) -> u32 {
        12 + ((self.0 >> 48) & 0xf) as u32
    }
}

// ANCHOR: doorbells
/// The offsets of queue `qid`'s two doorbells: the submission queue's tail
/// and the completion queue's head.
pub(crate) fn doorbells(qid: u16, stride: u32) -> (usize, usize) {
    let step = 4usize << stride;
    let sq = DOORBELLS + 2 * usize::from(qid) * step;
    (sq, sq + step)
}
// ANCHOR_END: doorbells
