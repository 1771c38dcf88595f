//! A mapping's pages and a transaction's buffer seen through them: the
//! sender copies into the buffer and translates its objects in place, as
//! C's `binder_transaction` does, without the process lock.

use kernel::page::Page;
use kernel::user::UserSliceReader;

use super::*;

// ANCHOR: pages
/// The pages of a mapping, in order. Who holds a buffer may write it
/// through them without the process lock: the buffer is its own until
/// freed, and a clone of the `Arc` keeps the pages alive meanwhile.
pub(crate) struct Pages(KVec<Page>);
// ANCHOR_END: pages

impl Pages {
    pub(crate) fn new(pages: KVec<Page>) -> Self {
        Pages(pages)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Page> {
        self.0.iter()
    }

    /// Calls `f(page, offset in page, bytes done, n)` for each piece of
    /// the `len` bytes at `offset`, one piece per page; `EFAULT` past the
    /// last page.
    fn each(
        &self,
        offset: usize,
        len: usize,
        mut f: impl FnMut(&Page, usize, usize, usize) -> Result,
    ) -> Result {
        let mut done = 0;
        while done < len {
            let at = offset + done;
            let page = self.0.get(at / PAGE_SIZE).ok_or(EFAULT)?;
            let in_page = at % PAGE_SIZE;
            let n = (len - done).min(PAGE_SIZE - in_page);
            f(page, in_page, done, n)?;
            done += n;
        }
        Ok(())
    }

    /// Copies `data` into the mapping at `offset`.
    pub(crate) fn write(&self, offset: usize, data: &[u8]) -> Result {
        self.each(offset, data.len(), |page, at, done, n| {
            page.write(at, &data[done..done + n])
        })
    }

    /// Copies bytes of the mapping at `offset` into `out`.
    pub(crate) fn read(&self, offset: usize, out: &mut [u8]) -> Result {
        self.each(offset, out.len(), |page, at, done, n| {
            page.read(at, &mut out[done..done + n])
        })
    }

    // ANCHOR: write_from_user
    /// Copies `len` bytes from user memory into the mapping at `offset`,
    /// in one copy as C does (no kernel copy in between, nothing zeroed).
    pub(crate) fn write_from_user(
        &self,
        offset: usize,
        reader: &mut UserSliceReader,
        len: usize,
    ) -> Result {
        self.each(offset, len, |page, at, _, n| {
            page.read_from_user(at, reader, n)
        })
    }
    // ANCHOR_END: write_from_user
}

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
