// The same leak through the closure: keep the lent entry after `with`
// has returned (and taken it off the queue), to queue it again later, or
// to forget it. The borrow ends with the closure.
// ANCHOR: case
use kernel::sync::{Sleep, WaitEntry, WaitQueue};

fn keep(queue: &WaitQueue) {
    let mut kept = None;
    WaitEntry::with(|mut entry| {
        queue.prepare_to_wait(entry.as_mut(), Sleep::Interruptible);
        kept = Some(entry);
    });
    core::mem::forget(kept);
}
// ANCHOR_END: case
