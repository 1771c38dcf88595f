//! Kernel errors: negative `errno` values with their names.
//!
//! C headers: [`include/uapi/asm-generic/errno-base.h`](https://elixir.bootlin.com/linux/v6.1/source/include/uapi/asm-generic/errno-base.h),
//! [`include/uapi/asm-generic/errno.h`](https://elixir.bootlin.com/linux/v6.1/source/include/uapi/asm-generic/errno.h),
//! [`include/linux/errno.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/errno.h).
//!
//! Conversions from the C return conventions live here and only here.

use core::ffi::c_int;
use core::fmt;
use core::ptr::NonNull;

use crate::bindings;

// ANCHOR: error
/// A kernel error.
///
/// # Invariants
///
/// The value is a valid negative errno: `-MAX_ERRNO <= value <= -1`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Error(c_int);
// ANCHOR_END: error

/// The kernel's result type: `Ok` or an [`Error`].
pub type Result<T = (), E = Error> = core::result::Result<T, E>;

impl Error {
    /// Converts a negative errno into an `Error`.
    ///
    /// A value that is not a valid errno (zero, positive, or below
    /// `-MAX_ERRNO`) is a bug in the caller; it becomes `EINVAL` rather than
    /// an invalid `Error`.
    pub fn from_errno(errno: c_int) -> Error {
        if is_valid_errno(errno) {
            // INVARIANT: just checked.
            Error(errno)
        } else {
            code::EINVAL
        }
    }

    /// An `Error` from a positive errno constant of the bindings.
    const fn from_code(code: u32) -> Error {
        // The constants below are all in range, checked at compile time.
        assert!(code >= 1 && code <= bindings::MAX_ERRNO);
        // INVARIANT: `1 <= code <= MAX_ERRNO`, so `-code` is a valid errno.
        Error(-(code as c_int))
    }

    /// The negative errno, as C functions return it.
    pub fn to_errno(self) -> c_int {
        self.0
    }

    /// The errno's name, such as `"ENOMEM"`, if it has one here.
    pub fn name(self) -> Option<&'static str> {
        errno_name(-self.0)
    }
}

const fn is_valid_errno(errno: c_int) -> bool {
    errno < 0 && errno >= -(bindings::MAX_ERRNO as c_int)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "errno {}", self.0),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None => write!(f, "Error({})", self.0),
        }
    }
}

// ANCHOR: to_result
/// Converts a C return value (0 or more for success, a negative errno for
/// failure) into a [`Result`].
pub fn to_result(ret: c_int) -> Result<c_int> {
    if ret < 0 {
        Err(Error::from_errno(ret))
    } else {
        Ok(ret)
    }
}
// ANCHOR_END: to_result

// ANCHOR: c_conventions
/// Converts a pointer from a C function that returns `ERR_PTR(-errno)` on
/// failure (`IS_ERR` in C) into a [`Result`]. NULL is not an error here: use
/// [`from_null`] for functions that may also return NULL.
pub fn from_err_ptr<T>(ptr: *mut T) -> Result<*mut T> {
    // `IS_ERR_VALUE`: the last `MAX_ERRNO` addresses encode `-errno`.
    let value = ptr.addr() as isize;
    if value < 0 && value >= -(bindings::MAX_ERRNO as isize) {
        // The range check makes the value fit a `c_int`.
        Err(Error::from_errno(value as c_int))
    } else {
        Ok(ptr)
    }
}

/// Converts a pointer from a C function that returns NULL on failure (such
/// as `kmalloc`) into a [`Result`] with `error`, usually `ENOMEM`.
pub fn from_null<T>(ptr: *mut T, error: Error) -> Result<NonNull<T>> {
    NonNull::new(ptr).ok_or(error)
}
// ANCHOR_END: c_conventions

// ANCHOR: from_result
/// Runs `f` and turns its result into what a C callback returns: the value
/// for `Ok`, the negative errno for `Err`. Every `extern "C"` callback of
/// this crate that C calls (file operations, module parameters, module
/// init) returns through it, so a callback's body can use `?`.
pub fn from_result<T: From<i16>>(f: impl FnOnce() -> Result<T>) -> T {
    match f() {
        Ok(value) => value,
        // `-MAX_ERRNO <= errno <= -1` (type invariant of `Error`) fits in
        // `i16`, which every C return type holds.
        Err(error) => T::from(error.to_errno() as i16),
    }
}
// ANCHOR_END: from_result

macro_rules! declare_errors {
    ($($name:ident: $doc:literal,)*) => {
        /// Named error codes, as in C: `return Err(EINVAL)`.
        pub mod code {
            $(
                #[doc = $doc]
                pub const $name: super::Error = super::Error::from_code(crate::bindings::$name);
            )*
        }

        fn errno_name(errno: c_int) -> Option<&'static str> {
            $(
                if errno == crate::bindings::$name as c_int {
                    return Some(stringify!($name));
                }
            )*
            None
        }
    };
}

declare_errors! {
    EPERM: "Operation not permitted.",
    ENOENT: "No such file or directory.",
    ESRCH: "No such process.",
    EINTR: "Interrupted system call.",
    EIO: "I/O error.",
    ENXIO: "No such device or address.",
    E2BIG: "Argument list too long.",
    ENOEXEC: "Exec format error.",
    EBADF: "Bad file number.",
    ECHILD: "No child processes.",
    EAGAIN: "Try again.",
    ENOMEM: "Out of memory.",
    EACCES: "Permission denied.",
    EFAULT: "Bad address.",
    ENOTBLK: "Block device required.",
    EBUSY: "Device or resource busy.",
    EEXIST: "File exists.",
    EXDEV: "Cross-device link.",
    ENODEV: "No such device.",
    ENOTDIR: "Not a directory.",
    EISDIR: "Is a directory.",
    EINVAL: "Invalid argument.",
    ENFILE: "File table overflow.",
    EMFILE: "Too many open files.",
    ENOTTY: "Not a typewriter (inappropriate ioctl).",
    ETXTBSY: "Text file busy.",
    EFBIG: "File too large.",
    ENOSPC: "No space left on device.",
    ESPIPE: "Illegal seek.",
    EROFS: "Read-only file system.",
    EMLINK: "Too many links.",
    EPIPE: "Broken pipe.",
    EDOM: "Math argument out of domain of func.",
    ERANGE: "Math result not representable.",
    EDEADLK: "Resource deadlock would occur.",
    ENAMETOOLONG: "File name too long.",
    ENOSYS: "Invalid system call number.",
    ENOTEMPTY: "Directory not empty.",
    EOVERFLOW: "Value too large for defined data type.",
    ETIMEDOUT: "Connection timed out.",
    ENOTSUPP: "Operation is not supported.",
    EOPNOTSUPP: "Operation not supported on transport endpoint.",
    ERESTARTSYS: "Restart the system call (a signal is pending).",
}
