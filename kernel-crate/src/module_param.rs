//! Module parameters: values given when the module is loaded
//! (`insmod m.ko count=5 name=abc list=1,2,3`) and, for writable ones,
//! changed later through `/sys/module/<module>/parameters/<param>`.
//!
//! C header: [`include/linux/moduleparam.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/moduleparam.h)
//!
//! The `params` field of the `module!` macro declares them; this file holds
//! what its expansion uses. For each parameter, C's `module_param` puts a
//! `struct kernel_param` in the `__param` section of the `.ko`: the name,
//! the owning module, the permissions of the sysfs file, a pointer to the
//! value and a `struct kernel_param_ops` whose `set` parses a string into
//! the value and whose `get` prints the value into a sysfs page. The kernel
//! calls `set` for each `name=value` on the `insmod` command line before the
//! module's `init` runs, and for each write to the sysfs file afterwards,
//! always with the module's parameter lock held (`kernel_param_lock`).
//!
//! Here, the value lives in a [`ReadOnlyParam`] or a [`WritableParam`],
//! [`ParamOps`] holds the `set` and `get` callbacks of one value type,
//! written in Rust, and [`KernelParam`] is the `struct kernel_param`. Parsing
//! follows the kernel's `kstrto*` functions; a value that does not parse or
//! does not fit is refused with `EINVAL`, which makes `insmod` fail without
//! loading the module (or the sysfs write fail, leaving the value as it was).
//! Nothing is allocated: strings and arrays have a fixed capacity, inside
//! the parameter's storage.
//!
//! Mainline's `rust/kernel/module_param.rs` has integer parameters only,
//! read-only; C's `param_array_set` parses in place and leaves a half-set
//! array on error. [`ArrayParam`] checks every element first, then parses
//! in place: no error leaves it half set, and no copy of it (up to 65535
//! elements) is made on the kernel stack.
//!
//! Reading needs no lock when the parameter cannot be written after load
//! (no write bit in its permissions): [`ReadOnlyParam::read`]. A writable
//! parameter can be read only with the lock held, as a [`KParamGuard`]
//! from [`ThisModule::kernel_param_lock`] proves: [`WritableParam::read`].

use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::fmt::{self, Write};
use core::marker::PhantomData;

use crate::bindings;
use crate::error::{code::EINVAL, from_result, Result};
use crate::module::ThisModule;

/// The size of the buffer the kernel hands to `get`: one page.
const GET_BUFFER_SIZE: usize = bindings::RUST_CONST_HELPER_PAGE_SIZE;

/// The capacity, in bytes, of a `str` parameter declared without one: the
/// longest string C's `charp` parameters accept.
pub const DEFAULT_STR_CAPACITY: usize = 1024;

// ANCHOR: module_param_trait
/// A type a module parameter can have.
///
/// `set` parses what the user wrote, `format` prints the value back for
/// sysfs and `value` is what reading the parameter gives.
pub trait ModuleParam: Send + Sync + 'static {
    /// What reading the parameter gives: the number itself, a `str`, or a
    /// slice of the elements given.
    type Value: ?Sized;

    /// Whether the parameter may be given without a value
    /// (`insmod m.ko verbose`); only `bool` may, meaning `true`.
    const NOARG: bool = false;

    /// Parses `arg` (`None` when no `=value` was given) into `self`.
    ///
    /// On error `self` is left unchanged. One trailing newline is ignored,
    /// as the kernel's `kstrto*` functions do, so that
    /// `echo 5 > /sys/module/m/parameters/count` works.
    fn set(&mut self, arg: Option<&[u8]>) -> Result;

    /// Prints the value as `set` accepts it, without a newline.
    fn format(&self, out: &mut dyn Write) -> fmt::Result;

    /// The value.
    fn value(&self) -> &Self::Value;
}
// ANCHOR_END: module_param_trait

