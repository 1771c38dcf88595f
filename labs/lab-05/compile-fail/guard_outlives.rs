// Keeping a guard after its mutex is gone: the guard borrows the mutex.
// ANCHOR: case
use kernel::prelude::*;

use super::mutex::Mutex;

fn guard_outlives() -> Result<u64> {
    let counter = Mutex::new(0u64)?;
    let guard = counter.lock();
    drop(counter);
    Ok(*guard)
}
// ANCHOR_END: case
