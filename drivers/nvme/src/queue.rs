//! A queue pair: a submission queue the driver writes and a completion
//! queue the controller writes, both in coherent DMA memory, and their two
//! doorbells.

use core::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use kernel::barrier;
use kernel::dma::{CoherentAllocation, DmaAddress};

use kernel::prelude::*;
use kernel::sync::{Arc, SpinLockIrq};
use kernel::{device, new_spinlock_irq, pin_init};

use crate::cmd::{Command, Completion, Sqe};
use crate::regs;

/// Completion queue entries are four dwords.
const CQE_DWORDS: usize = 4;

// ANCHOR: shadow
/// Shadow doorbells (Doorbell Buffer Config, NVMe 1.3): the driver writes
/// each I/O queue's tail and head into memory too, and rings the real
/// doorbell only when the controller's event index says it is not
/// looking. An emulated controller (QEMU's) saves most of its MMIO exits.
/// One page of doorbells and one of event indexes, laid out as the
/// doorbell registers are.
pub(crate) struct Shadow {
    dbs: CoherentAllocation<u32>,
    eis: CoherentAllocation<u32>,
    /// The controller accepted the pages (after Doorbell Buffer Config).
    pub(crate) enabled: AtomicBool,
}

impl Shadow {
    pub(crate) fn new(dev: &device::Device) -> Result<Arc<Shadow>> {
        Ok(Arc::new(
            Shadow {
                dbs: CoherentAllocation::alloc(dev, 1024, GFP_KERNEL)?,
                eis: CoherentAllocation::alloc(dev, 1024, GFP_KERNEL)?,
                enabled: AtomicBool::new(false),
            },
            GFP_KERNEL,
        )?)
    }

    /// Forgets every shadow value, for a controller reset: the pages are
    /// given to the controller again after it.
    pub(crate) fn clear(&self) {
        self.enabled.store(false, Ordering::Release);
        for i in 0..self.dbs.count() {
            let _ = self.dbs.write(i, 0);
            let _ = self.eis.write(i, 0);
        }
    }

    /// The two pages' bus addresses, for Doorbell Buffer Config.
    pub(crate) fn dma(&self) -> (DmaAddress, DmaAddress) {
        (self.dbs.dma_handle(), self.eis.dma_handle())
    }

    /// Writes doorbell `index`'s new `value` into the shadow; returns
    /// whether the controller wants the real doorbell rung too. As the C
    /// driver's `nvme_dbbuf_update_and_check_event`.
    fn update(&self, index: usize, value: u16) -> bool {
        if !self.enabled.load(Ordering::Relaxed) {
            return true;
        }
        // The queue entries are in memory before the shadow says so (C:
        // `wmb()`; both are coherent memory, which `dma_wmb` orders).
        barrier::dma_wmb();
        let old = self.dbs.read(index).unwrap_or(0) as u16;
        if self.dbs.write(index, value.into()).is_err() {
            return true;
        }
        // The shadow is written before the event index is read (the
        // controller orders the other way round): a store then a load,
        // which only a full barrier orders.
        barrier::mb();
        let event = self.eis.read(index).unwrap_or(0) as u16;
        // Ring if the event index is in (old, value]: the controller
        // asked to be told about one of the new entries.
        value.wrapping_sub(event).wrapping_sub(1) < value.wrapping_sub(old)
    }
}
// ANCHOR_END: shadow

// ANCHOR: queue
/// One submission and completion queue pair.
pub(crate) struct Queue {
    /// 0 for the admin queue, 1 and up for I/O queues.
    pub(crate) qid: u16,
    /// Entries in each of the two queues.
    pub(crate) depth: u16,
    sq: CoherentAllocation<Sqe>,
    /// The completion queue, dword by dword: the phase bit in dword 3 is
    /// read before the rest of an entry.
    cq: CoherentAllocation<u32>,
    bar: Arc<regs::Bar>,
    sq_doorbell: usize,
    cq_doorbell: usize,
    /// Shadow doorbells, for I/O queues when the controller has them.
    shadow: Option<Arc<Shadow>>,
    /// Where the next command goes. A lock of its own: a completion can
    /// end a request, which can make blk-mq submit the next one at once.
    sq_tail: SpinLockIrq<u16>,
    /// The controller's last reported submission queue head: entries from
    /// it up to the tail are still being read by the controller.
    sq_head: AtomicU16,
    cq_state: SpinLockIrq<CqState>,
}

/// Where the completion path is.
struct CqState {
    /// The next completion queue entry to look at.
    head: u16,
    /// The phase tag that marks a new entry: it flips each time the
    /// controller wraps around the completion queue.
    phase: bool,
}
// ANCHOR_END: queue

