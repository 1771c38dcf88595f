//! Soundness tests of what outlives a module's exit, as a safe module (no
//! `unsafe` anywhere): what `lab.toml`'s guest steps load. Each parameter
//! picks one misuse:
//!
//! - `leak_kthread=1`: a `KThread` whose closure loops (sleeping 10 ms at a
//!   time) until it is stopped, `mem::forget`-ed. Before the fix, the
//!   thread kept running after `rmmod` and woke up in freed module text
//!   (an oops on the next instruction fetch).
//! - `kthread_cycle=1`: a `KThread` kept in an `Arc` whose only other
//!   owner is the thread's closure: when the closure ends it drops the
//!   last `Arc`, and with it the `KThread`, on the thread itself. Before,
//!   that drop called `kthread_stop` on its own thread and waited for
//!   itself forever (a thread left in `D` after `rmmod`).
//! - `leak_misc=1`: a misc device whose open data holds the `Arc` that holds the
//!   registration (a cycle: never dropped). Before, the device stayed
//!   registered after `rmmod`, and opening it read the freed module's
//!   `file_operations` (an oops).
//! - `leak_shrinker=1`: a shrinker registration `mem::forget`-ed. Before, the
//!   next reclaim (`drop_caches`) called its `count_objects` in freed
//!   module text.
//! - `signals=1`: `kthread::allow_kill` and `flush_signals` from `init`,
//!   where the current task is `insmod`, and then from a `KThread`. Before,
//!   they changed `insmod`'s signal handling and returned nothing (this
//!   module did not compile against them).
//!
//! The module's exit stops and unregisters each leaked value with a
//! `WARN` naming its type (`kernel::unload`), which the steps expect.

#![no_std]
#![forbid(unsafe_code)]

use core::pin::Pin;
use kernel::kthread::{self, KThread};
use kernel::prelude::*;
use kernel::shrinker::{self, Count, Scan, ShrinkControl, Shrinker};
use kernel::sync::{Arc, Mutex};

use kernel::{c_str, delay, file, miscdev, new_mutex, pin_init};

module! {
    type: LifeTests,
    name: "soundness_life",
    author: "Rust kernel workbook",
    description: "Soundness tests: leaked kthreads and registrations, kthread-only signal calls",
    license: "GPL",
    params: {
        leak_kthread: bool {
            default: false,
            permissions: 0o444,
            description: "Leak a running KThread (mem::forget)",
        },
        kthread_cycle: bool {
            default: false,
            permissions: 0o444,
            description: "Start a KThread whose closure holds the last Arc of a cycle through it",
        },
        leak_misc: bool {
            default: false,
            permissions: 0o444,
            description: "Leak a misc device through an Arc cycle",
        },
        leak_shrinker: bool {
            default: false,
            permissions: 0o444,
            description: "Leak a shrinker registration (mem::forget)",
        },
        signals: bool {
            default: false,
            permissions: 0o444,
            description: "Call kthread::allow_kill and flush_signals outside and inside a KThread",
        },
    },
}

/// A `KThread` in an `Arc` that its own closure holds.
struct Cycle {
    thread: Mutex<Option<KThread>>,
}

/// The files of the leaked misc device: nothing to do, the open is what
/// matters.
struct LeakyFile;

/// What holds the misc device's registration, and what its open data is:
/// the cycle.
struct Holder {
    reg: Mutex<Option<Pin<KBox<miscdev::Registration<LeakyFile>>>>>,
}

#[vtable]
impl file::FileOperations for LeakyFile {
    type OpenData = Arc<Holder>;

    fn open(_shared: &Arc<Holder>, _file: &file::File) -> Result<Self> {
        pr_info!("opened\n");
        Ok(LeakyFile)
    }
}

/// A shrinker with nothing to free.
struct Empty;

impl Shrinker for Empty {
    fn count_objects(&self) -> Count {
        Count::Empty
    }

    fn scan_objects(&self, _sc: &ShrinkControl<'_>) -> Scan {
        Scan::Stop
    }
}

struct LifeTests;

impl kernel::Module for LifeTests {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        if *leak_kthread.read() {
            let thread = KThread::spawn(c_str!("life-leaked"), || {
                while !kthread::should_stop() {
                    delay::msleep(10);
                }
            })?;
            core::mem::forget(thread);
            pr_info!("kthread: forgotten\n");
        }
        if *kthread_cycle.read() {
            let cycle = Arc::pin_init(
                pin_init!(Cycle {
                    thread <- new_mutex!(None)
                }),
                GFP_KERNEL,
            )?;
            let last = cycle.clone();
            let thread = KThread::spawn(c_str!("life-cycle"), move || {
                delay::msleep(100);
                pr_info!("cycle: dropping the last Arc\n");
                drop(last);
            })?;
            *cycle.thread.lock() = Some(thread);
            pr_info!("cycle: started\n");
        }
        if *leak_misc.read() {
            let holder = Arc::pin_init(
                pin_init!(Holder {
                    reg <- new_mutex!(None)
                }),
                GFP_KERNEL,
            )?;
            let reg = miscdev::Registration::<LeakyFile>::new_pinned(
                c_str!("soundness_life"),
                holder.clone(),
            )?;
            *holder.reg.lock() = Some(reg);
            pr_info!("misc: in a cycle\n");
        }
        if *leak_shrinker.read() {
            let reg = shrinker::Registration::new_pinned(c_str!("soundness_life"), Empty)?;
            core::mem::forget(reg);
            pr_info!("shrinker: forgotten\n");
        }
        if *signals.read() {
            pr_info!("init: allow_kill {:?}\n", kthread::allow_kill());
            pr_info!("init: flush_signals {:?}\n", kthread::flush_signals());
            let thread = KThread::spawn(c_str!("life-signals"), || {
                pr_info!("kthread: allow_kill {:?}\n", kthread::allow_kill());
                pr_info!("kthread: flush_signals {:?}\n", kthread::flush_signals());
            })?;
            drop(thread);
        }
        Ok(LifeTests)
    }
}
