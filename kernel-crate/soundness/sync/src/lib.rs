//! Soundness tests of `kernel::sync`, in safe Rust only.
//!
//! - A wait entry cannot be owned, so it cannot be leaked on a queue
//!   (issue 22, item 2): the compile-fail cases in `compile-fail/`.
//! - [`SpinLockIrq`] guards dropped out of order (item 8): interrupts must
//!   stay off while any irq lock is held and come back on only when the
//!   last guard goes. With `spin_lock_irqsave` per guard, dropping the
//!   outer guard first restored "on" under the inner lock. `init` drops
//!   guards in those orders and prints what it saw; the step compares it,
//!   and the debug kernel (lockdep) must report nothing.

#![no_std]
#![forbid(unsafe_code)]

use kernel::prelude::*;
use kernel::sync::{irqs_disabled, Arc, SpinLock, SpinLockIrq};
use kernel::{new_spinlock, new_spinlock_irq};

module! {
    type: SoundnessSync,
    name: "soundness_sync",
    author: "Rust kernel workbook",
    description: "Soundness tests of kernel::sync",
    license: "GPL",
}

// A compile-fail step of lab.toml builds this crate with one of the files
// in compile-fail/ as this module: code that must be rejected.
#[cfg(feature = "compile-fail")]
mod compile_fail {
    include!(env!("COMPILE_FAIL_CASE"));
}

struct SoundnessSync;

/// Whether interrupts are off, as `on`/`off`, for the log.
fn irqs() -> &'static str {
    if irqs_disabled() {
        "off"
    } else {
        "on"
    }
}

impl kernel::Module for SoundnessSync {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let a: Arc<SpinLockIrq<u32>> = Arc::pin_init(new_spinlock_irq!(0, "sound_a"), GFP_KERNEL)?;
        let b: Arc<SpinLockIrq<u32>> = Arc::pin_init(new_spinlock_irq!(0, "sound_b"), GFP_KERNEL)?;
        let c: Arc<SpinLockIrq<u32>> = Arc::pin_init(new_spinlock_irq!(0, "sound_c"), GFP_KERNEL)?;
        let plain: Arc<SpinLock<u32>> = Arc::pin_init(new_spinlock!(0, "sound_plain"), GFP_KERNEL)?;

        // Out of order: the outer guard first.
        pr_info!("before: {}\n", irqs());
        let mut ga = a.lock();
        let mut gb = b.lock();
        *ga += 1;
        *gb += 1;
        drop(ga);
        pr_info!("a dropped, b held: {}\n", irqs());
        drop(gb);
        pr_info!("b dropped: {}\n", irqs());

        // Hand over hand: a, b, c, each taken before the previous one is
        // dropped.
        let ga = a.lock();
        let gb = b.lock();
        drop(ga);
        let gc = c.lock();
        drop(gb);
        pr_info!("hand over hand, c held: {}\n", irqs());
        drop(gc);
        pr_info!("hand over hand done: {}\n", irqs());

        // Three nested, the middle one dropped first, then the outer.
        let ga = a.lock();
        let gb = b.lock();
        let gc = c.lock();
        drop(gb);
        let middle = irqs();
        drop(ga);
        pr_info!("middle first: b dropped: {middle}, then a: {}\n", irqs());
        drop(gc);
        pr_info!("middle first: c dropped: {}\n", irqs());

        // An irq guard inside a plain spinlock's, dropped after it.
        let gp = plain.lock();
        let ga = a.lock();
        drop(gp);
        pr_info!("plain dropped, a held: {}\n", irqs());
        drop(ga);
        pr_info!("all dropped: {}\n", irqs());
        Ok(SoundnessSync)
    }
}

impl Drop for SoundnessSync {
    fn drop(&mut self) {
        pr_info!("goodbye\n");
    }
}