/// A parameter type that can be an element of an [`ArrayParam`].
pub trait ArrayElement: ModuleParam + Copy {
    /// The value of the unused slots of an array.
    const EMPTY: Self;

    /// Whether [`ModuleParam::set`] would accept `arg`: `Err` exactly when
    /// it would fail, with nothing written and no value made (an element
    /// may be large: a `StrParam<4096>`).
    fn check(arg: Option<&[u8]>) -> Result;
}

/// `arg` without one trailing newline, or `EINVAL` if there is no `arg`.
fn required(arg: Option<&[u8]>) -> Result<&[u8]> {
    let arg = arg.ok_or(EINVAL)?;
    Ok(arg.strip_suffix(b"\n").unwrap_or(arg))
}

/// Parses an unsigned magnitude the way `kstrtoull(s, 0, ...)` does:
/// `0x` or `0X` for hexadecimal, a leading `0` for octal, else decimal.
fn parse_magnitude(digits: &[u8]) -> Option<u64> {
    let (radix, digits) = match digits {
        [b'0', b'x' | b'X', rest @ ..] => (16, rest),
        [b'0', rest @ ..] if !rest.is_empty() => (8, rest),
        _ => (10, digits),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: u64 = 0;
    for &byte in digits {
        let digit = char::from(byte).to_digit(radix)?;
        value = value
            .checked_mul(u64::from(radix))?
            .checked_add(u64::from(digit))?;
    }
    Some(value)
}

/// Parses a signed integer: an optional `+` or `-`, then as
/// [`parse_magnitude`].
fn parse_signed(arg: &[u8]) -> Option<i64> {
    match arg {
        [b'-', rest @ ..] => {
            let magnitude = parse_magnitude(rest)?;
            0i64.checked_sub_unsigned(magnitude)
        }
        [b'+', rest @ ..] => i64::try_from(parse_magnitude(rest)?).ok(),
        _ => i64::try_from(parse_magnitude(arg)?).ok(),
    }
}

/// Parses an unsigned integer: an optional `+`, then as [`parse_magnitude`].
fn parse_unsigned(arg: &[u8]) -> Option<u64> {
    parse_magnitude(arg.strip_prefix(b"+").unwrap_or(arg))
}

macro_rules! impl_integer_param {
    ($($ty:ty: $parse:ident,)*) => {
        $(
            impl ModuleParam for $ty {
                type Value = $ty;

                fn set(&mut self, arg: Option<&[u8]>) -> Result {
                    let wide = $parse(required(arg)?).ok_or(EINVAL)?;
                    *self = <$ty>::try_from(wide).map_err(|_| EINVAL)?;
                    Ok(())
                }

                fn format(&self, out: &mut dyn Write) -> fmt::Result {
                    write!(out, "{self}")
                }

                fn value(&self) -> &$ty {
                    self
                }
            }

            impl ArrayElement for $ty {
                const EMPTY: $ty = 0;

                fn check(arg: Option<&[u8]>) -> Result {
                    // An integer is small: parse into a scratch one.
                    let mut scratch = Self::EMPTY;
                    scratch.set(arg)
                }
            }
        )*
    };
}

impl_integer_param! {
    i8: parse_signed,
    u8: parse_unsigned,
    i16: parse_signed,
    u16: parse_unsigned,
    i32: parse_signed,
    u32: parse_unsigned,
    i64: parse_signed,
    u64: parse_unsigned,
    isize: parse_signed,
    usize: parse_unsigned,
}

/// `bool` accepts `y`, `Y`, `1`, `on`, `yes`, `true` and `n`, `N`, `0`,
/// `off`, `no`, `false`, and no value at all for `true`; sysfs shows `Y` or
/// `N`, as for C's `bool` parameters.
impl ModuleParam for bool {
    type Value = bool;

    const NOARG: bool = true;

    fn set(&mut self, arg: Option<&[u8]>) -> Result {
        let Some(arg) = arg else {
            *self = true;
            return Ok(());
        };
        *self = match arg.strip_suffix(b"\n").unwrap_or(arg) {
            b"y" | b"Y" | b"1" | b"on" | b"yes" | b"true" => true,
            b"n" | b"N" | b"0" | b"off" | b"no" | b"false" => false,
            _ => return Err(EINVAL),
        };
        Ok(())
    }

    fn format(&self, out: &mut dyn Write) -> fmt::Result {
        out.write_str(if *self { "Y" } else { "N" })
    }

    fn value(&self) -> &bool {
        self
    }
}

impl ArrayElement for bool {
    const EMPTY: bool = false;

    fn check(arg: Option<&[u8]>) -> Result {
        let mut scratch = Self::EMPTY;
        scratch.set(arg)
    }
}

/// A string parameter of at most `N` bytes of UTF-8, kept in place.
///
/// `module!` writes it `str` (capacity [`DEFAULT_STR_CAPACITY`]) or
/// `StrParam<N>`. A longer value, or one that is not UTF-8, is refused
/// with `EINVAL`. One trailing newline is dropped.
///
/// # Invariants
///
/// `len <= N` and `buf[..len]` is valid UTF-8.
#[derive(Clone, Copy)]
pub struct StrParam<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StrParam<N> {
    /// A parameter holding `value`. Fails to compile, in a `static`, if
    /// `value` is longer than `N`.
    pub const fn new(value: &str) -> Self {
        let bytes = value.as_bytes();
        assert!(
            bytes.len() <= N,
            "the default string is longer than the capacity"
        );
        let mut buf = [0; N];
        let mut i = 0;
        while i < bytes.len() {
            buf[i] = bytes[i];
            i += 1;
        }
        // INVARIANT: `bytes` is a `str` of at most `N` bytes.
        Self {
            buf,
            len: bytes.len(),
        }
    }

    /// The string.
    pub fn as_str(&self) -> &str {
        // Never fails, by the type invariants.
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl<const N: usize> ModuleParam for StrParam<N> {
    type Value = str;

    fn set(&mut self, arg: Option<&[u8]>) -> Result {
        Self::check(arg)?;
        let arg = required(arg)?;
        self.buf[..arg.len()].copy_from_slice(arg);
        // INVARIANT: just checked: `arg` is UTF-8 and fits.
        self.len = arg.len();
        Ok(())
    }

    fn format(&self, out: &mut dyn Write) -> fmt::Result {
        out.write_str(self.as_str())
    }

    fn value(&self) -> &str {
        self.as_str()
    }
}

impl<const N: usize> ArrayElement for StrParam<N> {
    const EMPTY: Self = Self::new("");

    fn check(arg: Option<&[u8]>) -> Result {
        let arg = required(arg)?;
        if arg.len() > N || core::str::from_utf8(arg).is_err() {
            return Err(EINVAL);
        }
        Ok(())
    }
}

/// An array parameter: up to `N` elements, given comma-separated
/// (`list=1,2,3`), as C's `module_param_array`.
///
/// More than `N` elements, or an element that does not parse, is refused
/// with `EINVAL` and leaves the array as it was. The array (up to 65535
/// elements, far more than a 16 KiB kernel stack holds) is parsed in
/// place: every element is checked ([`ArrayElement::check`]) before any is
/// written, and no copy of the array is ever made on the stack.
///
/// # Invariants
///
/// `len <= N`.
#[derive(Clone, Copy)]
pub struct ArrayParam<T: ArrayElement, const N: usize> {
    values: [T; N],
    len: usize,
}

impl<T: ArrayElement, const N: usize> ArrayParam<T, N> {
    /// An array holding `values`. Fails to compile, in a `static`, if there
    /// are more than `N`.
    pub const fn new(values: &[T]) -> Self {
        assert!(values.len() <= N, "more default elements than the capacity");
        let mut array = [T::EMPTY; N];
        let mut i = 0;
        while i < values.len() {
            array[i] = values[i];
            i += 1;
        }
        // INVARIANT: just checked.
        Self {
            values: array,
            len: values.len(),
        }
    }

    /// The elements given.
    pub fn as_slice(&self) -> &[T] {
        &self.values[..self.len]
    }
}

impl<T: ArrayElement, const N: usize> ModuleParam for ArrayParam<T, N> {
    type Value = [T];

    // ANCHOR: array_set
    fn set(&mut self, arg: Option<&[u8]>) -> Result {
        let arg = required(arg)?;
        let items = || arg.split(|&b| b == b',');
        // Check everything first, so that an error changes nothing. No
        // array is built on the stack: `[T; N]` may be megabytes.
        let mut len = 0;
        for item in items() {
            if len == N {
                return Err(EINVAL);
            }
            T::check(Some(item))?;
            len += 1;
        }
        // Then parse in place. `set` accepts what `check` did; were an
        // element type to break that, the array would mix old and new
        // values, still `len` of them: wrong, but no memory is at risk.
        for (slot, item) in self.values.iter_mut().zip(items()) {
            slot.set(Some(item))?;
        }
        // INVARIANT: `len <= N`, checked in the first loop.
        self.len = len;
        Ok(())
    }
    // ANCHOR_END: array_set

    fn format(&self, out: &mut dyn Write) -> fmt::Result {
        for (i, value) in self.as_slice().iter().enumerate() {
            if i > 0 {
                out.write_char(',')?;
            }
            value.format(out)?;
        }
        Ok(())
    }

    fn value(&self) -> &[T] {
        self.as_slice()
    }
}

/// The value of a parameter that nothing writes after the module is loaded:
/// its permissions have no write bit.
///
/// # Invariants
///
/// The value is written only by the `set` callback of [`ParamOps`], through
/// a [`KernelParam`] made by [`KernelParam::read_only`], which the kernel
/// calls only while parsing the `insmod` arguments, before the module's
/// `init` runs.
#[repr(transparent)]
pub struct ReadOnlyParam<T: ModuleParam>(UnsafeCell<T>);

// SAFETY: by the type invariants the value is written only before any code
// of the module runs; after that, sharing `&T` is sound as `T: Sync`.
unsafe impl<T: ModuleParam> Sync for ReadOnlyParam<T> {}

impl<T: ModuleParam> ReadOnlyParam<T> {
    /// A parameter with its default value, for a `static`.
    pub const fn new(default: T) -> Self {
        Self(UnsafeCell::new(default))
    }

    // ANCHOR: read_only
    /// The value. No lock is needed: it cannot change any more.
    pub fn read(&'static self) -> &'static T::Value {
        // SAFETY: by the type invariants, writes happened before the
        // module's code started running and never happen again.
        unsafe { &*self.0.get() }.value()
    }
    // ANCHOR_END: read_only
}

/// The value of a parameter that can be written through sysfs while the
/// module is loaded.
///
/// # Invariants
///
/// The value is written only by the `set` callback of [`ParamOps`], through
/// a [`KernelParam`], which the kernel calls with the module's parameter
/// lock held.
#[repr(transparent)]
pub struct WritableParam<T: ModuleParam>(UnsafeCell<T>);

// SAFETY: by the type invariants every write holds the parameter lock, and
// `read` requires the lock too, so reads and writes never overlap; `T: Send
// + Sync` lets the value be written and read from any task.
unsafe impl<T: ModuleParam> Sync for WritableParam<T> {}

impl<T: ModuleParam> WritableParam<T> {
    /// A parameter with its default value, for a `static`.
    pub const fn new(default: T) -> Self {
        Self(UnsafeCell::new(default))
    }

    // ANCHOR: writable
    /// The value, for as long as the parameter lock is held.
    ///
    /// The guard must come from this module's `THIS_MODULE`, which is the
    /// only [`ThisModule`] that safe code of a module can name.
    pub fn read<'a>(&'a self, _lock: &'a KParamGuard<'_>) -> &'a T::Value {
        // SAFETY: the guard holds the module's parameter lock for `'a`, and
        // by the type invariants every write holds it too.
        unsafe { &*self.0.get() }.value()
    }
    // ANCHOR_END: writable
}

/// The `struct kernel_param_ops` of parameters of type `T`: `set` and `get`
/// written in Rust.
///
/// # Invariants
///
/// `set` and `get` are `set_param::<T>` and `get_param::<T>`.
#[repr(transparent)]
pub struct ParamOps<T: ModuleParam>(bindings::kernel_param_ops, PhantomData<T>);

// SAFETY: the struct holds only function pointers and flags, never changed
// after it is built.
unsafe impl<T: ModuleParam> Sync for ParamOps<T> {}

impl<T: ModuleParam> ParamOps<T> {
    /// The operations, for a `static`.
    #[expect(clippy::new_without_default, reason = "only used in statics")]
    pub const fn new() -> Self {
        let flags = if T::NOARG {
            bindings::KERNEL_PARAM_OPS_FL_NOARG
        } else {
            0
        };
        // INVARIANT: the callbacks for `T`.
        Self(
            bindings::kernel_param_ops {
                flags,
                set: Some(set_param::<T>),
                get: Some(get_param::<T>),
                free: None,
            },
            PhantomData,
        )
    }
}

/// The `set` callback: parses `val` into the value `kp` points to.
///
/// # Safety
///
/// `kp` is a [`KernelParam`] whose value is a `T`; `val` is NULL or a
/// NUL-terminated string; the caller holds the module's parameter lock.
unsafe extern "C" fn set_param<T: ModuleParam>(
    val: *const c_char,
    kp: *const bindings::kernel_param,
) -> c_int {
    let arg = if val.is_null() {
        None
    } else {
        // SAFETY: the caller passes a NUL-terminated string.
        Some(unsafe { CStr::from_ptr(val) }.to_bytes())
    };
    // SAFETY: `kp` is a `KernelParam`, whose `arg` is the `UnsafeCell<T>` of
    // a `ReadOnlyParam<T>` or `WritableParam<T>` (their invariants and
    // `KernelParam`'s). The caller holds the parameter lock, which every
    // writer and every reader of a writable value holds; a read-only value
    // has no readers yet while the kernel parses the `insmod` arguments.
    let value = unsafe { &mut *(*kp).__bindgen_anon_1.arg.cast::<T>() };
    from_result(|| value.set(arg).map(|()| 0))
}

/// Writes into the `get` buffer; what does not fit is dropped.
struct PageWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Write for PageWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let take = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        Ok(())
    }
}

