// Two entries lent at once, one on a queue: swapping them would move the
// queued C entry, whose neighbours on the list point at where it was.
// An entry is `!Unpin`, so `Pin<&mut WaitEntry>` gives no `&mut`.
// ANCHOR: case
use kernel::sync::{Sleep, WaitEntry, WaitQueue};

fn swap(queue: &WaitQueue) {
    WaitEntry::with(|mut queued| {
        queue.prepare_to_wait(queued.as_mut(), Sleep::Interruptible);
        WaitEntry::with(|mut other| core::mem::swap(&mut *queued, &mut *other));
    });
}
// ANCHOR_END: case
