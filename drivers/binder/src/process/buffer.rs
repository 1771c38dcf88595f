//! A transaction's buffer seen through its mapping's pages: the objects
//! in it are read, checked and translated in place, as C's
//! `binder_transaction` does, without the process lock.

use super::*;
use crate::alloc::Pages;

// ANCHOR: txn_buffer
/// One allocated buffer: its data, then its offsets array (8-aligned).
/// Only its holder writes it (the sender until delivery), so no lock is
/// needed; the `Arc` keeps the pages alive if the process tears down.
pub(super) struct TxnBuffer {
    pub(super) pages: Arc<Pages>,
    pub(super) offset: usize,
    pub(super) data_size: usize,
    pub(super) offsets_size: usize,
}
// ANCHOR_END: txn_buffer

/// An object of a buffer, copied out: its type, its offset in the data
/// and its bytes (`flat_binder_object`, `binder_fd_object`).
pub(super) struct Object {
    pub(super) ty: u32,
    pub(super) off: usize,
    pub(super) bytes: [u8; uapi::FLAT_OBJECT_SIZE],
}

impl TxnBuffer {
    /// How many entries the offsets array has.
    pub(super) fn count(&self) -> usize {
        self.offsets_size / 8
    }

    /// Where the offsets array starts in the mapping. The allocator took
    /// the rounded size, so it cannot overflow.
    pub(super) fn offsets_start(&self) -> usize {
        self.offset + align8(self.data_size).unwrap_or(0)
    }

    /// Object `i` of the offsets array, if its offset is 4-aligned and
    /// names a whole object of a known type inside the data.
    pub(super) fn object(&self, i: usize) -> Option<Object> {
        let mut word = [0u8; 8];
        self.pages
            .read(self.offsets_start() + i * 8, &mut word)
            .ok()?;
        let off = usize::try_from(u64::from_ne_bytes(word)).ok()?;
        if off % 4 != 0 || off.checked_add(4)? > self.data_size {
            return None;
        }
        let mut ty = [0u8; 4];
        self.pages.read(self.offset + off, &mut ty).ok()?;
        let ty = u32::from_ne_bytes(ty);
        let mut bytes = [0u8; uapi::FLAT_OBJECT_SIZE];
        if off.checked_add(object_size(ty)?)? > self.data_size {
            return None;
        }
        self.pages.read(self.offset + off, &mut bytes).ok()?;
        Some(Object { ty, off, bytes })
    }

    /// Writes `o` back where it came from.
    pub(super) fn write_object(&self, o: &Object) -> Result {
        self.pages.write(self.offset + o.off, &o.bytes)
    }
}
