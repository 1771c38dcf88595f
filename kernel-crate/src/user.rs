//! User memory: reading from and writing to user-space buffers.
//!
//! C header: [`include/linux/uaccess.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/uaccess.h)
//!
//! A user pointer is only a number: user space may pass any address, one
//! that is not mapped, one that points into the kernel, or a length that
//! runs past the end of the address space. The kernel never dereferences
//! it. `copy_from_user` and `copy_to_user` check the range against the
//! user address space (`access_ok`) and catch page faults on the way (the
//! exception table); they return how many bytes they could *not* copy.
//! Here any shortfall becomes `EFAULT`, and no length arithmetic can wrap:
//! a range whose end overflows `usize` is refused before C sees it.
//!
//! A [`UserSlice`] is a user address and a length; it splits into a
//! [`UserSliceReader`] and a [`UserSliceWriter`] that advance through the
//! range, so a driver can never read or write past what it was given.

use core::ffi::{c_ulong, c_void};

use crate::alloc::{Flags, KVec};
use crate::bindings;
use crate::error::{code::EFAULT, Result};

// ANCHOR: user_slice
/// A range of user memory: an address and a length, both from user space.
///
/// # Invariants
///
/// `addr + len` does not overflow `usize`.
pub struct UserSlice {
    addr: usize,
    len: usize,
}

impl UserSlice {
    /// The user range `[addr, addr + len)`. `EFAULT` if that range wraps
    /// around the end of the address space: `copy_*_user` would refuse it
    /// anyway, but here no later arithmetic needs to think about it.
    pub fn new(addr: usize, len: usize) -> Result<Self> {
        if addr.checked_add(len).is_none() {
            return Err(EFAULT);
        }
        // INVARIANT: just checked.
        Ok(Self { addr, len })
    }
    // ANCHOR_END: user_slice

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the range is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    // ANCHOR: reader_writer
    /// A reader over the whole range.
    pub fn reader(self) -> UserSliceReader {
        UserSliceReader(self)
    }

    /// A writer over the whole range.
    pub fn writer(self) -> UserSliceWriter {
        UserSliceWriter(self)
    }
    // ANCHOR_END: reader_writer

    /// Copies the first `n` bytes of the range with `copy`, which gets
    /// their user address and returns how many bytes it could *not* copy
    /// (as `copy_from_user` and `copy_to_user` do), and leaves the range
    /// just past them. `EFAULT`, and the range unchanged, if fewer than `n`
    /// bytes are left or not all of them were copied.
    fn copy_front(&mut self, n: usize, copy: impl FnOnce(usize) -> c_ulong) -> Result {
        if n > self.len || copy(self.addr) != 0 {
            return Err(EFAULT);
        }
        // INVARIANT: `n <= len`, so the new end is the old one.
        self.addr += n;
        self.len -= n;
        Ok(())
    }
}

/// Reads user memory from the front of a [`UserSlice`].
pub struct UserSliceReader(UserSlice);

// ANCHOR: reader
impl UserSliceReader {
    /// How many bytes are left to read.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing is left to read.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Fills `out` from user memory and advances past it. `EFAULT` if
    /// fewer than `out.len()` bytes are left or if user memory cannot be
    /// read; after an error, `out` may hold part of the data.
    ///
    /// # Context
    ///
    /// May sleep: a page fault on user memory sleeps while the page is read in.
    /// Process context only.
    pub fn read_slice(&mut self, out: &mut [u8]) -> Result {
        let n = out.len();
        self.0.copy_front(n, |user| {
            // SAFETY: `out` is valid for writes of `n` bytes. The user
            // address is checked by `copy_from_user` itself (access_ok and
            // the exception table), which never faults the kernel.
            unsafe {
                bindings::rust_helper_copy_from_user(
                    out.as_mut_ptr().cast::<c_void>(),
                    user as *const c_void,
                    n as c_ulong,
                )
            }
        })
    }
    // ANCHOR_END: reader

    /// Copies the next `len` bytes to `out` and advances past them;
    /// `EFAULT` as for [`read_slice`](Self::read_slice). For memory that
    /// no Rust reference may cover, such as a page that user space maps
    /// too ([`crate::page::Page::read_from_user`]).
    ///
    /// # Safety
    ///
    /// `out` must be valid for writes of `len` bytes for the whole call.
    pub(crate) unsafe fn read_raw(&mut self, out: *mut u8, len: usize) -> Result {
        self.0.copy_front(len, |user| {
            // SAFETY: the caller guarantees `out` is valid for writes of
            // `len` bytes; `copy_from_user` checks the user address itself.
            unsafe {
                bindings::rust_helper_copy_from_user(
                    out.cast::<c_void>(),
                    user as *const c_void,
                    len as c_ulong,
                )
            }
        })
    }

    // ANCHOR: read_vec
    /// Reads the next `len` bytes into a new vector and advances past
    /// them; `EFAULT` as for [`read_slice`](Self::read_slice), `ENOMEM` if
    /// the vector cannot be allocated.
    ///
    /// This is how a driver takes user data in *before* it takes a lock:
    /// a copy from user memory may sleep on a page fault for as long as
    /// user space likes (a page that `userfaultfd` never supplies), and
    /// everyone who waits for a lock held across it waits as long, in an
    /// uninterruptible `mutex_lock`.
    ///
    /// # Context
    ///
    /// May sleep (the page fault of `read_slice`, and the allocation if `flags`
    /// allow it).
    pub fn read_vec(&mut self, len: usize, flags: Flags) -> Result<KVec<u8>> {
        if len > self.len() {
            return Err(EFAULT);
        }
        let mut out = KVec::with_capacity(len, flags)?;
        let zeros = [0u8; 64];
        while out.len() < len {
            let n = (len - out.len()).min(zeros.len());
            out.extend_from_slice(&zeros[..n], flags)?;
        }
        self.read_slice(&mut out)?;
        Ok(out)
    }
    // ANCHOR_END: read_vec

    // ANCHOR: read_bytes
    /// Reads a plain value of `N` bytes, such as an ioctl argument.
    ///
    /// # Context
    ///
    /// May sleep, as `read_slice` does.
    pub fn read_bytes<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        self.read_slice(&mut out)?;
        Ok(out)
    }
    // ANCHOR_END: read_bytes
}

/// Writes user memory at the front of a [`UserSlice`].
pub struct UserSliceWriter(UserSlice);

impl UserSliceWriter {
    /// How many bytes are left to write.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing is left to write.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    // ANCHOR: writer
    /// Copies `data` to user memory and advances past it. `EFAULT` if
    /// fewer than `data.len()` bytes are left or if user memory cannot be
    /// written; after an error, part of `data` may have been written.
    ///
    /// # Context
    ///
    /// May sleep: a page fault on user memory sleeps while the page is read in.
    /// Process context only.
    pub fn write_slice(&mut self, data: &[u8]) -> Result {
        let n = data.len();
        self.0.copy_front(n, |user| {
            // SAFETY: `data` is valid for reads of `n` bytes; `copy_to_user`
            // checks the user address itself and never faults the kernel.
            unsafe {
                bindings::rust_helper_copy_to_user(
                    user as *mut c_void,
                    data.as_ptr().cast::<c_void>(),
                    n as c_ulong,
                )
            }
        })
    }
    // ANCHOR_END: writer
}
