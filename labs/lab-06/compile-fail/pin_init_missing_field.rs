// Leaving a field uninitialised: `pin_init!` must name every field of the
// struct, or the struct would be used half-initialised.
// ANCHOR: case
use core::pin::Pin;

use kernel::prelude::*;
use kernel::sync::{CondVar, Mutex};
use kernel::{new_mutex, pin_init};

struct Shared {
    count: Mutex<u64>,
    changed: CondVar,
}

fn forgot_a_field() -> Result<Pin<KBox<Shared>>> {
    KBox::pin_init(pin_init!(Shared { count <- new_mutex!(0) }), GFP_KERNEL)
}
// ANCHOR_END: case
