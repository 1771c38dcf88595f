// Sending a guard to another thread: the C mutex must be released by the
// thread that took it, so a `MutexGuard` must not be `Send`.
// ANCHOR: case
use super::mutex::Mutex;

fn assert_send<T: Send>(_: T) {}

fn send_guard(counter: &Mutex<u64>) {
    assert_send(counter.lock());
}
// ANCHOR_END: case
