//! NVMe in Rust: the PCI driver `rnvme`, for QEMU's NVMe controller
//! (`1b36:0010`) and any function of the NVMe class.
//!
//! Debian's C `nvme` driver matches the same functions: a function is
//! bound to one of them at a time, chosen with sysfs `driver_override`,
//! `unbind` and `bind`.
//!
//! Probe brings the controller up: disable it, put the admin queue pair in
//! coherent memory, enable it and wait for it to be ready (both with the
//! time-out CAP.TO gives), identify the controller and its namespaces, ask
//! for one I/O queue pair per CPU, and create the pairs it grants, each
//! with an MSI-X vector of its own. Admin commands are polled: they are
//! few, and all made from probe and remove. Remove deletes the I/O queues
//! and shuts the controller down (CC.SHN) before anything is freed.

#![no_std]

use core::ffi::CStr;
use core::pin::Pin;

use kernel::delay::{usleep_range, Jiffies};
use kernel::dma::{self, CoherentAllocation};
use kernel::ida::{self, Ida};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::{c_str, cpu, irq, new_mutex, pci};

mod cmd;
mod queue;
mod regs;

use cmd::{admin, cns, feature, Command};
use queue::Queue;
use regs::Cap;

module! {
    type: RNvme,
    name: "rnvme",
    author: "Rust kernel workbook",
    description: "NVMe driver in Rust",
    license: "GPL",
}

/// Entries of the admin queue pair.
const ADMIN_DEPTH: u16 = 32;
/// Entries of each I/O queue pair (at most CAP.MQES + 1).
const IO_DEPTH: u16 = 256;
/// How long an admin command may take: as the C driver's default.
const ADMIN_TIMEOUT_MS: u32 = 60_000;

/// The module: the registered PCI driver.
struct RNvme {
    _driver: Pin<KBox<pci::Registration<NvmeDriver>>>,
}

impl kernel::Module for RNvme {
    fn init(module: &'static ThisModule) -> Result<Self> {
        Ok(RNvme {
            _driver: pci::Registration::new_pinned(module, Arc::pin_init(Ida::new(), GFP_KERNEL)?)?,
        })
    }
}

/// The PCI driver.
struct NvmeDriver;

/// One namespace, from Identify Namespace.
#[derive(Clone, Copy)]
struct Namespace {
    id: u32,
    /// Size in logical blocks (NSZE).
    blocks: u64,
    /// log2 of the logical block size.
    block_shift: u32,
}

/// An I/O queue pair and its interrupt (dropped first: `free_irq` waits
/// for the handler before the queue can go).
struct IoQueue {
    _irq: Pin<KBox<irq::Registration<Arc<Queue>>>>,
    queue: Arc<Queue>,
}

// ANCHOR: controller
/// One bound controller. Fields drop in order: interrupts before the
/// vectors, queue memory after remove has stopped the controller.
struct Controller {
    io_queues: KVec<IoQueue>,
    vectors: Arc<irq::Vectors>,
    admin: Pin<KBox<Mutex<AdminQueue>>>,
    namespaces: KVec<Namespace>,
    bar: Arc<regs::Bar>,
    cap: Cap,
    pdev: pci::Device,
    /// `N` in the disks' names, `rnvmeNnM`.
    instance: ida::Id,
}
// ANCHOR_END: controller

/// The admin queue pair, behind a mutex: one admin command at a time.
struct AdminQueue {
    queue: Arc<Queue>,
    next_cid: u16,
}

/// The device's name, for messages.
fn name(pdev: &pci::Device) -> &str {
    pdev.as_dev().name().to_str().unwrap_or("?")
}

// ANCHOR: driver
impl pci::Driver for NvmeDriver {
    /// The controllers' instance numbers: `rnvme0`, `rnvme1`, ...
    type Context = Arc<Ida>;
    type Data = Controller;

    const NAME: &'static CStr = c_str!("rnvme");

