// Sharing a mutex whose value must stay in one thread: every thread that
// locks a shared `Mutex<T>` gets a `&mut T`, with which it can move the
// value out (`mem::replace`), so a `Mutex<T>` may be shared (`Sync`) only
// if `T` may be sent to another thread (`Send`). A kernel lock's guard is
// such a value: it may be shared, but it must be released by the thread
// that took the lock.
// ANCHOR: case
use kernel::sync::MutexGuard;

use super::mutex::Mutex;

fn assert_sync<T: Sync>() {}

fn share_a_guard() {
    assert_sync::<Mutex<MutexGuard<'static, ()>>>();
}
// ANCHOR_END: case
