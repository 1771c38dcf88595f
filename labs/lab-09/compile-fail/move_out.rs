// Moving a completion out of its pinned box: the C struct holds a wait
// queue whose list points to itself, so a moved completion would corrupt
// memory on its first wake-up. `Pin` forbids the move for a `!Unpin` type.
use kernel::prelude::*;

fn move_out() -> Result {
    let pinned = KBox::pin_init(super::Completion::new(), GFP_KERNEL)?;
    let _moved: super::Completion = *core::pin::Pin::into_inner(pinned);
    Ok(())
}
