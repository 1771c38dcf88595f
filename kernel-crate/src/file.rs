//! Files and file operations: what a device driver implements.
//!
//! C header: [`include/linux/fs.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/fs.h)
//! (`struct file`, `struct file_operations`),
//! [`include/linux/poll.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/poll.h).
//!
//! A driver implements [`FileOperations`] for its *per-open* state: each
//! `open(2)` of the device creates one value with [`FileOperations::open`],
//! every later call on that file descriptor (read, write, seek, ioctl,
//! poll) gets a shared reference to it, and the last `close(2)` drops it.
//! The registrations ([`crate::miscdev`], [`crate::chrdev`]) build a C
//! `struct file_operations` whose callbacks are the generic `extern "C"`
//! functions of the private `FileOpsVtable`: they find the Rust value in
//! `file->private_data`, wrap the user buffers in
//! [`UserSliceReader`]/[`UserSliceWriter`], and turn the `Result` into a C
//! return code, in one place.
//!
//! `file_operations.owner` is the module: the VFS takes a reference on the
//! module for each open file (`fops_get`), so `rmmod` fails with `EBUSY`
//! while a file is open, and the code behind these callbacks cannot be
//! unloaded under them.
//!
//! Files outlive registrations: a module may drop a registration while
//! files of it are open, and they keep working on their own state until
//! the last `close(2)`. So the per-open state and the registration's
//! [`FileOperations::OpenData`] are `'static`: neither may borrow what the
//! module frees when it drops the registration.
//!
//! # Poll
//!
//! [`PollTable::register`] takes only a condition variable that the polled
//! file's state owns, which outlives the entries that pollers leave on its
//! queue (see [`PollTable`]). Mainline Rust for Linux
//! (`rust/kernel/sync/poll.rs`) takes any `&PollCondVar` instead, whose
//! `Drop` wakes the queue with `POLLFREE` and waits for an RCU grace period
//! (`synchronize_rcu`). Only epoll (and aio, io_uring) honour `POLLFREE`:
//! a `poll(2)` or `select(2)` sleeping on a freed queue unlinks its entry
//! from it in `poll_freewait` all the same, which C's `wake_up_pollfree`
//! allows because its users (signalfd, binder's threads) free the queue
//! only where no blocking poll can sleep on it; nothing in the type of a
//! `PollCondVar` says so. This crate ties the queue to the file, as C
//! drivers do (a wait queue in `file->private_data` or in a structure it
//! holds a reference to), so a [`CondVar`] needs no `POLLFREE`, and its
//! drop never sleeps, which lets it be dropped in atomic context.

use core::ffi::{c_char, c_int, c_long, c_uint, c_ulong};
use core::marker::PhantomData;

use crate::alloc::{flags::GFP_KERNEL, KBox};
use crate::bindings;
use crate::error::{
    code::{EINVAL, ENODEV, ENOTTY, ENXIO, EOVERFLOW, ESPIPE},
    from_result, Result,
};
use crate::init::Opaque;
use crate::mm::Vma;
use crate::module::ThisModule;
use crate::sync::CondVar;
use crate::user::{UserSlice, UserSliceReader, UserSliceWriter};

/// An open file, `struct file` in C.
///
/// Only ever seen by reference, for the duration of a callback.
#[repr(transparent)]
pub struct File(Opaque<bindings::file>);

