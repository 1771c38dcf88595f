// Sending the `mmap_lock` read guard to another thread, which would
// release the lock: an `rw_semaphore` is released by the task that took
// it, so `MmapReadGuard` must not be `Send`.
use kernel::mm::MmUser;

fn assert_send<T: Send>(_: T) {}

fn send_guard(user: &MmUser<'_>) {
    assert_send(user.mmap_read_lock());
}
