// Keeping a guard after its lock is gone: the guard borrows the lock.
// ANCHOR: case
use kernel::new_mutex;
use kernel::prelude::*;

fn guard_outlives() -> Result<u64> {
    let counter = KBox::pin_init(new_mutex!(0u64), GFP_KERNEL)?;
    let guard = counter.lock();
    drop(counter);
    Ok(*guard)
}
// ANCHOR_END: case