impl File {
    /// # Safety
    ///
    /// `ptr` is a valid `struct file` for the lifetime `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::file) -> &'a File {
        // SAFETY: `File` is a transparent wrapper of the C struct, and the
        // caller guarantees that it is valid for `'a`.
        unsafe { &*ptr.cast::<File>() }
    }

    pub(crate) fn as_raw(&self) -> *mut bindings::file {
        self.0.as_raw()
    }

    /// The minor number of the device node this file was opened through.
    pub fn minor(&self) -> u32 {
        // SAFETY: the file is valid (it is borrowed), and an open file of
        // a device always has an inode.
        let rdev = unsafe { bindings::rust_helper_file_rdev(self.as_raw()) };
        rdev & ((1 << bindings::RUST_CONST_HELPER_MINORBITS) - 1)
    }

    /// The `O_*` flags the file was opened with (`file->f_flags`).
    pub fn flags(&self) -> u32 {
        // SAFETY: the file is valid; `f_flags` is only changed by fcntl
        // under the file's lock, and a racy read of a `u32` is harmless.
        unsafe { (*self.as_raw()).f_flags }
    }

    /// Whether the file was opened for writing (`FMODE_WRITE` in
    /// `file->f_mode`: `O_WRONLY` or `O_RDWR`). A driver checks it before
    /// an ioctl that changes the data, as the block layer does (`EBADF`).
    pub fn is_writable(&self) -> bool {
        // SAFETY: the file is valid; `FMODE_WRITE` is set when the file is
        // opened and never changes afterwards.
        let mode = unsafe { (*self.as_raw()).f_mode };
        mode & bindings::RUST_CONST_HELPER_FMODE_WRITE != 0
    }

    /// The file position (`file->f_pos`): where the next `read(2)` or
    /// `write(2)` of this open file starts. A [`FileOperations::seek`]
    /// needs it for [`SeekFrom::Current`].
    pub fn pos(&self) -> u64 {
        // SAFETY: the file is valid. Another thread that shares this open
        // file may store `f_pos` at the same time (the VFS serialises
        // positions with `f_pos_lock` only for regular files and
        // directories): a volatile read of the aligned 64-bit value, C's
        // `READ_ONCE`, gives the old position or the new one.
        let pos = unsafe { core::ptr::read_volatile(core::ptr::addr_of!((*self.as_raw()).f_pos)) };
        // The VFS never lets a device file's position go below 0
        // (`vfs_setpos`, `rw_verify_area`).
        u64::try_from(pos).unwrap_or(0)
    }
}

/// Flags of [`File::flags`], from `include/uapi/asm-generic/fcntl.h`.
pub mod flags {
    use crate::bindings;

    /// `O_NONBLOCK`: a call that would sleep fails with `EAGAIN` instead.
    pub const O_NONBLOCK: u32 = bindings::O_NONBLOCK;
    /// `O_APPEND`: every write goes to the end.
    pub const O_APPEND: u32 = bindings::O_APPEND;
    /// `O_TRUNC`: empty the file on open (the shell's `>`).
    pub const O_TRUNC: u32 = bindings::O_TRUNC;
}

// ANCHOR: seek_from
/// Where a seek is relative to, `whence` in `lseek(2)`. A negative
/// `SEEK_SET` offset never gets here: the adapter answers it with `EINVAL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeekFrom {
    /// `SEEK_SET`: from the start.
    Start(u64),
    /// `SEEK_CUR`: from the current position ([`File::pos`]).
    Current(i64),
    /// `SEEK_END`: from the end.
    End(i64),
    /// `SEEK_DATA`: the first byte of data at or after the offset.
    Data(i64),
    /// `SEEK_HOLE`: the first hole at or after the offset; the end of the
    /// data counts as one.
    Hole(i64),
}

impl SeekFrom {
    /// The new position for a file whose data (all of it, without holes)
    /// ends at `end`, seen from position `current`, in which positions up
    /// to `max` are allowed: what C's `generic_file_llseek_size(file,
    /// offset, whence, max, end)` computes. `EINVAL` for a position below 0
    /// or past `max`, including one whose arithmetic overflows; `ENXIO` for
    /// `Data` and `Hole` at or past `end`, or below 0.
    pub fn resolve(self, current: u64, end: u64, max: u64) -> Result<u64> {
        let new = match self {
            SeekFrom::Start(offset) => Some(offset),
            // `lseek(fd, 0, SEEK_CUR)` only asks where the file is.
            SeekFrom::Current(0) => return Ok(current),
            SeekFrom::Current(delta) => current.checked_add_signed(delta),
            SeekFrom::End(delta) => end.checked_add_signed(delta),
            SeekFrom::Data(offset) | SeekFrom::Hole(offset) => {
                let offset = u64::try_from(offset).map_err(|_| ENXIO)?;
                if offset >= end {
                    return Err(ENXIO);
                }
                Some(if let SeekFrom::Data(_) = self {
                    offset
                } else {
                    end
                })
            }
        };
        // `None`: the sum overflowed, or went below 0.
        new.filter(|&new| new <= max).ok_or(EINVAL)
    }
}
// ANCHOR_END: seek_from

