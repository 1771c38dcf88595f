// A poll that registers a condition variable reached through a lock
// guard: another call may replace it (and free it) while `poll(2)` still
// sleeps on it, and `poll_freewait` would then unlink from freed memory.
// `PollTable<'a>` only takes a `CondVar` borrowed from the file's state
// for `'a`, which a guard's borrow is not.
// ANCHOR: case
use kernel::file::{File, FileOperations, PollTable, POLLIN};
use kernel::prelude::*;
use kernel::sync::{Arc, CondVar, Mutex};

struct Swapping {
    current: Mutex<Arc<CondVar>>,
}

#[vtable]
impl FileOperations for Swapping {
    type OpenData = ();

    fn open(_shared: &(), _file: &File) -> Result<Self> {
        Err(ENODEV)
    }

    fn poll<'a>(&'a self, _file: &File, table: &PollTable<'a>) -> Result<u32> {
        let current = self.current.lock();
        table.register(&current);
        Ok(POLLIN)
    }
}
// ANCHOR_END: case
