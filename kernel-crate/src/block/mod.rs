//! The block layer: disks whose requests a driver serves.
//!
//! C headers: [`include/linux/blkdev.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/blkdev.h),
//! [`include/linux/blk-mq.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/blk-mq.h).
//!
//! Only the multi-queue interface exists (as in the kernel since 5.0): see
//! [`mq`].

pub mod mq;

/// The unit of block addresses, whatever the device's block size: 512
/// bytes (`SECTOR_SIZE`).
pub const SECTOR_SIZE: u32 = 1 << SECTOR_SHIFT;

/// `log2(SECTOR_SIZE)`.
pub const SECTOR_SHIFT: u32 = 9;
