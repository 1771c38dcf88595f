// The leak of issue 22 (item 2): an entry owned on the heap, put on a
// queue, then forgotten. Its `Drop` (`finish_wait`) never runs, the entry
// stays on the queue pointing at this task, and a wake-up after the task
// has exited touches a freed `task_struct`. Entries are only lent now, by
// `WaitEntry::with`: there is no entry to own.
// ANCHOR: case
use kernel::prelude::*;
use kernel::sync::{Sleep, WaitEntry, WaitQueue};

fn leak(queue: &WaitQueue) -> Result {
    let mut entry = KBox::pin_init::<Error>(WaitEntry::new(), GFP_KERNEL)?;
    queue.prepare_to_wait(entry.as_mut(), Sleep::Interruptible);
    core::mem::forget(entry);
    Ok(())
}
// ANCHOR_END: case
