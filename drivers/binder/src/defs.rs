//! The protocol's structs, read from and written to byte buffers: the
//! sizes come from the uapi header through `kernel::uapi::binder`, and
//! the layouts (all fields naturally aligned, no padding) are checked
//! against them at build time.

use kernel::uapi::binder as uapi;

pub(crate) const PTR_SIZE: usize = 8;

/// Reads a little-endian `u32` at `off`; the caller checked the length.
pub(crate) fn u32_at(b: &[u8], off: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[off..off + 4]);
    u32::from_ne_bytes(a)
}

/// Reads a `u64` at `off`; the caller checked the length.
pub(crate) fn u64_at(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_ne_bytes(a)
}

pub(crate) fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

pub(crate) fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

/// `x` rounded up to a multiple of 8, or `None` on overflow.
pub(crate) fn align8(x: usize) -> Option<usize> {
    x.checked_add(PTR_SIZE - 1).map(|v| v & !(PTR_SIZE - 1))
}

// ANCHOR: write_read
/// `struct binder_write_read`.
pub(crate) struct WriteRead {
    pub(crate) write_size: u64,
    pub(crate) write_consumed: u64,
    pub(crate) write_buffer: u64,
    pub(crate) read_size: u64,
    pub(crate) read_consumed: u64,
    pub(crate) read_buffer: u64,
}
// ANCHOR_END: write_read

const _: () = assert!(uapi::WRITE_READ_SIZE == 48);
const _: () = assert!(uapi::TRANSACTION_DATA_SIZE == 64);
const _: () = assert!(uapi::FLAT_OBJECT_SIZE == 24);
const _: () = assert!(uapi::NODE_INFO_FOR_REF_SIZE == 24);

impl WriteRead {
    pub(crate) fn from_bytes(b: &[u8; 48]) -> Self {
        WriteRead {
            write_size: u64_at(b, 0),
            write_consumed: u64_at(b, 8),
            write_buffer: u64_at(b, 16),
            read_size: u64_at(b, 24),
            read_consumed: u64_at(b, 32),
            read_buffer: u64_at(b, 40),
        }
    }

    pub(crate) fn to_bytes(&self) -> [u8; 48] {
        let mut b = [0u8; 48];
        put_u64(&mut b, 0, self.write_size);
        put_u64(&mut b, 8, self.write_consumed);
        put_u64(&mut b, 16, self.write_buffer);
        put_u64(&mut b, 24, self.read_size);
        put_u64(&mut b, 32, self.read_consumed);
        put_u64(&mut b, 40, self.read_buffer);
        b
    }
}

/// `struct binder_transaction_data`, as a command carries it.
pub(crate) struct TxnData {
    /// `target.handle` (or `target.ptr` in a return).
    pub(crate) target: u64,
    pub(crate) cookie: u64,
    pub(crate) code: u32,
    pub(crate) flags: u32,
    pub(crate) sender_pid: i32,
    pub(crate) sender_euid: u32,
    pub(crate) data_size: u64,
    pub(crate) offsets_size: u64,
    pub(crate) buffer: u64,
    pub(crate) offsets: u64,
}

impl TxnData {
    pub(crate) fn from_bytes(b: &[u8; 64]) -> Self {
        TxnData {
            target: u64_at(b, 0),
            cookie: u64_at(b, 8),
            code: u32_at(b, 16),
            flags: u32_at(b, 20),
            sender_pid: u32_at(b, 24) as i32,
            sender_euid: u32_at(b, 28),
            data_size: u64_at(b, 32),
            offsets_size: u64_at(b, 40),
            buffer: u64_at(b, 48),
            offsets: u64_at(b, 56),
        }
    }

    pub(crate) fn to_bytes(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        put_u64(&mut b, 0, self.target);
        put_u64(&mut b, 8, self.cookie);
        put_u32(&mut b, 16, self.code);
        put_u32(&mut b, 20, self.flags);
        put_u32(&mut b, 24, self.sender_pid as u32);
        put_u32(&mut b, 28, self.sender_euid);
        put_u64(&mut b, 32, self.data_size);
        put_u64(&mut b, 40, self.offsets_size);
        put_u64(&mut b, 48, self.buffer);
        put_u64(&mut b, 56, self.offsets);
        b
    }
}

/// The size of an object of type `ty` in a transaction's data, or `None`
/// for a type the driver does not know (C's `binder_get_object`).
pub(crate) fn object_size(ty: u32) -> Option<usize> {
    use uapi::obj::*;
    match ty {
        TYPE_BINDER | TYPE_WEAK_BINDER | TYPE_HANDLE | TYPE_WEAK_HANDLE | TYPE_FD => {
            Some(uapi::FLAT_OBJECT_SIZE)
        }
        _ => None,
    }
}
