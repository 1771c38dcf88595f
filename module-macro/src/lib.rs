//! The `module!` macro: declares a loadable kernel module written in Rust.
//!
//! ```ignore
//! use kernel::prelude::*;
//!
//! module! {
//!     type: Hello,                      // the type that implements `kernel::Module`
//!     name: "hello",                    // the module name, also the log prefix
//!     author: ["Ada", "Grace"],         // optional: one string or a list
//!     description: "Says hello",        // optional
//!     license: "GPL",                   // required
//!     alias: "hi",                      // optional: one string or a list
//!     params: {                         // optional: module parameters
//!         count: u8 {
//!             default: 1,
//!             permissions: 0o644,       // writable by root through sysfs
//!             description: "How many times to greet",
//!         },
//!         who: StrParam<16> { default: "world", permissions: 0o444, description: "Who to greet" },
//!         list: ArrayParam<i32, 4> { default: [1, 2], permissions: 0o444, description: "Numbers" },
//!     },
//! }
//! ```
//!
//! Fields may come in any order and the trailing comma is optional. `type`,
//! `name` and `license` are required. Wherever a string is expected, a byte
//! string such as `b"hello"` works too; it must be valid UTF-8. No string may
//! be empty or contain a NUL byte. `name` must be a valid module name: ASCII
//! letters, digits and `_`, not starting with a digit, at most 55 bytes.
//!
//! A parameter has a type, and all three of `default`, `permissions` and
//! `description`. The types are `bool`, `i8` to `u64`, `isize`, `usize`,
//! `str` (a string of at most 1024 bytes), `StrParam<N>` (at most `N`
//! bytes) and `ArrayParam<T, N>` (up to `N` elements of one of the others,
//! comma-separated on the command line). The default must fit the type;
//! the permissions are an octal mode that must not make the parameter
//! world-writable. Each parameter becomes a `static` of its name: a
//! `kernel::module_param::ReadOnlyParam` when the permissions have no write
//! bit (`count.read()`), else a `WritableParam`, read under the parameter
//! lock (`count.read(&THIS_MODULE.kernel_param_lock())`).
//!
//! The macro expands to:
//!
//! - one `static` in the `.modinfo` section per `author`, `description`,
//!   `license` and `alias` string, as C's `MODULE_INFO` does;
//! - `__LOG_PREFIX`, the module name as a NUL-terminated byte string, which
//!   the `pr_*!` macros use;
//! - `THIS_MODULE`, the `kernel::ThisModule` of `__this_module`;
//! - per parameter, its `parm` and `parmtype` strings in `.modinfo`, its
//!   value, its `kernel_param_ops` and its `struct kernel_param` in the
//!   `__param` section, as C's `module_param` makes;
//! - `init_module` and `cleanup_module`, which the kernel calls on load and
//!   unload, and which create and drop the `type` through a
//!   `kernel::module::ModuleSlot`.
//!
//! Bad input does not panic: every mistake becomes a compile error pointing
//! at the token at fault, all of them in one build, and `THIS_MODULE` and
//! `__LOG_PREFIX` are still defined so that the rest of the crate compiles.
//!
//! The code is in three passes: `ast` parses, `valid` checks and
//! `expand` generates.

mod ast;
mod expand;
mod valid;
mod vtable;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Declares a kernel module. See the [crate documentation](crate) for the
/// syntax.
#[proc_macro]
pub fn module(input: TokenStream) -> TokenStream {
    expand::module(input.into()).into()
}

/// Marks a trait whose implementations fill a C function table, or such an
/// implementation: each method `foo` gets a constant `HAS_FOO`, true when
/// the implementation defines `foo`. The table installs only those, so a
/// method left out behaves as a missing C callback does.
///
/// ```ignore
/// #[vtable]
/// impl FileOperations for MyFile {
///     type OpenData = ();
///     fn open(_: &(), _: &File) -> Result<Self> { Ok(MyFile) }
///     // No `seek`: `MyFile::HAS_SEEK` is false, `lseek(2)` gets `ESPIPE`.
/// }
/// ```
#[proc_macro_attribute]
pub fn vtable(attr: TokenStream, item: TokenStream) -> TokenStream {
    vtable::vtable(attr.into(), item.into()).into()
}
