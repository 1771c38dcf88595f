// Per-open state that borrows what the registration's owner frees: the
// module drops the registration, then the data, while a file stays open
// and reads through the borrow. Files outlive registrations, so
// `FileOperations` and its `OpenData` are `'static`.
// ANCHOR: case
use kernel::file::{File, FileOperations};
use kernel::prelude::*;
use kernel::user::UserSliceWriter;

struct Borrowing<'a> {
    data: &'a [u8],
}

#[vtable]
impl<'a> FileOperations for Borrowing<'a> {
    type OpenData = &'a [u8];

    fn open(shared: &&'a [u8], _file: &File) -> Result<Self> {
        Ok(Borrowing { data: shared })
    }

    fn read(&self, _file: &File, writer: &mut UserSliceWriter, _offset: u64) -> Result<usize> {
        writer.write_slice(self.data)?;
        Ok(self.data.len())
    }
}
// ANCHOR_END: case
