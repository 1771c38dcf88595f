// The module itself, shared by the exercise (`src/lib.rs`) and the reference
// solution (its `lib.rs`, in the instructor's repository), which both
// `include!` it after declaring their own `completion` module. This file is
// complete and safe: every `unsafe` of the lab is in `src/completion.rs`,
// your work.

use core::sync::atomic::AtomicU64;
use core::sync::atomic::Ordering::Relaxed;

use kernel::kthread::{self, KThread};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::task;
use kernel::{c_str, pin_init};

use completion::Completion;

// A compile-fail step of lab.toml builds this crate with one of the files
// in compile-fail/ as this module: code that must be rejected.
#[cfg(feature = "compile-fail")]
mod compile_fail {
    include!(env!("COMPILE_FAIL_CASE"));
}

module! {
    type: HandoffLab,
    name: "handoff",
    author: "Rust kernel workbook",
    description: "Events counted, a result handed over and a gate opened, through your Completion",
    license: "GPL",
    params: {
        // The checker's differential step loads the module with other
        // numbers too, the same for yours and the reference solution.
        events: u32 {
            default: 2,
            permissions: 0o444,
            description: "Events completed before they are counted back",
        },
        sum_to: u64 {
            default: 1000000,
            permissions: 0o444,
            description: "The worker thread sums 1 to sum_to",
        },
        waiters: u32 {
            default: 3,
            permissions: 0o444,
            description: "Threads waiting at the gate",
        },
        parts: u32 {
            default: 15,
            permissions: 0o444,
            description: "What init runs: 1 counting, 2 handoff, 4 gate, 8 park (a sum of them)",
        },
    },
}

// ANCHOR: counting
/// One thread, no sleeping: `complete` adds an event, `try_wait` takes one,
/// `complete_all` makes the completion done for good.
fn counting() -> Result {
    let done = KBox::pin_init(Completion::new(), GFP_KERNEL)?;
    pr_info!(
        "counting: fresh: done={} try_wait={}\n",
        done.is_done(),
        done.try_wait()
    );
    for _ in 0..*events.read() {
        done.complete();
    }
    let mut taken = 0;
    while done.try_wait() {
        taken += 1;
    }
    pr_info!(
        "counting: {} events completed, {taken} taken, done={}\n",
        *events.read(),
        done.is_done()
    );
    done.complete_all();
    let all = [done.try_wait(), done.try_wait(), done.is_done()];
    pr_info!("counting: after complete_all: try_wait, try_wait, done = {all:?}\n");
    Ok(())
}
// ANCHOR_END: counting

/// A result and the completion that says it is ready.
struct Handoff {
    sum: AtomicU64,
    ready: Completion,
}

// ANCHOR: handoff
/// A worker thread computes a sum and completes `ready`; init waits for it
/// and only then reads the sum.
fn handoff() -> Result {
    let shared = Arc::pin_init(
        pin_init!(Handoff {
            sum <- AtomicU64::new(0),
            ready <- Completion::new(),
        }),
        GFP_KERNEL,
    )?;
    let s = shared.clone();
    let worker = KThread::spawn(c_str!("lab09-worker"), move || {
        for i in 1..=*sum_to.read() {
            s.sum.fetch_add(i, Relaxed);
            if i % 1024 == 0 {
                // Long enough that init, without the wait, reads too
                // early; and polite to the other threads.
                task::schedule();
            }
        }
        s.ready.complete();
    })?;
    shared.ready.wait();
    pr_info!(
        "handoff: the worker's sum of 1..={} is {}\n",
        *sum_to.read(),
        shared.sum.load(Relaxed)
    );
    drop(worker);
    Ok(())
}
// ANCHOR_END: handoff

/// A gate that opens once for everybody, and the way back.
struct Gate {
    open: Completion,
    passed: Completion,
    count: AtomicU64,
}

// ANCHOR: gate
/// `waiters` threads wait at the gate; `complete_all` opens it for all of
/// them, and each reports back through `passed`.
fn gate() -> Result {
    let gate = Arc::pin_init(
        pin_init!(Gate {
            open <- Completion::new(),
            passed <- Completion::new(),
            count <- AtomicU64::new(0),
        }),
        GFP_KERNEL,
    )?;
    let mut tasks = KVec::new();
    for _ in 0..*waiters.read() {
        let g = gate.clone();
        let task = KThread::spawn(c_str!("lab09-gate"), move || {
            g.open.wait();
            g.count.fetch_add(1, Relaxed);
            g.passed.complete();
        })?;
        tasks.push(task, GFP_KERNEL)?;
    }
    let before = gate.count.load(Relaxed);
    gate.open.complete_all();
    for _ in 0..*waiters.read() {
        gate.passed.wait();
    }
    pr_info!(
        "gate: {before} passed before it opened, {} after\n",
        gate.count.load(Relaxed)
    );
    drop(tasks);
    Ok(())
}
// ANCHOR_END: gate

/// Where two threads wait while the module is loaded.
struct Park {
    released: Completion,
}

/// A thread that accepts `SIGKILL` and waits interruptibly: `kill` wakes it.
fn waiter(park: &Park) {
    // Fails (with a warning) only outside a `KThread`'s own thread.
    if kthread::allow_kill().is_err() {
        return;
    }
    match park.released.wait_interruptible() {
        Ok(()) => pr_info!("waiter: released\n"),
        Err(e) => pr_info!("waiter: {e:?}, giving up\n"),
    }
}

/// A thread that waits uninterruptibly: only `complete_all` wakes it.
fn sleeper(park: &Park) {
    // Fails (with a warning) only outside a `KThread`'s own thread.
    if kthread::allow_kill().is_err() {
        return;
    }
    park.released.wait();
    pr_info!("sleeper: released by complete_all\n");
}

/// What the module keeps while it is loaded.
struct HandoffLab {
    park: Arc<Park>,
    _threads: KVec<KThread>,
}

impl kernel::Module for HandoffLab {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let run = *parts.read();
        if run & 1 != 0 {
            counting()?;
        }
        if run & 2 != 0 {
            handoff()?;
        }
        if run & 4 != 0 {
            gate()?;
        }
        let park = Arc::pin_init(
            pin_init!(Park {
                released <- Completion::new(),
            }),
            GFP_KERNEL,
        )?;
        let mut threads = KVec::new();
        if run & 8 != 0 {
            let p = park.clone();
            threads.push(
                KThread::spawn(c_str!("lab09-waiter"), move || waiter(&p))?,
                GFP_KERNEL,
            )?;
            let p = park.clone();
            threads.push(
                KThread::spawn(c_str!("lab09-sleeper"), move || sleeper(&p))?,
                GFP_KERNEL,
            )?;
            pr_info!("two threads parked: lab09-waiter and lab09-sleeper\n");
        }
        Ok(HandoffLab {
            park,
            _threads: threads,
        })
    }
}

impl Drop for HandoffLab {
    fn drop(&mut self) {
        self.park.released.complete_all();
        // `_threads` is dropped after this function: each `KThread` waits
        // for its thread to end.
    }
}