    const ID_TABLE: &'static [pci::DeviceId] = &[
        // QEMU's NVMe controller.
        pci::DeviceId::new(0x1b36, 0x0010),
        // Any NVMe controller: class mass storage, subclass NVM Express,
        // programming interface NVMe.
        pci::DeviceId::with_class(0x01_08_02, 0xff_ff_ff),
        pci::DeviceId::END,
    ];

    fn probe(pdev: &pci::Device, _id: &pci::DeviceId, ids: &Arc<Ida>) -> Result<Controller> {
        let instance = Ida::alloc(ids, 0, 9999)?;
        pdev.enable_device()?;
        pdev.set_master();
        dma::set_mask_and_coherent(pdev.as_dev(), 64)?;
        let bar = Arc::new(pdev.iomap_region(0, c_str!("rnvme"))?, GFP_KERNEL)?;
        let cap = Cap(bar.read64::<{ regs::CAP }>());
        let vs = bar.read32::<{ regs::VS }>();
        pr_info!(
            "{}: rnvme{}: NVMe {}.{}.{}, CAP {:#018x}: MQES {}, TO {} ms, DSTRD {}\n",
            name(pdev),
            instance.id(),
            vs >> 16,
            (vs >> 8) & 0xff,
            vs & 0xff,
            cap.0,
            cap.max_queue_entries(),
            cap.timeout_ms(),
            cap.doorbell_stride()
        );
        if cap.min_page_shift() > 12 {
            // This driver's PRPs assume 4 KiB memory pages.
            return Err(ENODEV);
        }
        let admin = Queue::new(pdev.as_dev(), &bar, 0, ADMIN_DEPTH, cap.doorbell_stride())?;
        disable(&bar, cap)?;
        let result = bring_up(pdev, bar.clone(), cap, admin, instance);
        if result.is_err() {
            // The controller may hold addresses of memory about to be
            // freed: stop it first.
            let _ = disable(&bar, cap);
        }
        result
    }

    fn remove(pdev: &pci::Device, ctrl: &Controller) {
        ctrl.shutdown();
        pr_info!("{}: rnvme{}: removed\n", name(pdev), ctrl.instance.id());
    }
}
// ANCHOR_END: driver

// ANCHOR: enable
/// Waits until `CSTS & mask == value`, for at most CAP.TO. `ENODEV` if
/// the controller reports a fatal status or the time runs out.
fn wait_status(bar: &regs::Bar, cap: Cap, mask: u32, value: u32) -> Result {
    let deadline = Jiffies::now().after_ms(cap.timeout_ms().max(500));
    loop {
        let csts = bar.read32::<{ regs::CSTS }>();
        if csts == u32::MAX || csts & regs::CSTS_CFS != 0 && mask != regs::CSTS_SHST_MASK {
            // All ones: the device is gone.
            return Err(ENODEV);
        }
        if csts & mask == value {
            return Ok(());
        }
        if deadline.has_passed() {
            return Err(ETIMEDOUT);
        }
        usleep_range(1000, 2000);
    }
}

/// Clears CC.EN and waits for CSTS.RDY to clear.
fn disable(bar: &regs::Bar, cap: Cap) -> Result {
    let cc = bar.read32::<{ regs::CC }>();
    if cc & regs::CC_ENABLE != 0 {
        bar.write32::<{ regs::CC }>(cc & !regs::CC_ENABLE);
    }
    wait_status(bar, cap, regs::CSTS_RDY, 0)
}

/// Points the controller at the admin queue pair, enables it and waits
/// for it to be ready.
fn enable(bar: &regs::Bar, cap: Cap, admin: &Queue) -> Result {
    let depth = u32::from(admin.depth) - 1;
    bar.write32::<{ regs::AQA }>((depth << 16) | depth);
    bar.write64::<{ regs::ASQ }>(admin.sq_dma());
    bar.write64::<{ regs::ACQ }>(admin.cq_dma());
    // NVM command set, 4 KiB memory pages (MPS 0), round robin.
    bar.write32::<{ regs::CC }>(regs::CC_ENTRY_SIZES | regs::CC_ENABLE);
    wait_status(bar, cap, regs::CSTS_RDY, regs::CSTS_RDY)
}
// ANCHOR_END: enable

/// Reads `len` bytes of `buf` from `start` as text, trailing spaces cut.
fn ascii<'a>(buf: &CoherentAllocation<u8>, start: usize, out: &'a mut [u8]) -> &'a str {
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = buf.read(start + i).unwrap_or(b' ');
        if !byte.is_ascii_graphic() {
            *byte = b' ';
        }
    }
    core::str::from_utf8(out).unwrap_or("?").trim_end()
}

/// Reads a little-endian integer of `N` bytes at `start`.
fn le<const N: usize>(buf: &CoherentAllocation<u8>, start: usize) -> u64 {
    (0..N).rev().fold(0, |acc, i| {
        (acc << 8) | u64::from(buf.read(start + i).unwrap_or(0))
    })
}