/// The `get` callback: prints the value `kp` points to, and a newline, into
/// the page `buffer` and returns the length.
///
/// # Safety
///
/// `kp` is a [`KernelParam`] whose value is a `T`; `buffer` is a writable
/// page; the caller holds the module's parameter lock.
unsafe extern "C" fn get_param<T: ModuleParam>(
    buffer: *mut c_char,
    kp: *const bindings::kernel_param,
) -> c_int {
    // SAFETY: the caller passes a writable page, which nothing else uses
    // during the call.
    let buf = unsafe { core::slice::from_raw_parts_mut(buffer.cast::<u8>(), GET_BUFFER_SIZE) };
    // SAFETY: as in `set_param`; the lock keeps writers away while we read.
    let value = unsafe { &*(*kp).__bindgen_anon_1.arg.cast::<T>() };
    let mut out = PageWriter { buf, len: 0 };
    // `PageWriter` never fails, and a failing `format` still leaves text.
    let _ = value.format(&mut out);
    let _ = out.write_char('\n');
    // At most `GET_BUFFER_SIZE`, which fits a `c_int`.
    out.len as c_int
}

/// A `struct kernel_param`, as C's `module_param` puts in the `__param`
/// section; the `module!` macro makes one per parameter.
///
/// # Invariants
///
/// `ops` is a [`ParamOps<T>`] and `arg` the `UnsafeCell<T>` of a
/// [`ReadOnlyParam<T>`] (then `perm` has no write bit) or of a
/// [`WritableParam<T>`]; `mod` is the module's `__this_module`; `name` is
/// NUL-terminated.
#[repr(transparent)]
pub struct KernelParam(bindings::kernel_param);

