// `pin_init!` on a packed struct: `count` sits at offset 1, and its
// initialiser would write a `u64` through a misaligned pointer (undefined
// behaviour, whatever the CPU allows).
use kernel::init::PinInit;
use kernel::pin_init;

#[repr(C, packed)]
struct Packed {
    tag: u8,
    count: u64,
}

fn packed() -> impl PinInit<Packed> {
    pin_init!(Packed { tag <- 1, count <- 2 })
}
