//! An id allocator (IDA): small integers handed out and taken back, such
//! as the instance number in a device's name (`rnvme0`, `rnvme1`).
//!
//! C header: [`include/linux/idr.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/idr.h)
//!
//! ```rust
//! let ida = Arc::pin_init(kernel::ida::Ida::new(), GFP_KERNEL)?;
//! let a = kernel::ida::Ida::alloc(&ida, 0, 7)?;
//! let b = kernel::ida::Ida::alloc(&ida, 0, 7)?;
//! assert_eq!((a.id(), b.id()), (0, 1));
//! drop(a);
//! // The lowest free id comes back first.
//! assert_eq!(kernel::ida::Ida::alloc(&ida, 0, 7)?.id(), 0);
//! ```

use crate::alloc::flags::GFP_KERNEL;
use crate::bindings;
use crate::error::{to_result, Result};
use crate::init::{pin_init_from_closure, Opaque, PinInit};
use crate::sync::Arc;

/// An id allocator (`struct ida`); every [`Id`] keeps it alive.
///
/// # Invariants
///
/// `ida` is initialised (`ida_init`) and pinned; it is destroyed on drop.
pub struct Ida {
    ida: Opaque<bindings::ida>,
}

// SAFETY: `ida_alloc_range` and `ida_free` take the IDA's own lock; the
// IDA may be used and destroyed from any thread.
unsafe impl Send for Ida {}
// SAFETY: as above.
unsafe impl Sync for Ida {}

impl Ida {
    /// An initialiser of an empty allocator.
    pub fn new() -> impl PinInit<Self> {
        let init = |slot: *mut Self| {
            // SAFETY: `slot` is valid for writes and will not move
            // (contract of `PinInit`); `ida_init` initialises it in place.
            unsafe { bindings::rust_helper_ida_init(Opaque::raw_get(&raw const (*slot).ida)) };
            // INVARIANT: initialised, and pinned from now on.
            Ok(())
        };
        // SAFETY: the closure always initialises the slot.
        unsafe { pin_init_from_closure(init) }
    }

    /// Takes the lowest free id from `min` to `max` (both included).
    /// `ENOSPC` if none is free. May sleep. (An associated function: the
    /// id keeps `ida` alive.)
    pub fn alloc(ida: &Arc<Ida>, min: u32, max: u32) -> Result<Id> {
        // The C function returns the id as an `int`.
        let max = max.min(i32::MAX.unsigned_abs());
        if min > max {
            return Err(crate::error::code::EINVAL);
        }
        // SAFETY: initialised (type invariants).
        let id = to_result(unsafe {
            bindings::ida_alloc_range(ida.ida.as_raw(), min, max, GFP_KERNEL.as_raw())
        })?;
        // INVARIANT: `id` was just taken from `ida`.
        Ok(Id {
            ida: ida.clone(),
            id: id.unsigned_abs(),
        })
    }
}

impl Drop for Ida {
    fn drop(&mut self) {
        // SAFETY: initialised (type invariants), destroyed once; no `Id`
        // is left, as each holds an `Arc` on the allocator.
        unsafe { bindings::ida_destroy(self.ida.as_raw()) };
    }
}

/// An id taken from an [`Ida`], given back on drop.
///
/// # Invariants
///
/// `id` is allocated in `ida` and owned by this value.
pub struct Id {
    ida: Arc<Ida>,
    id: u32,
}

impl Id {
    /// The number.
    pub fn id(&self) -> u32 {
        self.id
    }
}

impl Drop for Id {
    fn drop(&mut self) {
        // SAFETY: allocated in `ida` and owned by this value (type
        // invariants), freed once.
        unsafe { bindings::ida_free(self.ida.ida.as_raw(), self.id) };
    }
}