// SAFETY: the struct is never changed after it is built; the kernel reads it
// and accesses the value it points to under the parameter lock.
unsafe impl Sync for KernelParam {}

impl KernelParam {
    /// Builds the `kernel_param` of a parameter that cannot be written after
    /// load. Fails to compile, in a `static`, if `perm` has a write bit.
    pub const fn read_only<T: ModuleParam>(
        name: &'static CStr,
        module: &'static ThisModule,
        perm: u16,
        ops: &'static ParamOps<T>,
        value: &'static ReadOnlyParam<T>,
    ) -> Self {
        assert!(perm & 0o222 == 0, "a read-only parameter has no write bit");
        Self::new(name, module, perm, ops, value.0.get().cast::<c_void>())
    }

    /// Builds the `kernel_param` of a parameter that can be written through
    /// sysfs.
    pub const fn writable<T: ModuleParam>(
        name: &'static CStr,
        module: &'static ThisModule,
        perm: u16,
        ops: &'static ParamOps<T>,
        value: &'static WritableParam<T>,
    ) -> Self {
        Self::new(name, module, perm, ops, value.0.get().cast::<c_void>())
    }

    const fn new<T: ModuleParam>(
        name: &'static CStr,
        module: &'static ThisModule,
        perm: u16,
        ops: &'static ParamOps<T>,
        arg: *mut c_void,
    ) -> Self {
        // World-writable parameters are a security hole; C refuses them at
        // compile time (`VERIFY_OCTAL_PERMISSIONS`), and so does this.
        assert!(perm & 0o002 == 0 && perm <= 0o777, "invalid permissions");
        // INVARIANT: `ops` and `arg` are for the same `T` (the callers give
        // the storage of a `ReadOnlyParam<T>` or `WritableParam<T>`), `name`
        // is a `CStr` and `module` is `__this_module` by `ThisModule`'s
        // invariant.
        Self(bindings::kernel_param {
            name: name.as_ptr(),
            mod_: module.as_raw(),
            ops: &ops.0,
            perm,
            // The level of a loadable module's parameters.
            level: -1,
            flags: 0,
            __bindgen_anon_1: bindings::kernel_param__bindgen_ty_1 { arg },
        })
    }
}

/// Proof that this module's parameter lock is held; unlocks when dropped.
///
/// # Invariants
///
/// The lock of `module` is held by the current task for the guard's life.
pub struct KParamGuard<'a> {
    module: &'a ThisModule,
    /// A mutex is unlocked by the task that locked it: not `Send`.
    _not_send: PhantomData<*mut ()>,
}

impl<'a> KParamGuard<'a> {
    /// Takes `module`'s parameter lock; called by
    /// [`ThisModule::kernel_param_lock`].
    pub(crate) fn lock(module: &'a ThisModule) -> Self {
        // SAFETY: `module.as_raw()` is a live `struct module` (the invariant
        // of `ThisModule`), whose `param_lock` the kernel initialised before
        // any code of the module runs; this may sleep, as all module code
        // outside atomic context may.
        unsafe { bindings::kernel_param_lock(module.as_raw()) };
        // INVARIANT: just locked.
        Self {
            module,
            _not_send: PhantomData,
        }
    }
}

impl Drop for KParamGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: by the type invariants this task holds the lock.
        unsafe { bindings::kernel_param_unlock(self.module.as_raw()) };
    }
}
