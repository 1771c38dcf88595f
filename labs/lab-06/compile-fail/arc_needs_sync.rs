// Sharing a value that is not `Sync` between threads: an `Arc<T>` is
// `Send` only if `T: Sync`, and `Cell` is not (its `set` is not atomic).
// ANCHOR: case
use core::cell::Cell;

use kernel::kthread::KThread;
use kernel::prelude::*;
use kernel::sync::Arc;

fn share_a_cell() -> Result<KThread> {
    let shared = Arc::new(Cell::new(0u64), GFP_KERNEL)?;
    KThread::spawn(kernel::c_str!("cell"), move || shared.set(shared.get() + 1))
}
// ANCHOR_END: case
