// A poll that registers a condition variable that only a local clone of
// an `Arc` keeps alive: once the other owners let go, it is freed when
// `poll` returns, under the poller's entry. An older signature that takes
// the table with a lifetime of its own cannot register the state's
// condition variables either: the lifetimes are unrelated.
// ANCHOR: case
use kernel::file::{File, FileOperations, PollTable, POLLIN};
use kernel::prelude::*;
use kernel::sync::{Arc, CondVar, Mutex};

struct Cloning {
    shared: Mutex<Option<Arc<CondVar>>>,
}

#[vtable]
impl FileOperations for Cloning {
    type OpenData = ();

    fn open(_shared: &(), _file: &File) -> Result<Self> {
        Err(ENODEV)
    }

    fn poll<'a>(&'a self, _file: &File, table: &PollTable<'a>) -> Result<u32> {
        let cv = self.shared.lock().clone().ok_or(EINVAL)?;
        table.register(&cv);
        Ok(POLLIN)
    }
}
// ANCHOR_END: case