impl SeekFrom {
    /// The seek `lseek(2)` asks for with `offset` and `whence`. `EINVAL`
    /// for a negative `SEEK_SET` offset, as in `vfs_setpos`, and for an
    /// unknown `whence` (which the VFS refuses before us anyway).
    fn from_c(offset: i64, whence: c_int) -> Result<SeekFrom> {
        Ok(match u32::try_from(whence).map_err(|_| EINVAL)? {
            bindings::SEEK_SET => SeekFrom::Start(u64::try_from(offset).map_err(|_| EINVAL)?),
            bindings::SEEK_CUR => SeekFrom::Current(offset),
            bindings::SEEK_END => SeekFrom::End(offset),
            bindings::SEEK_DATA => SeekFrom::Data(offset),
            bindings::SEEK_HOLE => SeekFrom::Hole(offset),
            _ => return Err(EINVAL),
        })
    }
}

/// An ioctl call: the command number and its argument, often a user
/// pointer. Decode the command with [`crate::ioctl`].
#[derive(Debug, Clone, Copy)]
pub struct IoctlCommand {
    /// The command, as user space passed it.
    pub cmd: u32,
    /// The argument.
    pub arg: usize,
}

impl IoctlCommand {
    /// The argument as a user buffer of the size encoded in the command.
    pub fn user_slice(&self) -> Result<UserSlice> {
        UserSlice::new(self.arg, crate::ioctl::size(self.cmd))
    }
}

// ANCHOR: poll_table
/// The `poll_table` of a `poll(2)`/`select(2)`/`epoll(7)` call on a file
/// whose per-open state is borrowed for `'a`.
///
/// A driver's [`poll`](FileOperations::poll) [registers](PollTable::register)
/// the condition variables that its writers notify, then reports the events
/// that are ready now: when nothing is, the caller sleeps until one of them
/// is notified and calls `poll` again.
///
/// The poller's entry stays on a registered queue after `poll` returns:
/// `poll(2)`/`select(2)` take it off in `poll_freewait`, before they return
/// to user space, and epoll when the file is closed (`eventpoll_release`,
/// which `__fput` calls before `release`) or removed from the epoll set.
/// Until then the queue must not be freed. `poll(2)` and `select(2)` hold a
/// reference to the file while they sleep (`__pollwait` takes one), so the
/// file is not released, and its per-open state not dropped, before their
/// entries are gone; epoll removes its entries before `release` too. So a
/// condition variable that the per-open state owns (a field, or behind an
/// `Arc` or a `KBox` that the state keeps) outlives every entry on it, and
/// that is what `register` accepts: only a `&'a CondVar`, where `'a` is the
/// borrow of the per-open state that [`FileOperations::poll`] got. One
/// reached through a lock guard, a temporary or a local clone of an `Arc`
/// is borrowed for less than `'a` and does not compile:
///
/// ```compile_fail
/// # use kernel::file::{File, FileOperations, PollTable, POLLIN};
/// # use kernel::prelude::*;
/// # use kernel::sync::{Arc, CondVar, Mutex};
/// struct MyFile {
///     current: Mutex<Arc<CondVar>>,
/// }
/// # #[vtable]
/// impl FileOperations for MyFile {
/// #   type OpenData = ();
/// #   fn open(_: &(), _: &File) -> Result<Self> { Err(EINVAL) }
///     fn poll<'a>(&'a self, _file: &File, table: &PollTable<'a>) -> Result<u32> {
///         // An ioctl may replace `current` and free this one while
///         // `poll(2)` still sleeps on it.
///         table.register(&self.current.lock());
///         Ok(POLLIN)
///     }
/// }
/// ```
///
/// `'a` is invariant: a `&PollTable<'a>` cannot be shortened to a
/// `&PollTable<'short>` that would take a shorter-lived condition variable.
///
/// # Invariants
///
/// `file` is the file being polled and `table` its `poll_table` (possibly
/// null), both valid for the callback; `'a` is the borrow of `file`'s
/// per-open state, which lives until the file's `release`.
pub struct PollTable<'a> {
    file: *mut bindings::file,
    table: *mut bindings::poll_table_struct,
    /// Invariant in `'a` (see above).
    _p: PhantomData<fn(&'a ()) -> &'a ()>,
}

