// The module itself, shared by the exercise (`src/lib.rs`) and the reference
// solution (its `lib.rs`, in the instructor's repository), which both
// `include!` it after declaring their own `condvar` module. This file is
// complete: your work is in `src/condvar.rs`.

use core::pin::Pin;

use kernel::kthread::{self, KThread};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::{c_str, new_mutex, pin_init};

use condvar::CondVar;

// A compile-fail step of lab.toml builds this crate with one of the files
// in compile-fail/ as this module: code that must be rejected.
#[cfg(feature = "compile-fail")]
mod compile_fail {
    include!(env!("COMPILE_FAIL_CASE"));
}

module! {
    type: CondVarLab,
    name: "condvar",
    author: "Rust kernel workbook",
    description: "Producers, consumers, a gate and a signal, through a condition variable",
    license: "GPL",
    params: {
        // The checker's differential step loads the module with other
        // numbers too, the same for yours and the reference solution.
        producers: u64 {
            default: 2,
            permissions: 0o444,
            description: "Producer threads",
        },
        consumers: u64 {
            default: 2,
            permissions: 0o444,
            description: "Consumer threads (they divide producers x values evenly)",
        },
        values: u64 {
            default: 10000,
            permissions: 0o444,
            description: "Values each producer sends: 1 to values",
        },
        waiters: u32 {
            default: 3,
            permissions: 0o444,
            description: "Threads waiting at the gate",
        },
    },
}

/// Producer threads (`producers`).
fn nproducers() -> u64 {
    *producers.read()
}

/// Consumer threads (`consumers`).
fn nconsumers() -> u64 {
    *consumers.read()
}

/// Values each producer sends: 1 to `values`.
fn nvalues() -> u64 {
    *values.read()
}

/// Threads waiting at the gate (`waiters`).
fn gate_waiters() -> u32 {
    *waiters.read()
}

// ANCHOR: ring
/// A bounded buffer of four values: producers wait while it is full,
/// consumers while it is empty.
struct Ring {
    items: [u64; 4],
    head: usize,
    len: usize,
}

impl Ring {
    fn is_full(&self) -> bool {
        self.len == self.items.len()
    }

    fn push(&mut self, value: u64) {
        let tail = (self.head + self.len) % self.items.len();
        self.items[tail] = value;
        self.len += 1;
    }

    fn pop(&mut self) -> u64 {
        let value = self.items[self.head];
        self.head = (self.head + 1) % self.items.len();
        self.len -= 1;
        value
    }
}

/// The buffer and its two conditions.
struct Channel {
    ring: Pin<KBox<Mutex<Ring>>>,
    not_empty: CondVar,
    not_full: CondVar,
}

fn produce(channel: &Channel) {
    for value in 1..=nvalues() {
        let mut ring = channel.ring.lock();
        while ring.is_full() {
            channel.not_full.wait(&mut ring);
        }
        ring.push(value);
        drop(ring);
        channel.not_empty.notify_one();
    }
}

fn consume(channel: &Channel, count: u64) -> u64 {
    let mut sum = 0;
    for _ in 0..count {
        let mut ring = channel.ring.lock();
        while ring.len == 0 {
            channel.not_empty.wait(&mut ring);
        }
        sum += ring.pop();
        drop(ring);
        channel.not_full.notify_one();
    }
    sum
}
// ANCHOR_END: ring

/// Runs the producers and consumers and checks that every value arrived
/// exactly once.
fn producers_consumers() -> Result {
    let channel = Arc::new(
        Channel {
            ring: KBox::pin_init(
                new_mutex!(Ring {
                    items: [0; 4],
                    head: 0,
                    len: 0
                }),
                GFP_KERNEL,
            )?,
            not_empty: CondVar::new()?,
            not_full: CondVar::new()?,
        },
        GFP_KERNEL,
    )?;
    let total = Arc::pin_init(new_mutex!(0u64), GFP_KERNEL)?;
    let mut tasks = KVec::new();
    for _ in 0..nproducers() {
        let channel = channel.clone();
        tasks.push(
            KThread::spawn(c_str!("lab06-producer"), move || produce(&channel))?,
            GFP_KERNEL,
        )?;
    }
    for _ in 0..nconsumers() {
        let (channel, total) = (channel.clone(), total.clone());
        let task = KThread::spawn(c_str!("lab06-consumer"), move || {
            let sum = consume(&channel, nproducers() * nvalues() / nconsumers());
            *total.lock() += sum;
        })?;
        tasks.push(task, GFP_KERNEL)?;
    }
    drop(tasks);
    let expected = nproducers() * nvalues() * (nvalues() + 1) / 2;
    let total = *total.lock();
    let verdict = if total == expected {
        "every value arrived once"
    } else {
        "VALUES LOST"
    };
    pr_info!(
        "{} producers x {} values through 4 slots to {} consumers: sum {total} ({verdict})\n",
        nproducers(),
        nvalues(),
        nconsumers()
    );
    Ok(())
}

