// The module itself, shared by the exercise (`src/lib.rs`) and the reference
// solution (its `lib.rs`, in the instructor's repository), which both
// `include!` it after declaring their own `mutex` module. This file is
// complete: your work is in `src/mutex.rs`.

use core::sync::atomic::AtomicU64;
use core::sync::atomic::Ordering::Relaxed;

use kernel::kthread::KThread;
use kernel::prelude::*;
use kernel::sync::{Arc, Lock};
use kernel::task;
use kernel::{c_str, new_mutex, new_spinlock, new_spinlock_irq};

use mutex::Mutex;

// ANCHOR: compile_fail
// A compile-fail step of lab.toml builds this crate with one of the files
// in compile-fail/ as this module: code that must be rejected.
#[cfg(feature = "compile-fail")]
mod compile_fail {
    include!(env!("COMPILE_FAIL_CASE"));
}
// ANCHOR_END: compile_fail

module! {
    type: Counter,
    name: "counter",
    author: "Rust kernel workbook",
    description: "Kernel threads hammer a shared counter through each lock",
    license: "GPL",
    params: {
        // The checker's differential step loads the module with other
        // numbers too, the same for yours and the reference solution.
        threads: u64 {
            default: 4,
            permissions: 0o444,
            description: "How many threads increment each counter at once",
        },
        increments: u64 {
            default: 100000,
            permissions: 0o444,
            description: "How many times each thread increments it",
        },
    },
}

/// How many threads increment each counter at once (`threads`).
fn nthreads() -> u64 {
    *threads.read()
}

/// How many times each thread increments it (`increments`).
fn nincrements() -> u64 {
    *increments.read()
}

// ANCHOR: hammer
/// Starts [`nthreads`] kernel threads that each call `increment` on the
/// shared `counter` [`nincrements`] times, all at once, then waits for them.
fn hammer<C: Send + Sync + 'static>(counter: &Arc<C>, increment: fn(&C)) -> Result {
    let ready = Arc::new(AtomicU64::new(0), GFP_KERNEL)?;
    let mut tasks = KVec::new();
    for _ in 0..nthreads() {
        let (counter, ready) = (counter.clone(), ready.clone());
        let task = KThread::spawn(c_str!("counter"), move || {
            // Start together: wait (letting others run) until all are here.
            ready.fetch_add(1, Relaxed);
            while ready.load(Relaxed) < nthreads() {
                task::schedule();
            }
            for _ in 0..nincrements() {
                increment(&counter);
            }
        })?;
        tasks.push(task, GFP_KERNEL)?;
    }
    // Dropping a `KThread` stops its thread, after its loop has ended.
    drop(tasks);
    Ok(())
}
// ANCHOR_END: hammer

/// Prints the final count of one kind of lock.
fn report(name: &str, count: u64) {
    let expected = nthreads() * nincrements();
    let verdict = if count == expected {
        "no update lost"
    } else {
        "UPDATES LOST"
    };
    pr_info!(
        "{name}: {} threads x {} increments = {count} ({verdict})\n",
        nthreads(),
        nincrements()
    );
}

// ANCHOR: racy
/// The same threads on a counter without a lock. Each increment loads,
/// lets other threads run (`schedule`), then stores: a store made by
/// another thread in between is overwritten and lost. The yield makes the
/// race show every time, on one CPU as on several.
fn racy() -> Result {
    let counter = Arc::new(AtomicU64::new(0), GFP_KERNEL)?;
    hammer(&counter, |c| {
        let seen = c.load(Relaxed);
        task::schedule();
        c.store(seen + 1, Relaxed);
    })?;
    let verdict = if counter.load(Relaxed) < nthreads() * nincrements() {
        "updates lost"
    } else {
        "no update lost"
    };
    pr_info!("no lock: {verdict}\n");
    Ok(())
}
// ANCHOR_END: racy

/// Hammers a counter in one of the kernel crate's locks.
fn hammer_kernel_lock<B>(name: &str, counter: Arc<Lock<u64, B>>) -> Result
where
    B: kernel::sync::lock::Backend + 'static,
    Lock<u64, B>: Send + Sync,
{
    hammer(&counter, |c| *c.lock() += 1)?;
    report(name, *counter.lock());
    Ok(())
}

/// What the module keeps while it is loaded: the counter in your mutex.
struct Counter {
    counter: Arc<Mutex<u64>>,
}

impl kernel::Module for Counter {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        racy()?;

        // ANCHOR: init
        let counter = Arc::new(Mutex::new(0u64)?, GFP_KERNEL)?;
        hammer(&counter, |c| *c.lock() += 1)?;
        report("lab mutex", *counter.lock());
        // ANCHOR_END: init

        // ANCHOR: kernel_locks
        hammer_kernel_lock(
            "kernel::sync::Mutex",
            Arc::pin_init(new_mutex!(0), GFP_KERNEL)?,
        )?;
        hammer_kernel_lock(
            "kernel::sync::SpinLock",
            Arc::pin_init(new_spinlock!(0), GFP_KERNEL)?,
        )?;
        hammer_kernel_lock(
            "kernel::sync::SpinLockIrq",
            Arc::pin_init(new_spinlock_irq!(0), GFP_KERNEL)?,
        )?;
        // ANCHOR_END: kernel_locks
        Ok(Counter { counter })
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        pr_info!("unloaded with the counter at {}\n", *self.counter.lock());
    }
}