impl<'a> PollTable<'a> {
    /// Adds `cv` to the queues this poll waits on (`poll_wait`): a
    /// `notify_one`/`notify_all` on it wakes the poller. `cv` must be
    /// borrowed from the per-open state for `'a` (see [`PollTable`]).
    pub fn register(&self, cv: &'a CondVar) {
        // SAFETY: `file` and `table` are valid (type invariants; a null
        // table is allowed). The queue stays valid for as long as the
        // poller's entry is on it: `cv` is borrowed for `'a`, from the
        // per-open state, which lives until `release` (type invariants);
        // `poll`/`select` remove their entries before they drop their
        // reference to the file, so before `release`, and epoll removes its
        // own in `eventpoll_release`, which `__fput` calls before `release`
        // (aio and io_uring hold a file reference while theirs are on it).
        unsafe { bindings::rust_helper_poll_wait(self.file, cv.poll_head(), self.table) };
    }
}
// ANCHOR_END: poll_table

/// Readable without blocking (`EPOLLIN | EPOLLRDNORM`).
pub const POLLIN: u32 =
    bindings::RUST_CONST_HELPER_EPOLLIN | bindings::RUST_CONST_HELPER_EPOLLRDNORM;
/// Writable without blocking (`EPOLLOUT | EPOLLWRNORM`).
pub const POLLOUT: u32 =
    bindings::RUST_CONST_HELPER_EPOLLOUT | bindings::RUST_CONST_HELPER_EPOLLWRNORM;

// ANCHOR: file_operations
/// What a device file does. Implemented by the per-open state.
///
/// The trait and every implementation carry `#[vtable]`: the C table gets
/// only the callbacks an implementation defines, so a method left out
/// behaves as a missing C callback does (`read`/`write`: `EINVAL`, `seek`:
/// `ESPIPE` whatever the arguments, `ioctl`: `ENOTTY`, `poll`: always
/// readable and writable). The defaults below are what those are.
#[crate::vtable]
pub trait FileOperations: Sized + Send + Sync + 'static {
    /// What the registration keeps for `open`: shared by all opens.
    ///
    /// `'static`, as the per-open state is: files stay open after the
    /// registration is dropped, so neither may borrow anything that the
    /// module could free before the last `close(2)`.
    type OpenData: Send + Sync + 'static;

    /// A stream without a position, like a pipe (C's `stream_open`):
    /// `lseek`, `pread` and `pwrite` fail with `ESPIPE`, and `read` and
    /// `write` always get offset 0.
    const STREAM: bool = false;

    /// `open(2)`: creates the per-open state.
    fn open(shared: &Self::OpenData, file: &File) -> Result<Self>;

    /// The last `close(2)` of this open file: drops the state.
    fn release(this: KBox<Self>, _file: &File) {
        drop(this);
    }

    /// `read(2)`: writes at most `writer.len()` bytes and returns how many.
    fn read(&self, _file: &File, _writer: &mut UserSliceWriter, _offset: u64) -> Result<usize> {
        Err(EINVAL)
    }

    /// `write(2)`: consumes at most `reader.len()` bytes and returns how many.
    /// The position moves on from `offset` by that many.
    fn write(&self, _file: &File, _reader: &mut UserSliceReader, _offset: u64) -> Result<usize> {
        Err(EINVAL)
    }

    /// `write(2)` for a driver that moves the position itself, because it
    /// decides where the bytes go (at the end for `O_APPEND`, say): `pos`
    /// starts as the offset of the write; the call consumes at most
    /// `reader.len()` bytes, leaves `pos` just past where it stored them
    /// and returns how many. (A `pwrite(2)` gets its own offset, and its
    /// new position is dropped, as for any file.) Define this or
    /// [`write`](Self::write), not both.
    fn write_pos(
        &self,
        _file: &File,
        _reader: &mut UserSliceReader,
        _pos: &mut u64,
    ) -> Result<usize> {
        Err(EINVAL)
    }

    /// `lseek(2)`: returns the new position, which the adapter stores in
    /// the file. [`SeekFrom::resolve`] computes it the way C drivers
    /// usually do, from [`File::pos`] and where the data ends.
    fn seek(&self, _file: &File, _pos: SeekFrom) -> Result<u64> {
        Err(ESPIPE)
    }

    /// `ioctl(2)`: `ENOTTY` for a command the driver does not know.
    fn ioctl(&self, _file: &File, _cmd: IoctlCommand) -> Result<i32> {
        Err(ENOTTY)
    }

    /// `poll(2)`: the events that are ready now ([`POLLIN`], [`POLLOUT`]).
    /// `table` takes the condition variables that `self` owns, borrowed for
    /// `'a` (see [`PollTable`]).
    fn poll<'a>(&'a self, _file: &File, _table: &PollTable<'a>) -> Result<u32> {
        Ok(POLLIN | POLLOUT)
    }

    /// `mmap(2)`: sets up `vma` (flags, pages). Without it, `ENODEV`.
    fn mmap(&self, _file: &File, _vma: &mut Vma) -> Result {
        Err(ENODEV)
    }

    /// Every `close(2)` of a descriptor of this open file (not only the
    /// last, which is [`release`](FileOperations::release)), also when a
    /// process exits with it open: a chance to wake threads that wait in
    /// the file. What it returns is `close`'s result.
    fn flush(&self, _file: &File) -> Result {
        Ok(())
    }
}
// ANCHOR_END: file_operations