impl Queue {
    /// A queue pair `qid` of `depth` entries, zeroed (every completion
    /// entry's phase is 0, so the first new one has phase 1).
    pub(crate) fn new(
        dev: &device::Device,
        bar: &Arc<regs::Bar>,
        qid: u16,
        depth: u16,
        stride: u32,
        shadow: Option<Arc<Shadow>>,
    ) -> Result<Arc<Queue>> {
        let sq = CoherentAllocation::alloc(dev, depth.into(), GFP_KERNEL)?;
        let cq = CoherentAllocation::alloc(dev, usize::from(depth) * CQE_DWORDS, GFP_KERNEL)?;
        let (sq_doorbell, cq_doorbell) = regs::doorbells(qid, stride);
        // Both doorbells must be inside the BAR.
        if cq_doorbell + 4 > bar.len() {
            return Err(ENODEV);
        }
        let bar = bar.clone();
        Arc::pin_init(
            pin_init!(Queue {
                qid <- qid,
                depth <- depth,
                sq <- sq,
                cq <- cq,
                bar <- bar,
                sq_doorbell <- sq_doorbell,
                cq_doorbell <- cq_doorbell,
                shadow <- shadow,
                sq_tail <- new_spinlock_irq!(0),
                sq_head <- AtomicU16::new(0),
                cq_state <- new_spinlock_irq!(CqState {
                    head: 0,
                    phase: true,
                }),
            }),
            GFP_KERNEL,
        )
    }

    /// The submission queue's bus address.
    pub(crate) fn sq_dma(&self) -> DmaAddress {
        self.sq.dma_handle()
    }

    /// The completion queue's bus address.
    pub(crate) fn cq_dma(&self) -> DmaAddress {
        self.cq.dma_handle()
    }

    /// The shadow doorbells the queue uses, if any.
    pub(crate) fn shadow(&self) -> Option<&Arc<Shadow>> {
        self.shadow.as_ref()
    }

    /// Empties the queue pair for a controller reset (the controller is
    /// disabled and forgot it): indexes back to 0, every completion entry
    /// zeroed so that none looks new.
    pub(crate) fn reset(&self) {
        // The completion lock first, as on the interrupt path (whose
        // completions can submit).
        let mut cq = self.cq_state.lock();
        let mut tail = self.sq_tail.lock();
        for i in 0..self.cq.count() {
            let _ = self.cq.write(i, 0);
        }
        *tail = 0;
        self.sq_head.store(0, Ordering::Relaxed);
        cq.head = 0;
        cq.phase = true;
    }

    // ANCHOR: submit
    /// Copies `cmd` to the tail of the submission queue; rings its
    /// doorbell if `ring` (else a later [`ring`](Self::ring) does, for a
    /// batch). `EBUSY` if the queue is full.
    pub(crate) fn submit(&self, cmd: &Command, ring: bool) -> Result {
        let mut tail = self.sq_tail.lock();
        let next = (*tail + 1) % self.depth;
        if next == self.sq_head.load(Ordering::Relaxed) {
            return Err(EBUSY);
        }
        self.sq.write((*tail).into(), cmd.0)?;
        *tail = next;
        if ring {
            self.ring_doorbell(self.sq_doorbell, next);
        }
        Ok(())
    }

    /// Rings the submission queue's doorbell with the current tail.
    pub(crate) fn ring(&self) {
        let tail = self.sq_tail.lock();
        self.ring_doorbell(self.sq_doorbell, *tail);
    }

    /// Tells the controller `value` through the doorbell at `offset` (and
    /// its shadow).
    fn ring_doorbell(&self, offset: usize, value: u16) {
        if let Some(shadow) = &self.shadow {
            if !shadow.update((offset - regs::DOORBELLS) / 4, value) {
                return;
            }
        }
        // The entries are in memory before the doorbell tells the
        // controller: `writel` orders it after earlier stores. Cannot
        // fail: checked against the BAR in `new`.
        let _ = self.bar.try_write32(offset, value.into());
    }
    // ANCHOR_END: submit

    // ANCHOR: completions
    /// Hands every new completion entry to `f`, then tells the controller
    /// how far the queue was read. Returns how many there were.
    pub(crate) fn process(&self, mut f: impl FnMut(Completion)) -> u32 {
        let mut state = self.cq_state.lock();
        let mut found = 0;
        loop {
            let base = usize::from(state.head) * CQE_DWORDS;
            // The phase bit first: only once it says the entry is new are
            // its other dwords read (the device writes the entry before,
            // or with, the dword that holds the phase).
            let Ok(dw3) = self.cq.read(base + 3) else {
                break;
            };
            if Completion::phase_of(dw3) != state.phase {
                break;
            }
            // The other dwords are read after the phase said the entry is
            // new, not before (from an older entry in the same slot).
            barrier::dma_rmb();
            let dw0 = self.cq.read(base).unwrap_or(0);
            let dw2 = self.cq.read(base + 2).unwrap_or(0);
            let cqe = Completion::from_dwords(dw0, dw2, dw3);
            self.sq_head
                .store(cqe.sq_head % self.depth, Ordering::Relaxed);
            state.head += 1;
            if state.head == self.depth {
                state.head = 0;
                state.phase = !state.phase;
            }
            found += 1;
            f(cqe);
        }
        if found > 0 {
            self.ring_doorbell(self.cq_doorbell, state.head);
        }
        found
    }
    // ANCHOR_END: completions
}