// ANCHOR: bring_up
/// Everything after the controller was disabled: on error the caller
/// disables it again before what it was given is freed.
fn bring_up(
    pdev: &pci::Device,
    bar: Arc<regs::Bar>,
    cap: Cap,
    admin: Arc<Queue>,
    instance: ida::Id,
) -> Result<Controller> {
    enable(&bar, cap, &admin)?;
    // One vector for the admin queue (polled, so it gets no handler) and
    // one for each I/O queue, one I/O queue per CPU.
    let want = cpu::num_online_cpus().clamp(1, 64);
    let vectors = irq::Vectors::alloc_msix(pdev, 2, want + 1)?;
    let mut ctrl = Controller {
        io_queues: KVec::new(),
        vectors,
        admin: KBox::pin_init(
            new_mutex!(AdminQueue {
                queue: admin,
                next_cid: 0,
            }),
            GFP_KERNEL,
        )?,
        namespaces: KVec::new(),
        bar,
        cap,
        pdev: pdev.clone(),
        instance,
    };
    let page = CoherentAllocation::<u8>::alloc(pdev.as_dev(), 4096, GFP_KERNEL)?;
    let nn = ctrl.identify_controller(&page)?;
    ctrl.identify_namespaces(&page, nn)?;
    let granted = ctrl.set_queue_count(want)?;
    let count = granted.min(ctrl.vectors.count() - 1);
    ctrl.create_io_queues(count)?;
    pr_info!(
        "{}: {} I/O queue pairs of {} entries ({} wanted, {} granted)\n",
        name(pdev),
        ctrl.io_queues.len(),
        IO_DEPTH,
        want,
        granted
    );
    Ok(ctrl)
}
// ANCHOR_END: bring_up

impl Controller {
    // ANCHOR: admin_command
    /// Runs an admin command and polls for its completion; returns its
    /// result dword. `EIO` if the controller reports an error,
    /// `ETIMEDOUT` if it does not answer in time.
    fn admin_command(&self, cmd: Command) -> Result<u32> {
        let mut admin = self.admin.lock();
        let cid = admin.next_cid;
        admin.next_cid = admin.next_cid.wrapping_add(1);
        admin.queue.submit(&cmd.with_cid(cid))?;
        let deadline = Jiffies::now().after_ms(ADMIN_TIMEOUT_MS);
        loop {
            let mut done = None;
            admin.queue.process(|cqe| {
                if cqe.cid == cid {
                    done = Some(cqe);
                }
            });
            if let Some(cqe) = done {
                if cqe.status != 0 {
                    pr_err!(
                        "{}: admin command {:#04x} failed: status {:#x}\n",
                        name(&self.pdev),
                        cmd.0[0] & 0xff,
                        cqe.status
                    );
                    return Err(EIO);
                }
                return Ok(cqe.result);
            }
            if deadline.has_passed() {
                pr_err!(
                    "{}: admin command {:#04x} timed out\n",
                    name(&self.pdev),
                    cmd.0[0] & 0xff
                );
                return Err(ETIMEDOUT);
            }
            usleep_range(20, 100);
        }
    }
    // ANCHOR_END: admin_command

    /// Identify Controller: prints the model, serial number and largest
    /// transfer; returns the number of namespaces.
    fn identify_controller(&self, page: &CoherentAllocation<u8>) -> Result<u32> {
        self.admin_command(Command::identify(cns::CONTROLLER, 0, page.dma_handle()))?;
        let (mut model, mut serial, mut firmware) = ([0u8; 40], [0u8; 20], [0u8; 8]);
        let mdts = le::<1>(page, 77);
        let nn = le::<4>(page, 516) as u32;
        let max_transfer_kib = if mdts == 0 { 0 } else { 4u64 << mdts };
        pr_info!(
            "{}: model '{}', serial '{}', firmware '{}', max transfer {} KiB, {} namespace(s)\n",
            name(&self.pdev),
            ascii(page, 24, &mut model),
            ascii(page, 4, &mut serial),
            ascii(page, 64, &mut firmware),
            max_transfer_kib,
            nn
        );
        Ok(nn)
    }

    /// Identify Namespace for each active namespace (from the active
    /// namespace list: up to 1024, of at most `nn`).
    fn identify_namespaces(&mut self, page: &CoherentAllocation<u8>, nn: u32) -> Result {
        self.admin_command(Command::identify(
            cns::ACTIVE_NAMESPACES,
            0,
            page.dma_handle(),
        ))?;
        let mut ids = KVec::new();
        for i in 0..1024 {
            let id = le::<4>(page, 4 * i) as u32;
            if id == 0 || id > nn {
                break;
            }
            ids.push(id, GFP_KERNEL)?;
        }
        for &id in ids.iter() {
            self.admin_command(Command::identify(cns::NAMESPACE, id, page.dma_handle()))?;
            let blocks = le::<8>(page, 0);
            if blocks == 0 {
                continue;
            }
            let format = le::<1>(page, 26) as usize & 0xf;
            let block_shift = le::<1>(page, 128 + 4 * format + 2) as u32;
            if !(9..=16).contains(&block_shift) {
                pr_warn!(
                    "{}: namespace {}: block size 2^{} not supported\n",
                    name(&self.pdev),
                    id,
                    block_shift
                );
                continue;
            }
            let ns = Namespace {
                id,
                blocks,
                block_shift,
            };
            pr_info!(
                "{}: namespace {}: {} blocks of {} bytes ({} MiB)\n",
                name(&self.pdev),
                ns.id,
                ns.blocks,
                1u32 << ns.block_shift,
                (ns.blocks << ns.block_shift) >> 20
            );
            self.namespaces.push(ns, GFP_KERNEL)?;
        }
        Ok(())
    }

