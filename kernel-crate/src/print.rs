//! Printing to the kernel log: `pr_info!` and friends.
//!
//! C header: [`include/linux/printk.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/printk.h)
//!
//! The macros take Rust format arguments. The text is formatted into a
//! buffer on the stack (nothing is allocated) and handed to `printk` as the
//! argument of a fixed `%.*s` format, so a `%` in it is printed as it is and
//! never read as a format directive. Text longer than [`LINE_CAPACITY`] is
//! cut at a character boundary.
//!
//! A message without arguments (`pr_info!("loaded\n")`) needs no
//! formatting: the literal itself is the `%.*s` argument, and the call
//! compiles to one call of `printk`, with no buffer on the stack. Formatting
//! happens in one function per module, not at every call.

use core::ffi::{c_char, c_int};
use core::fmt::{self, Write};

use crate::bindings;

/// The most bytes one `pr_*!` call prints, prefix excluded.
pub const LINE_CAPACITY: usize = 512;

/// A log level (`KERN_*`), as the `pr_*!` macros pass it.
///
/// The level picks the `printk` format, so safe code cannot hand `printk`
/// a format of its own.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// `KERN_EMERG`.
    Emerg,
    /// `KERN_ALERT`.
    Alert,
    /// `KERN_CRIT`.
    Crit,
    /// `KERN_ERR`.
    Err,
    /// `KERN_WARNING`.
    Warning,
    /// `KERN_NOTICE`.
    Notice,
    /// `KERN_INFO`.
    Info,
    /// `KERN_DEBUG`.
    Debug,
    /// `KERN_CONT`: continues the previous line; its prefix is empty.
    Cont,
}

impl Level {
    /// The level marker and a `%s` for the prefix (the module's name and
    /// `: `, nothing for [`Level::Cont`]) then `%.*s` for the text.
    const fn format(self) -> &'static [u8] {
        match self {
            Level::Emerg => b"\x010%s: %.*s\0",
            Level::Alert => b"\x011%s: %.*s\0",
            Level::Crit => b"\x012%s: %.*s\0",
            Level::Err => b"\x013%s: %.*s\0",
            Level::Warning => b"\x014%s: %.*s\0",
            Level::Notice => b"\x015%s: %.*s\0",
            Level::Info => b"\x016%s: %.*s\0",
            Level::Debug => b"\x017%s: %.*s\0",
            Level::Cont => b"\x01c%s%.*s\0",
        }
    }
}

/// A fixed buffer that keeps what fits and drops the rest, cutting only at
/// character boundaries. Once a write is cut, every later write is dropped
/// too, so that a short piece cannot slip in after the cut.
///
/// # Invariants
///
/// `len <= LINE_CAPACITY` and `buf[..len]` is valid UTF-8.
struct LineBuffer {
    buf: [u8; LINE_CAPACITY],
    len: usize,
    truncated: bool,
}