/// How a registration finds its [`FileOperations::OpenData`] when one of its
/// device files is opened.
///
/// # Safety
///
/// An implementation calls `f` at most once, with data that stays valid
/// until `f` returns, and only with the data of the registration whose
/// `file_operations` (using this adapter) the file is being opened with.
pub(crate) unsafe trait OpenAdapter<D> {
    /// Calls `f` with the shared data of the registration the file is
    /// being opened through, and returns what `f` returns; `ENXIO` if that
    /// registration is gone.
    ///
    /// # Safety
    ///
    /// `inode` and `file` are the arguments of an `open` callback of a file
    /// opened through the registration.
    unsafe fn with_open_data<R>(
        inode: *mut bindings::inode,
        file: *mut bindings::file,
        f: impl FnOnce(&D) -> Result<R>,
    ) -> Result<R>;
}

// ANCHOR: vtable
/// The C callbacks for `T`, opened through a registration with adapter `A`.
pub(crate) struct FileOpsVtable<A, T>(PhantomData<(A, T)>);

impl<A: OpenAdapter<T::OpenData>, T: FileOperations> FileOpsVtable<A, T> {
    /// The `struct file_operations`, built at compile time, once for each
    /// `A` and `T`. Left null, a callback is answered by the VFS as for a
    /// C driver without it.
    const VTABLE: bindings::file_operations = {
        assert!(
            !(T::HAS_WRITE && T::HAS_WRITE_POS),
            "define write or write_pos, not both"
        );
        bindings::file_operations {
            owner: ThisModule::THIS.as_raw(),
            open: Some(Self::open),
            release: Some(Self::release),
            read: vtable_slot!(T::HAS_READ, Self::read),
            write: vtable_slot!(T::HAS_WRITE || T::HAS_WRITE_POS, Self::write),
            llseek: vtable_slot!(T::HAS_SEEK, Self::llseek),
            unlocked_ioctl: vtable_slot!(T::HAS_IOCTL, Self::ioctl),
            compat_ioctl: vtable_slot!(T::HAS_IOCTL, Self::ioctl),
            poll: vtable_slot!(T::HAS_POLL, Self::poll),
            mmap: vtable_slot!(T::HAS_MMAP, Self::mmap),
            flush: vtable_slot!(T::HAS_FLUSH, Self::flush),
            // SAFETY: all-zero is a valid `file_operations`: every other
            // field is an optional function pointer or an integer
            // (`mmap_supported_flags`).
            ..unsafe { core::mem::zeroed() }
        }
    };

