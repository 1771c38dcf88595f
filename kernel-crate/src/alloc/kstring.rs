//! [`KString`]: a growable UTF-8 string, and [`kformat!`](crate::kformat).

use core::fmt::{self, Write};
use core::ops::Deref;
use core::str;

use super::{AllocError, Flags, KVec};
use crate::error::{code::EINVAL, Result};

/// A growable UTF-8 string on the kmalloc heap, like `String` with fallible,
/// flag-taking operations.
///
/// ```rust
/// let s = kformat!(GFP_KERNEL, "{} items", 3)?; // or Err(ENOMEM)
/// pr_info!("{s}\n");
/// ```
///
/// # Invariants
///
/// `bytes` holds valid UTF-8.
#[derive(Default)]
pub struct KString {
    bytes: KVec<u8>,
}

impl KString {
    /// An empty string; it allocates nothing.
    pub const fn new() -> Self {
        // INVARIANT: no bytes are valid UTF-8.
        KString { bytes: KVec::new() }
    }

    /// A copy of `s`.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn try_from_str(s: &str, flags: Flags) -> Result<Self, AllocError> {
        let mut string = KString::new();
        string.push_str(s, flags)?;
        Ok(string)
    }

    /// Appends `s`. On failure the string is unchanged.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn push_str(&mut self, s: &str, flags: Flags) -> Result<(), AllocError> {
        // INVARIANT: valid UTF-8 followed by valid UTF-8 is valid UTF-8;
        // `extend_from_slice` appends nothing on failure.
        self.bytes.extend_from_slice(s.as_bytes(), flags)
    }

    /// Appends formatted text: `ENOMEM` if memory ran out, `EINVAL` if a
    /// `Display` implementation failed. On failure the string holds what
    /// was written before the failure.
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn write_fmt_with(&mut self, flags: Flags, args: fmt::Arguments<'_>) -> Result {
        let mut writer = Writer {
            string: self,
            flags,
            out_of_memory: false,
        };
        match writer.write_fmt(args) {
            Ok(()) => Ok(()),
            Err(fmt::Error) if writer.out_of_memory => Err(AllocError.into()),
            Err(fmt::Error) => Err(EINVAL),
        }
    }

    /// A new string holding formatted text; see [`kformat!`](crate::kformat).
    ///
    /// # Context
    ///
    /// May sleep if `flags` allow it (`GFP_KERNEL`), in the allocator: from
    /// atomic context pass `GFP_ATOMIC`.
    pub fn try_format(flags: Flags, args: fmt::Arguments<'_>) -> Result<Self> {
        let mut string = KString::new();
        string.write_fmt_with(flags, args)?;
        Ok(string)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // The type invariant makes this always succeed.
        str::from_utf8(self.bytes.as_slice()).unwrap_or_default()
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// How many bytes fit without reallocating.
    pub fn capacity(&self) -> usize {
        self.bytes.capacity()
    }
}

/// A `fmt::Write` for [`KString::write_fmt_with`]: an allocation failure
/// stops formatting with `fmt::Error`, never a panic.
struct Writer<'a> {
    string: &'a mut KString,
    flags: Flags,
    out_of_memory: bool,
}

impl Write for Writer<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.string.push_str(s, self.flags).map_err(|AllocError| {
            self.out_of_memory = true;
            fmt::Error
        })
    }
}

impl Deref for KString {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for KString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for KString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Formats into a new [`KString`]: `kformat!(GFP_KERNEL, "{x} items")`
/// returns `Result<KString>`, `Err(ENOMEM)` if memory ran out.
#[macro_export]
macro_rules! kformat {
    ($flags:expr, $($arg:tt)+) => {
        $crate::alloc::KString::try_format($flags, ::core::format_args!($($arg)+))
    };
}
