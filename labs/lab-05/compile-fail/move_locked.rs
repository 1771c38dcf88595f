// Moving an initialised lock: `Pin` gives `&mut` (which `swap` needs) only
// for `Unpin` types, and a kernel lock is not `Unpin`.
// ANCHOR: case
use core::pin::Pin;

use kernel::prelude::*;
use kernel::sync::Mutex;

fn swap_locks(a: &mut Pin<KBox<Mutex<u64>>>, b: &mut Pin<KBox<Mutex<u64>>>) {
    core::mem::swap(&mut **a, &mut **b);
}
// ANCHOR_END: case
