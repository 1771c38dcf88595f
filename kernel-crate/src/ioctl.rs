//! ioctl command numbers: encoding and decoding.
//!
//! C headers: [`include/uapi/asm-generic/ioctl.h`](https://elixir.bootlin.com/linux/v6.1/source/include/uapi/asm-generic/ioctl.h),
//! [`include/linux/ioctl.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/ioctl.h).
//!
//! A command is a 32-bit number made of four fields, from the low bits up:
//! the number `nr` (8 bits), the type `ty` (8 bits, a letter that names the
//! driver), the size of the argument (14 bits) and the direction (2 bits:
//! none, write = user to kernel, read = kernel to user). The widths and
//! positions of the fields are constants of the C headers, which bindgen
//! gives us; the function-like macros `_IO`, `_IOR`, `_IOW`, `_IOWR` and
//! `_IOC_*` it cannot translate, so they are `const fn`s here, checked
//! against the values C computes by the assertions at the end of this
//! file, which run at every build.

// ANCHOR: ioctl_fields
use crate::bindings;

// The fields' widths and positions, from the C headers.
const NRSHIFT: u32 = bindings::_IOC_NRSHIFT;
const TYPESHIFT: u32 = bindings::_IOC_TYPESHIFT;
const SIZESHIFT: u32 = bindings::_IOC_SIZESHIFT;
const DIRSHIFT: u32 = bindings::_IOC_DIRSHIFT;
const NRMASK: u32 = bindings::_IOC_NRMASK;
const TYPEMASK: u32 = bindings::_IOC_TYPEMASK;
const SIZEMASK: u32 = bindings::_IOC_SIZEMASK;
const DIRMASK: u32 = bindings::_IOC_DIRMASK;

/// No data is transferred.
pub const IOC_NONE: u32 = bindings::_IOC_NONE;
/// User space writes, the kernel reads (`_IOW`).
pub const IOC_WRITE: u32 = bindings::_IOC_WRITE;
/// The kernel writes, user space reads (`_IOR`).
pub const IOC_READ: u32 = bindings::_IOC_READ;

/// `_IOC(dir, ty, nr, size)`. A `size` that does not fit the 14-bit field
/// is a compile-time error when used in a `const`.
pub const fn ioc(dir: u32, ty: u8, nr: u8, size: usize) -> u32 {
    assert!(size <= SIZEMASK as usize, "ioctl argument too large");
    (dir << DIRSHIFT)
        | ((ty as u32) << TYPESHIFT)
        | ((nr as u32) << NRSHIFT)
        | ((size as u32) << SIZESHIFT)
}
// ANCHOR_END: ioctl_fields

/// `_IO(ty, nr)`: a command without an argument.
pub const fn io(ty: u8, nr: u8) -> u32 {
    ioc(IOC_NONE, ty, nr, 0)
}

/// `_IOR(ty, nr, T)`: the kernel writes a `T` to user space.
pub const fn ior<T>(ty: u8, nr: u8) -> u32 {
    ioc(IOC_READ, ty, nr, core::mem::size_of::<T>())
}

/// `_IOW(ty, nr, T)`: the kernel reads a `T` from user space.
pub const fn iow<T>(ty: u8, nr: u8) -> u32 {
    ioc(IOC_WRITE, ty, nr, core::mem::size_of::<T>())
}

/// `_IOWR(ty, nr, T)`: both.
pub const fn iowr<T>(ty: u8, nr: u8) -> u32 {
    ioc(IOC_READ | IOC_WRITE, ty, nr, core::mem::size_of::<T>())
}

/// `_IOC_DIR(cmd)`: [`IOC_NONE`], or [`IOC_READ`] and/or [`IOC_WRITE`].
pub const fn dir(cmd: u32) -> u32 {
    (cmd >> DIRSHIFT) & DIRMASK
}

/// `_IOC_TYPE(cmd)`.
pub const fn ty(cmd: u32) -> u8 {
    ((cmd >> TYPESHIFT) & TYPEMASK) as u8
}

/// `_IOC_NR(cmd)`.
pub const fn nr(cmd: u32) -> u8 {
    ((cmd >> NRSHIFT) & NRMASK) as u8
}

/// `_IOC_SIZE(cmd)`.
pub const fn size(cmd: u32) -> usize {
    ((cmd >> SIZESHIFT) & SIZEMASK) as usize
}

// The values C computes (checked with a C program against the 6.1 headers):
// _IO('T', 1) = 0x5401 (TCGETS's neighbour layout), _IOR('s', 1, u32) =
// 0x80047301, _IOW('s', 2, u32) = 0x40047302, _IOWR('s', 3, u64) = 0xc0087303.
const _: () = {
    assert!(io(b'T', 1) == 0x5401);
    assert!(ior::<u32>(b's', 1) == 0x8004_7301);
    assert!(iow::<u32>(b's', 2) == 0x4004_7302);
    assert!(iowr::<u64>(b's', 3) == 0xc008_7303);
    let cmd = iowr::<u64>(b's', 3);
    assert!(dir(cmd) == IOC_READ | IOC_WRITE);
    assert!(ty(cmd) == b's');
    assert!(nr(cmd) == 3);
    assert!(size(cmd) == 8);
    assert!(dir(io(b'x', 0)) == IOC_NONE && size(io(b'x', 0)) == 0);
};
