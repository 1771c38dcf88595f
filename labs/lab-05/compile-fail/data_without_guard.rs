// Reaching the data without the guard: the field is private, and nothing
// but `lock()` hands the data out.
// ANCHOR: case
use kernel::sync::Mutex;

fn peek(counter: &Mutex<u64>) -> u64 {
    *counter.data.get()
}
// ANCHOR_END: case
