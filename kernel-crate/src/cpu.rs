//! CPUs: how many are online, for drivers that make one queue per CPU.
//!
//! C header: [`include/linux/cpumask.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/cpumask.h)

use crate::bindings;

/// How many CPUs are online now (`num_online_cpus()`); CPU hotplug can
/// change it right after.
pub fn num_online_cpus() -> u32 {
    // SAFETY: reads a counter; no preconditions.
    unsafe { bindings::rust_helper_num_online_cpus() }
}