impl LineBuffer {
    const fn new() -> Self {
        // INVARIANT: an empty prefix is valid UTF-8.
        Self {
            buf: [0; LINE_CAPACITY],
            len: 0,
            truncated: false,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

// ANCHOR: line_buffer
impl Write for LineBuffer {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.truncated {
            return Ok(());
        }
        let room = LINE_CAPACITY - self.len;
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        self.truncated = take < s.len();
        self.buf[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        // INVARIANT: `take <= room` and `s[..take]` ends at a char boundary.
        self.len += take;
        // Keep formatting (and dropping) rather than failing: a truncated
        // line is more useful than none.
        Ok(())
    }
}
// ANCHOR_END: line_buffer

/// Formats `args` and prints them at `level`, after `prefix` (a
/// NUL-terminated name; one without a NUL prints no name).
///
/// Used by the `pr_*!` macros; call those instead.
#[doc(hidden)]
#[inline]
pub fn call_printk(level: Level, prefix: &'static [u8], args: fmt::Arguments<'_>) {
    match args.as_str() {
        // A literal without arguments, known when this is inlined into the
        // `pr_*!` call: nothing to format, nor to copy.
        Some(text) => printk_text(level, prefix, text),
        None => printk_formatted(level, prefix, args),
    }
}

/// Formats `args` into a [`LineBuffer`] and prints it; out of line, so that
/// each `pr_*!` call with arguments costs a call and not a buffer.
#[inline(never)]
fn printk_formatted(level: Level, prefix: &'static [u8], args: fmt::Arguments<'_>) {
    let mut line = LineBuffer::new();
    // `LineBuffer::write_str` never fails; a `Display` impl that fails leaves
    // what it wrote so far, which is still worth printing.
    let _ = line.write_fmt(args);
    printk_bytes(level, prefix, line.as_bytes());
}

/// Prints `text` at `level`, after `prefix`, cut as [`LineBuffer`] cuts
/// it: at most [`LINE_CAPACITY`] bytes, at a character boundary.
#[inline]
fn printk_text(level: Level, prefix: &'static [u8], text: &str) {
    let mut len = text.len().min(LINE_CAPACITY);
    while !text.is_char_boundary(len) {
        len -= 1;
    }
    printk_bytes(level, prefix, &text.as_bytes()[..len]);
}

/// Prints the first [`LINE_CAPACITY`] bytes of `text` at `level`, after
/// `prefix`.
#[inline]
fn printk_bytes(level: Level, prefix: &'static [u8], text: &[u8]) {
    let len = text.len().min(LINE_CAPACITY);
    // `%s` reads up to a NUL: a prefix without one (not made by `module!`)
    // would be read past its end.
    let prefix = if prefix.contains(&0) { prefix } else { b"\0" };
    // SAFETY: `level.format()` is a NUL-terminated format whose `%s` takes
    // `prefix` (it holds a NUL, checked above) and whose `%.*s` takes an
    // `int` length and a pointer to at least that many bytes: `len` is at
    // most `LINE_CAPACITY` and at most the length of `text`, and fits an
    // `int`.
    unsafe {
        bindings::_printk(
            level.format().as_ptr().cast::<c_char>(),
            prefix.as_ptr().cast::<c_char>(),
            len as c_int,
            text.as_ptr().cast::<c_char>(),
        );
    }
}

/// Continues the previous line: `KERN_CONT`, no prefix.
#[doc(hidden)]
#[inline]
pub fn call_printk_cont(args: fmt::Arguments<'_>) {
    call_printk(Level::Cont, b"\0", args);
}

// `crate::__LOG_PREFIX` means the calling crate on purpose: the `module!`
// macro defines the prefix there.
#[doc(hidden)]
#[macro_export]
#[expect(clippy::crate_in_macro_def, reason = "the prefix lives in the caller")]
macro_rules! print_macro {
    ($level:ident, $($arg:tt)+) => {
        $crate::print::call_printk(
            $crate::print::Level::$level,
            crate::__LOG_PREFIX,
            ::core::format_args!($($arg)+),
        )
    };
}

/// Prints an emergency message (`KERN_EMERG`): the system is unusable.
///
/// Like every `pr_*!` macro it takes the arguments of [`core::format_args!`],
/// prefixes the text with the module name and, as in C, does not add a
/// newline: end the text with `\n`.
#[macro_export]
macro_rules! pr_emerg {
    ($($arg:tt)+) => { $crate::print_macro!(Emerg, $($arg)+) };
}

/// Prints an alert (`KERN_ALERT`): action must be taken immediately.
#[macro_export]
macro_rules! pr_alert {
    ($($arg:tt)+) => { $crate::print_macro!(Alert, $($arg)+) };
}

/// Prints a critical message (`KERN_CRIT`).
#[macro_export]
macro_rules! pr_crit {
    ($($arg:tt)+) => { $crate::print_macro!(Crit, $($arg)+) };
}

/// Prints an error (`KERN_ERR`).
#[macro_export]
macro_rules! pr_err {
    ($($arg:tt)+) => { $crate::print_macro!(Err, $($arg)+) };
}

/// Prints a warning (`KERN_WARNING`).
#[macro_export]
macro_rules! pr_warn {
    ($($arg:tt)+) => { $crate::print_macro!(Warning, $($arg)+) };
}

/// Prints a normal but significant message (`KERN_NOTICE`).
#[macro_export]
macro_rules! pr_notice {
    ($($arg:tt)+) => { $crate::print_macro!(Notice, $($arg)+) };
}

/// Prints an informational message (`KERN_INFO`).
///
/// ```rust
/// pr_info!("{} + {} = {}\n", 2, 2, 2 + 2); // hello: 2 + 2 = 4
/// ```
#[macro_export]
macro_rules! pr_info {
    ($($arg:tt)+) => { $crate::print_macro!(Info, $($arg)+) };
}

/// Prints a debug message (`KERN_DEBUG`).
#[macro_export]
macro_rules! pr_debug {
    ($($arg:tt)+) => { $crate::print_macro!(Debug, $($arg)+) };
}

/// Continues the previous line (`KERN_CONT`), without the module prefix.
#[macro_export]
macro_rules! pr_cont {
    ($($arg:tt)+) => { $crate::print::call_printk_cont(::core::format_args!($($arg)+)) };
}