    /// Set Features, Number of Queues: asks for `want` I/O submission and
    /// completion queues, returns how many pairs the controller grants.
    fn set_queue_count(&self, want: u32) -> Result<u32> {
        let n = want - 1;
        let result = self.admin_command(
            Command::new(admin::SET_FEATURES)
                .cdw(10, feature::NUM_QUEUES)
                .cdw(11, (n << 16) | n),
        )?;
        // Both counts are zero-based.
        let sqs = (result & 0xffff) + 1;
        let cqs = (result >> 16) + 1;
        Ok(sqs.min(cqs).min(want))
    }

    // ANCHOR: create_io_queues
    /// Creates I/O queue pairs 1 to `count`, pair `n` interrupting on
    /// vector `n`.
    fn create_io_queues(&mut self, count: u32) -> Result {
        let depth = IO_DEPTH.min(self.cap.max_queue_entries().min(4096) as u16);
        for qid in 1..=count as u16 {
            let queue = Queue::new(
                self.pdev.as_dev(),
                &self.bar,
                qid,
                depth,
                self.cap.doorbell_stride(),
            )?;
            let size = u32::from(depth - 1) << 16;
            // The completion queue first: physically contiguous (PC),
            // interrupts enabled (IEN) on vector `qid`.
            self.admin_command(
                Command::new(admin::CREATE_CQ)
                    .prp(queue.cq_dma(), 0)
                    .cdw(10, size | u32::from(qid))
                    .cdw(11, (u32::from(qid) << 16) | 0b11),
            )?;
            let irq = match irq::Registration::new(
                &self.vectors,
                qid.into(),
                c_str!("rnvme"),
                queue.clone(),
            ) {
                Ok(irq) => irq,
                Err(e) => {
                    let _ = self.delete_queue(admin::DELETE_CQ, qid);
                    return Err(e);
                }
            };
            // Then the submission queue, feeding completion queue `qid`.
            let created = self.admin_command(
                Command::new(admin::CREATE_SQ)
                    .prp(queue.sq_dma(), 0)
                    .cdw(10, size | u32::from(qid))
                    .cdw(11, (u32::from(qid) << 16) | 1),
            );
            if let Err(e) = created {
                let _ = self.delete_queue(admin::DELETE_CQ, qid);
                return Err(e);
            }
            if let Err(e) = self
                .io_queues
                .push(IoQueue { _irq: irq, queue }, GFP_KERNEL)
            {
                let _ = self.delete_queue(admin::DELETE_SQ, qid);
                let _ = self.delete_queue(admin::DELETE_CQ, qid);
                return Err(e.into());
            }
        }
        Ok(())
    }
    // ANCHOR_END: create_io_queues

    /// Deletes I/O submission or completion queue `qid`.
    fn delete_queue(&self, opcode: u8, qid: u16) -> Result {
        self.admin_command(Command::new(opcode).cdw(10, qid.into()))
            .map(drop)
    }

    // ANCHOR: shutdown
    /// Deletes the I/O queues (submission queues first) and shuts the
    /// controller down: after this it touches no memory of ours.
    fn shutdown(&self) {
        for io in self.io_queues.iter().rev() {
            let _ = self.delete_queue(admin::DELETE_SQ, io.queue.qid);
        }
        for io in self.io_queues.iter().rev() {
            let _ = self.delete_queue(admin::DELETE_CQ, io.queue.qid);
        }
        let cc = self.bar.read32::<{ regs::CC }>();
        self.bar
            .write32::<{ regs::CC }>((cc & !regs::CC_SHN_MASK) | regs::CC_SHN_NORMAL);
        if wait_status(
            &self.bar,
            self.cap,
            regs::CSTS_SHST_MASK,
            regs::CSTS_SHST_CMPLT,
        )
        .is_err()
        {
            pr_warn!("{}: shutdown did not complete\n", name(&self.pdev));
        }
        // Disabled, the controller forgets the admin queue's addresses too.
        let _ = disable(&self.bar, self.cap);
        self.pdev.clear_master();
    }
    // ANCHOR_END: shutdown
}