// ANCHOR: gate
/// How many threads wait at the gate, and whether it is open.
struct GateState {
    waiting: u32,
    open: bool,
    woken: u32,
}

struct Gate {
    state: Pin<KBox<Mutex<GateState>>>,
    changed: CondVar,
}

/// Threads wait until the gate opens; the opener waits until they all
/// wait, then opens it and wakes them all with one `notify_all`.
fn gate() -> Result {
    let gate = Arc::new(
        Gate {
            state: KBox::pin_init(
                new_mutex!(GateState {
                    waiting: 0,
                    open: false,
                    woken: 0
                }),
                GFP_KERNEL,
            )?,
            changed: CondVar::new()?,
        },
        GFP_KERNEL,
    )?;
    let mut tasks = KVec::new();
    for _ in 0..gate_waiters() {
        let gate = gate.clone();
        let task = KThread::spawn(c_str!("lab06-gate"), move || {
            let mut state = gate.state.lock();
            state.waiting += 1;
            gate.changed.notify_all();
            while !state.open {
                gate.changed.wait(&mut state);
            }
            state.woken += 1;
        })?;
        tasks.push(task, GFP_KERNEL)?;
    }
    let mut state = gate.state.lock();
    while state.waiting < gate_waiters() {
        gate.changed.wait(&mut state);
    }
    state.open = true;
    drop(state);
    gate.changed.notify_all();
    drop(tasks);
    let state = gate.state.lock();
    pr_info!(
        "gate: {} threads waited, {} woke on notify_all\n",
        state.waiting,
        state.woken
    );
    Ok(())
}
// ANCHOR_END: gate

// ANCHOR: park
/// Where two threads stay parked while the module is loaded. The mutex is
/// a field of its own (not boxed): the whole `Park` is initialised in place
/// by `pin_init!`, in the `Arc`.
struct Park {
    released: Mutex<bool>,
    changed: CondVar,
}

/// A thread that accepts `SIGKILL` and waits interruptibly: `kill` wakes it.
fn waiter(park: &Park) {
    // Fails (with a warning) only outside a `KThread`'s own thread.
    if kthread::allow_kill().is_err() {
        return;
    }
    let mut released = park.released.lock();
    while !*released {
        if park.changed.wait_interruptible(&mut released) {
            pr_info!("waiter: interrupted by a signal, giving up\n");
            return;
        }
    }
    pr_info!("waiter: released\n");
}

/// A thread that waits uninterruptibly: only a notification wakes it.
fn sleeper(park: &Park) {
    // Fails (with a warning) only outside a `KThread`'s own thread.
    if kthread::allow_kill().is_err() {
        return;
    }
    let mut released = park.released.lock();
    while !*released {
        park.changed.wait(&mut released);
    }
    pr_info!("sleeper: released by notify_all\n");
}
// ANCHOR_END: park

/// What the module keeps while it is loaded.
struct CondVarLab {
    park: Arc<Park>,
    _threads: KVec<KThread>,
}

impl kernel::Module for CondVarLab {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        producers_consumers()?;
        gate()?;

        // ANCHOR: park_init
        let park = Arc::pin_init(
            pin_init!(Park {
                released <- new_mutex!(false),
                changed <- CondVar::new()?,
            }),
            GFP_KERNEL,
        )?;
        // ANCHOR_END: park_init
        let mut threads = KVec::new();
        let p = park.clone();
        threads.push(
            KThread::spawn(c_str!("lab06-waiter"), move || waiter(&p))?,
            GFP_KERNEL,
        )?;
        let p = park.clone();
        threads.push(
            KThread::spawn(c_str!("lab06-sleeper"), move || sleeper(&p))?,
            GFP_KERNEL,
        )?;
        pr_info!("two threads parked: lab06-waiter and lab06-sleeper\n");
        Ok(CondVarLab {
            park,
            _threads: threads,
        })
    }
}

// ANCHOR: drop
impl Drop for CondVarLab {
    fn drop(&mut self) {
        *self.park.released.lock() = true;
        self.park.changed.notify_all();
        // `_threads` is dropped after this function: each `KThread` waits
        // for its thread to end.
    }
}
// ANCHOR_END: drop
