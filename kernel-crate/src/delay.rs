//! Sleeping for a while, and the jiffies clock for time-outs.
//!
//! C header: [`include/linux/delay.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/delay.h),
//! [`include/linux/jiffies.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/jiffies.h)
//!
//! [`msleep`] and [`usleep_range`] sleep: call them only where sleeping is
//! allowed (process context, no spinlock held, interrupts on). They call
//! [`might_sleep`](crate::sync::might_sleep) first, so that the debug
//! kernel reports a call from atomic context as "sleeping function called
//! from invalid context" at the call, not only when the scheduler finds
//! out.

use core::ffi::c_ulong;

use crate::bindings;

/// Sleeps at least `ms` milliseconds (`msleep`). The timer wheel rounds
/// short sleeps up to the next jiffy: use [`usleep_range`] under 20 ms.
///
/// # Context
///
/// This function sleeps: process context only, no spinlock held.
pub fn msleep(ms: u32) {
    crate::sync::might_sleep();
    // SAFETY: `msleep` has no memory-safety preconditions; from atomic
    // context it is a bug that the line above reports, not corruption.
    unsafe { bindings::msleep(ms) }
}

/// Sleeps between `min_us` and `max_us` microseconds (`usleep_range`), on
/// a high-resolution timer; the range lets the kernel merge wake-ups.
///
/// # Context
///
/// This function sleeps: process context only, no spinlock held.
pub fn usleep_range(min_us: u64, max_us: u64) {
    crate::sync::might_sleep();
    let min = c_ulong::try_from(min_us).unwrap_or(c_ulong::MAX);
    let max = c_ulong::try_from(max_us).unwrap_or(c_ulong::MAX).max(min);
    // SAFETY: as for `msleep`.
    unsafe { bindings::rust_helper_usleep_range(min, max) }
}

/// A point in time on the jiffies clock, for time-outs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jiffies(usize);

impl Jiffies {
    /// Now.
    pub fn now() -> Self {
        // SAFETY: reading `jiffies` has no preconditions.
        Jiffies(unsafe { bindings::rust_helper_jiffies() } as usize)
    }

    /// `ms` milliseconds after this point.
    pub fn after_ms(self, ms: u32) -> Self {
        // SAFETY: `msecs_to_jiffies` is a pure conversion.
        let delta = unsafe { bindings::rust_helper_msecs_to_jiffies(ms) } as usize;
        Jiffies(self.0.wrapping_add(delta))
    }

    /// Whether now is past this point (`time_after(jiffies, self)`), right
    /// across the counter's wrap-around.
    pub fn has_passed(self) -> bool {
        (self.0.wrapping_sub(Self::now().0) as isize) < 0
    }
}
