//! The `kernel` crate: safe abstractions over the C kernel API.
//!
//! Modules use this crate and never the raw [`bindings`]. Every `unsafe`
//! block here carries a comment that says why it is sound, every `unsafe fn`
//! documents what its caller must guarantee, and every type with an
//! invariant documents it under "Invariants". The build enforces this with
//! `unsafe_op_in_unsafe_fn` and clippy's `undocumented_unsafe_blocks` and
//! `missing_safety_doc`.
//!
//! The crate is built for `x86_64-unknown-none` by Kbuild, against the
//! headers of the kernel the module will be loaded into; see
//! `kbuild/rust-module.mk`.

#![no_std]
#![warn(missing_docs)]

/// A C vtable's slot for an optional callback: `$f` when the driver's
/// `#[vtable]` impl defines it (`$has`, a `HAS_*` constant), else null, so
/// the C side behaves as for a C driver without it.
macro_rules! vtable_slot {
    ($has:expr, $f:expr) => {
        if $has {
            Some($f)
        } else {
            None
        }
    };
}

/// Methods that return what a C helper reads from the object behind
/// `self.as_raw()`: `/// docs` then `fn name() -> Type = helper;` each.
/// For types whose invariant keeps that object alive while `&self` is.
macro_rules! raw_getters {
    ($($(#[$meta:meta])* fn $name:ident() -> $ty:ty = $helper:ident;)*) => {
        $(
            $(#[$meta])*
            pub fn $name(&self) -> $ty {
                // SAFETY: the object is alive while `&self` is (the type
                // invariant of each user), and the helper needs nothing
                // else: it reads a field, or looks it up under RCU.
                unsafe { $crate::bindings::$helper(self.as_raw()) }
            }
        )*
    };
}

pub mod alloc;
pub mod barrier;
pub mod bindings;
pub mod block;
pub mod chrdev;
pub mod cpu;
pub mod cred;
pub mod delay;
pub mod device;
pub mod dma;
pub mod error;
pub mod fd;
pub mod file;
pub mod ida;
pub mod init;
pub mod io;
pub mod ioctl;
pub mod irq;
pub mod kthread;
pub mod list;
pub mod miscdev;
pub mod mm;
pub mod module;
pub mod module_param;
pub mod page;
pub mod pci;
pub mod prelude;
pub mod print;
pub mod rbtree;
pub mod registration;
pub mod scatterlist;
pub mod security;
pub mod shrinker;
pub mod sync;
pub mod task;
pub mod uapi;
pub mod unload;
pub mod user;
pub mod workqueue;

mod panic;

/// The address of the `$Type` whose field `$field` is at `$ptr`: C's
/// `container_of`, for callbacks that get a pointer to a struct embedded in
/// one of ours (a `cdev`, a `miscdevice`).
///
/// `$ptr` must have the field's type (`*const` or `*mut`), which the
/// compiler checks. Computing the address is safe (it wraps and reads
/// nothing); dereferencing it is not, and is sound only when `$ptr` points
/// at the `$field` of a live `$Type`.
#[macro_export]
macro_rules! container_of {
    ($ptr:expr, $Type:ty, $field:ident) => {{
        let field_ptr = $ptr;
        let container = field_ptr
            .cast::<u8>()
            .wrapping_sub(::core::mem::offset_of!($Type, $field))
            .cast::<$Type>();
        if false {
            // SAFETY: never runs; it makes the compiler check that `$ptr`
            // has the type of a pointer to `$Type::$field`.
            $crate::__same_pointee(field_ptr, unsafe {
                ::core::ptr::addr_of!((*container).$field)
            });
        }
        container
    }};
}

#[doc(hidden)]
pub fn __same_pointee<T>(_: *const T, _: *const T) {}

pub use module::{Module, ThisModule};
pub use module_macro::{module, vtable};