    /// The table, for the registration's C struct (`miscdevice.fops`,
    /// `cdev_init`): a constant, so it lives in the module's read-only data
    /// for as long as the module's code does.
    pub(crate) const fn build() -> &'static bindings::file_operations {
        &Self::VTABLE
    }

    /// The per-open state of `file`.
    ///
    /// # Safety
    ///
    /// `file` was opened by [`Self::open`] and is not released yet.
    unsafe fn state<'a>(file: *mut bindings::file) -> &'a T {
        // SAFETY: `open` stored a `KBox<T>` in `private_data`, which lives
        // until `release`; callbacks only get shared references.
        unsafe { &*(*file).private_data.cast::<T>() }
    }

    unsafe extern "C" fn open(inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
        from_result(|| {
            // SAFETY: the file is valid during the callback.
            let f = unsafe { File::from_raw(file) };
            // SAFETY: this is the `open` callback of the registration of `A`.
            let state = unsafe { A::with_open_data(inode, file, |shared| T::open(shared, f))? };
            let boxed = KBox::new(state, GFP_KERNEL)?;
            // SAFETY: the file is being opened: nothing else uses
            // `private_data` now; `release` takes the box back.
            unsafe { (*file).private_data = KBox::into_raw(boxed).cast() };
            if T::STREAM {
                // SAFETY: an `open` callback may change the mode of the file
                // it opens: no one else sees the file yet. It never fails.
                unsafe { bindings::stream_open(inode, file) };
            }
            Ok(0)
        })
    }

    unsafe extern "C" fn release(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
        // SAFETY: `open` succeeded for this file (the VFS calls release only
        // then) and stored a `KBox<T>`; this is the last use of it.
        let state = unsafe { KBox::from_raw((*file).private_data.cast::<T>()) };
        // SAFETY: the file is valid during the callback.
        T::release(state, unsafe { File::from_raw(file) });
        0
    }

    /// The `ssize_t` of a read or write that handled `n` of `len` bytes,
    /// after storing the new position `end` in `*ppos`.
    ///
    /// # Safety
    ///
    /// `ppos` is null (a stream) or valid for writes.
    unsafe fn finish(n: usize, len: usize, end: u64, ppos: *mut bindings::loff_t) -> Result<isize> {
        if n > len {
            return Err(EINVAL);
        }
        // The VFS checked that the position plus `len` fits (it refuses
        // the call with `EINVAL` otherwise); only a `write_pos` that moved
        // it past that can fail here.
        let end = i64::try_from(end).map_err(|_| EOVERFLOW)?;
        if !ppos.is_null() {
            // SAFETY: the caller guarantees that a non-null `ppos` is
            // valid (the VFS passes its own copy of the position, which it
            // stores in `f_pos` afterwards, or `pread`'s offset).
            unsafe { *ppos = end };
        }
        // `n <= len <= MAX_RW_COUNT` (the VFS clamps it), so it fits.
        isize::try_from(n).map_err(|_| EINVAL)
    }

    /// What a read or write works on: the per-open state, the file, the
    /// offset it starts at and the user buffer. The offset is `*ppos`, or 0
    /// for a stream (the VFS passes a null `ppos` to a file opened with
    /// `stream_open`); `EINVAL` for a negative one, which the VFS refuses
    /// before us anyway.
    ///
    /// # Safety
    ///
    /// `file` was opened by [`Self::open`] and is not released yet; `ppos`
    /// is null or valid for reads.
    unsafe fn io<'a>(
        file: *mut bindings::file,
        buf: usize,
        len: usize,
        ppos: *mut bindings::loff_t,
    ) -> Result<(&'a T, &'a File, u64, UserSlice)> {
        let pos = if ppos.is_null() {
            0
        } else {
            // SAFETY: the caller guarantees that a non-null `ppos` is valid.
            u64::try_from(unsafe { *ppos }).map_err(|_| EINVAL)?
        };
        // SAFETY: the caller guarantees that `open` opened the file, which
        // is valid during the callback.
        let (state, f) = unsafe { (Self::state(file), File::from_raw(file)) };
        Ok((state, f, pos, UserSlice::new(buf, len)?))
    }

    unsafe extern "C" fn read(
        file: *mut bindings::file,
        buf: *mut c_char,
        len: usize,
        ppos: *mut bindings::loff_t,
    ) -> isize {
        from_result(|| {
            // SAFETY: the VFS calls `read` only on a file that `open`
            // opened, with a valid or null `ppos`.
            let (state, f, pos, user) = unsafe { Self::io(file, buf.addr(), len, ppos)? };
            let n = state.read(f, &mut user.writer(), pos)?;
            // SAFETY: `ppos` is null or valid, as above.
            unsafe { Self::finish(n, len, pos.saturating_add(n as u64), ppos) }
        })
    }

    unsafe extern "C" fn write(
        file: *mut bindings::file,
        buf: *const c_char,
        len: usize,
        ppos: *mut bindings::loff_t,
    ) -> isize {
        from_result(|| {
            // SAFETY: as in `read`.
            let (state, f, pos, user) = unsafe { Self::io(file, buf.addr(), len, ppos)? };
            let mut reader = user.reader();
            let (n, end) = if T::HAS_WRITE_POS {
                let mut end = pos;
                (state.write_pos(f, &mut reader, &mut end)?, end)
            } else {
                let n = state.write(f, &mut reader, pos)?;
                (n, pos.saturating_add(n as u64))
            };
            // SAFETY: `ppos` is null or valid, as above.
            unsafe { Self::finish(n, len, end, ppos) }
        })
    }

    unsafe extern "C" fn llseek(
        file: *mut bindings::file,
        offset: bindings::loff_t,
        whence: c_int,
    ) -> bindings::loff_t {
        from_result(|| {
            // SAFETY: as in `read`.
            let (state, f) = unsafe { (Self::state(file), File::from_raw(file)) };
            let new = state.seek(f, SeekFrom::from_c(offset, whence)?)?;
            let new = i64::try_from(new).map_err(|_| EOVERFLOW)?;
            // SAFETY: the file is valid. `read`/`write` of another thread
            // that shares this open file may store `f_pos` at the same time
            // (device files have no `f_pos_lock`): a volatile store of the
            // aligned 64-bit value, C's `WRITE_ONCE`, is the plain store
            // `vfs_setpos` makes.
            unsafe { core::ptr::write_volatile(core::ptr::addr_of_mut!((*file).f_pos), new) };
            Ok(new)
        })
    }

    unsafe extern "C" fn ioctl(file: *mut bindings::file, cmd: c_uint, arg: c_ulong) -> c_long {
        // SAFETY: as in `read`.
        let (state, f) = unsafe { (Self::state(file), File::from_raw(file)) };
        let cmd = IoctlCommand {
            cmd,
            // `unsigned long` and `usize` are both 64 bits on x86-64.
            arg: arg as usize,
        };
        from_result(|| state.ioctl(f, cmd).map(c_long::from))
    }

    unsafe extern "C" fn poll(
        file: *mut bindings::file,
        table: *mut bindings::poll_table_struct,
    ) -> bindings::__poll_t {
        // SAFETY: as in `read`.
        let (state, f) = unsafe { (Self::state(file), File::from_raw(file)) };
        // INVARIANT: the VFS passes the file and its table, valid during
        // the callback, which `table` does not outlive; `state` is borrowed
        // for `'a` from the box that `release` drops.
        let table = PollTable {
            file,
            table,
            _p: PhantomData,
        };
        // `EPOLLERR` for an error: poll has no other way to report one.
        state
            .poll(f, &table)
            .unwrap_or(bindings::RUST_CONST_HELPER_EPOLLERR)
    }

    unsafe extern "C" fn mmap(
        file: *mut bindings::file,
        vma: *mut bindings::vm_area_struct,
    ) -> c_int {
        // SAFETY: as in `read`.
        let (state, f) = unsafe { (Self::state(file), File::from_raw(file)) };
        // SAFETY: `mmap_region` calls us with the area it is setting up
        // and the `mmap_lock` held for writing, for the whole callback.
        let vma = unsafe { Vma::from_raw(vma) };
        from_result(|| state.mmap(f, vma).map(|()| 0))
    }

    unsafe extern "C" fn flush(file: *mut bindings::file, _id: bindings::fl_owner_t) -> c_int {
        // SAFETY: as in `read` (`filp_close` calls `flush` on a file that
        // is open, before it drops its reference).
        let (state, f) = unsafe { (Self::state(file), File::from_raw(file)) };
        from_result(|| state.flush(f).map(|()| 0))
    }
}
// ANCHOR_END: vtable
