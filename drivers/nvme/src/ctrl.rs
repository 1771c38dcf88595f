//! The controller: probe brings it up and adds its disks, remove takes
//! them down and shuts it down, and a reset brings it back (see the crate's
//! documentation); `blk.rs` is the I/O path. The module is the registered
//! PCI driver.

use core::ffi::CStr;
use core::pin::Pin;
use core::sync::atomic::{AtomicU8, Ordering};

use kernel::block::mq::{GenDisk, GenDiskBuilder, TagSet, TagSetOptions};
use kernel::delay::{usleep_range, Jiffies};
use kernel::dma::{self, CoherentAllocation};
use kernel::ida::{self, Ida};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::uapi::nvme;
use kernel::user::UserSlice;
use kernel::{c_str, cpu, cred, irq, new_mutex, pci, pin_init};

use crate::blk::{self, IoIrq, IoShared, NsData, NvmeOps};
use crate::cmd::{self, admin, cns, feature, Command};
use crate::prp;
use crate::queue::{Queue, Shadow};
use crate::regs::{self, Cap};

/// Entries of the admin queue pair.
const ADMIN_DEPTH: u16 = 32;
/// Entries of each I/O queue pair (at most CAP.MQES + 1). The tag set
/// holds one request fewer: a full queue has one empty slot.
pub(crate) const IO_DEPTH: u16 = 256;
/// How long an admin command may take: as the C driver's default.
const ADMIN_TIMEOUT_MS: u32 = 60_000;
/// How long an I/O command may take: as the C driver's default.
const IO_TIMEOUT_MS: u32 = 30_000;
/// The largest transfer, whatever MDTS allows: as the C driver's.
const MAX_TRANSFER: u64 = 4 << 20;
/// The most segments of one request: as the C driver's.
const MAX_SEGMENTS: usize = 127;
/// Create I/O queue, cdw11: the queue is physically contiguous (PC).
const QUEUE_PC: u32 = 1 << 0;
/// Create I/O completion queue, cdw11: interrupts enabled (IEN).
const CQ_IEN: u32 = 1 << 1;
/// Identify's data: one 4 KiB structure.
const IDENTIFY_SIZE: usize = 4096;
/// ONCS bits: dataset management, write zeroes.
const ONCS_DSM: u16 = 1 << 2;
const ONCS_WRITE_ZEROES: u16 = 1 << 3;
/// Identify Namespace's NSFEAT bits: NAWUPF and the others apply (1),
/// NPWG, NOWS and the others apply (4).
const NSFEAT_ATOMICS: u8 = 1 << 1;
const NSFEAT_IO_OPT: u8 = 1 << 4;

/// The module: the registered PCI driver.
pub(crate) struct RNvme {
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
    /// The physical block size, the minimum and the optimal I/O size, in
    /// bytes.
    physical: u32,
    io_min: u32,
    io_opt: u32,
}

// ANCHOR: limits
/// What the controller can do beyond reads and writes, from Identify
/// Controller and (NVMe 1.2 and later) its NVM command set data, as the C
/// driver reads them.
#[derive(Clone, Copy, Default)]
struct Limits {
    /// The largest transfer in bytes.
    max_transfer: u64,
    /// Dataset management: the most ranges of one command (0: not
    /// supported) and the most blocks of one range (DMRSL, 0: no limit).
    discard_ranges: u16,
    discard_blocks: u32,
    /// Write zeroes: the most sectors of one command (0: not supported).
    zeroes_sectors: u32,
    /// Atomic write unit power fail, in blocks less one (AWUPF).
    awupf: u16,
}
// ANCHOR_END: limits

// ANCHOR: admin
/// The registers and the admin queue: what probe, remove and the timeout
/// path use.
pub(crate) struct Admin {
    pub(crate) pdev: pci::Device,
    bar: Arc<regs::Bar>,
    cap: Cap,
    /// One admin command at a time.
    queue: Mutex<AdminQueue>,
    /// `X` in the disks' names, `rnvmeXnY`.
    instance: ida::Id,
}

/// The admin queue pair and the next command identifier.
struct AdminQueue {
    queue: Arc<Queue>,
    next_cid: u16,
}
// ANCHOR_END: admin

/// An I/O queue pair's interrupt (dropped first: `free_irq` waits for
/// the handler, which uses the queue).
struct IoQueue {
    _irq: Pin<KBox<irq::Registration<IoIrq>>>,
    queue: Arc<Queue>,
}

// ANCHOR: controller
/// One bound controller. `remove` takes it apart in order: disks, I/O
/// queues, shutdown; then the memory goes.
struct Controller {
    disks: KVec<GenDisk<NvmeOps>>,
    io_queues: KVec<IoQueue>,
    shared: Option<Arc<IoShared>>,
    tag_set: Option<Arc<TagSet<NvmeOps>>>,
    vectors: Option<Arc<irq::Vectors>>,
    /// The shadow doorbell pages (the queues hold them too).
    shadow: Option<Arc<Shadow>>,
    namespaces: KVec<Namespace>,
    admin: Arc<Admin>,
}
// ANCHOR_END: controller

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
        let queue = Queue::new(
            pdev.as_dev(),
            &bar,
            0,
            ADMIN_DEPTH,
            cap.doorbell_stride(),
            None,
        )?;
        let (owner, regs) = (pdev.clone(), bar.clone());
        let admin = Arc::pin_init(
            pin_init!(Admin {
                pdev <- owner,
                bar <- regs,
                cap <- cap,
                queue <- new_mutex!(AdminQueue { queue, next_cid: 0 }),
                instance <- instance,
            }),
            GFP_KERNEL,
        )?;
        disable(&bar, cap)?;
        let mut ctrl = Controller {
            disks: KVec::new(),
            io_queues: KVec::new(),
            shared: None,
            tag_set: None,
            vectors: None,
            shadow: None,
            namespaces: KVec::new(),
            admin,
        };
        match ctrl.bring_up() {
            Ok(()) => Ok(ctrl),
            Err(e) => {
                ctrl.take_down();
                Err(e)
            }
        }
    }

    fn remove(pdev: &pci::Device, mut ctrl: Controller) {
        ctrl.take_down();
        pr_info!(
            "{}: rnvme{}: removed\n",
            name(pdev),
            ctrl.admin.instance.id()
        );
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
        if csts == u32::MAX {
            // All ones: the device is gone.
            return Err(ENODEV);
        }
        if csts & regs::CSTS_CFS != 0 && mask == regs::CSTS_RDY && value != 0 {
            return Err(EIO);
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

/// Reads `out.len()` bytes of `buf` from `start` as text, trailing spaces
/// cut.
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

impl Admin {
    /// The device's name, for messages.
    pub(crate) fn name(&self) -> &str {
        name(&self.pdev)
    }

    // ANCHOR: admin_command
    /// Runs an admin command and polls for its completion; returns its
    /// result dword. `EIO` if the controller reports an error,
    /// `ETIMEDOUT` if it does not answer in time.
    fn command(&self, cmd: Command) -> Result<u32> {
        self.submit(cmd)?.map_err(|status| {
            pr_err!(
                "{}: admin command {:#04x} failed: status {:#x}\n",
                self.name(),
                cmd.0[0] & 0xff,
                status
            );
            EIO
        })
    }

    /// Runs an admin command and polls for its completion: its result
    /// dword, or the status the controller gave it. `ETIMEDOUT` if it does
    /// not answer in time, `EIO` if the controller is not ready (a reset
    /// disabled it).
    fn submit(&self, cmd: Command) -> Result<core::result::Result<u32, u16>> {
        let mut admin = self.queue.lock();
        let cid = admin.next_cid;
        admin.next_cid = admin.next_cid.wrapping_add(1) % ADMIN_DEPTH;
        admin.queue.submit(&cmd.with_cid(cid), true)?;
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
                    return Ok(Err(cqe.status));
                }
                return Ok(Ok(cqe.result));
            }
            if self.bar.read32::<{ regs::CSTS }>() & regs::CSTS_RDY == 0 {
                return Err(EIO);
            }
            if deadline.has_passed() {
                pr_err!(
                    "{}: admin command {:#04x} timed out\n",
                    self.name(),
                    cmd.0[0] & 0xff
                );
                return Err(ETIMEDOUT);
            }
            usleep_range(20, 100);
        }
    }
    // ANCHOR_END: admin_command

    // ANCHOR: user_identify
    /// `NVME_IOCTL_ADMIN_CMD` with the `struct nvme_passthru_cmd` at user
    /// address `arg`, for Identify only: the data goes through a page of
    /// our own, then to the user's buffer. Returns 0, or the controller's
    /// status (positive) as the C driver does; errors as its
    /// `nvme_user_cmd` in its order (`EACCES` without `CAP_SYS_ADMIN`,
    /// `EFAULT` for memory that cannot be read or written, `EINVAL` for
    /// flags), and ours: `EOPNOTSUPP` for another opcode, `EINVAL` for
    /// metadata or a length that is 0 or over a page (Identify's data is
    /// one page).
    pub(crate) fn user_identify(&self, arg: usize) -> Result<i32> {
        if !cred::capable_sys_admin() {
            return Err(EACCES);
        }
        let raw: [u8; nvme::PASSTHRU_CMD_SIZE] = UserSlice::new(arg, nvme::PASSTHRU_CMD_SIZE)?
            .reader()
            .read_bytes()?;
        let u32_at = |i: usize| u32::from_le_bytes([raw[i], raw[i + 1], raw[i + 2], raw[i + 3]]);
        let u64_at = |i: usize| u64::from(u32_at(i)) | (u64::from(u32_at(i + 4)) << 32);
        // struct nvme_passthru_cmd: opcode, flags, nsid at 4, metadata at
        // 16, addr at 24, metadata_len at 32, data_len at 36, cdw10 at 40.
        let (opcode, flags, nsid) = (raw[0], raw[1], u32_at(4));
        if flags != 0 {
            return Err(EINVAL);
        }
        if opcode != admin::IDENTIFY {
            return Err(EOPNOTSUPP);
        }
        let (addr, len) = (u64_at(24), u32_at(36) as usize);
        if u64_at(16) != 0 || u32_at(32) != 0 || len == 0 || len > IDENTIFY_SIZE {
            return Err(EINVAL);
        }
        let addr = usize::try_from(addr).map_err(|_| EFAULT)?;
        let mut out = UserSlice::new(addr, len)?.writer();
        let page = CoherentAllocation::<u8>::alloc(self.pdev.as_dev(), IDENTIFY_SIZE, GFP_KERNEL)?;
        // Identify's fields: the CNS and controller id (cdw10), the
        // command set (cdw11) and the UUID index (cdw14).
        let cmd = Command::identify(u32_at(40), nsid, page.dma_handle())
            .cdw(11, u32_at(44))
            .cdw(14, u32_at(56));
        let (status, result) = match self.submit(cmd)? {
            Ok(result) => (0, result),
            Err(status) => (status, 0),
        };
        if status == 0 {
            let mut data = KVec::with_capacity(len, GFP_KERNEL)?;
            for i in 0..len {
                data.push(page.read(i)?, GFP_KERNEL)?;
            }
            out.write_slice(&data)?;
        }
        let result_at = arg + nvme::PASSTHRU_RESULT_OFFSET;
        UserSlice::new(result_at, 4)?
            .writer()
            .write_slice(&result.to_le_bytes())?;
        Ok(i32::from(status))
    }
    // ANCHOR_END: user_identify

    /// Asks the controller to abort command `cid` of submission queue
    /// `sqid`.
    pub(crate) fn abort(&self, sqid: u16, cid: u16) -> Result {
        self.command(Command::new(admin::ABORT).cdw(10, (u32::from(cid) << 16) | u32::from(sqid)))
            .map(drop)
    }

    /// Creates one half of I/O queue pair `queue`: its completion queue
    /// (`CREATE_CQ`, at `cq_dma`, interrupts on vector `qid`) or its
    /// submission queue (`CREATE_SQ`, at `sq_dma`, feeding completion queue
    /// `qid`); both physically contiguous, `flags` in cdw11's low half.
    fn create_queue(&self, opcode: u8, queue: &Queue, dma: dma::DmaAddress, flags: u32) -> Result {
        let qid = u32::from(queue.qid);
        self.command(
            Command::new(opcode)
                .prp(dma, 0)
                .cdw(10, (u32::from(queue.depth - 1) << 16) | qid)
                .cdw(11, (qid << 16) | flags),
        )
        .map(drop)
    }

    /// Creates the completion queue of `queue`: interrupts enabled (IEN).
    fn create_cq(&self, queue: &Queue) -> Result {
        self.create_queue(admin::CREATE_CQ, queue, queue.cq_dma(), QUEUE_PC | CQ_IEN)
    }

    /// Creates the submission queue of `queue`.
    fn create_sq(&self, queue: &Queue) -> Result {
        self.create_queue(admin::CREATE_SQ, queue, queue.sq_dma(), QUEUE_PC)
    }

    /// Creates both queues of a pair, the completion queue first.
    fn create_queue_pair(&self, queue: &Queue) -> Result {
        self.create_cq(queue)?;
        if let Err(e) = self.create_sq(queue) {
            let _ = self.delete_queue(admin::DELETE_CQ, queue.qid);
            return Err(e);
        }
        Ok(())
    }

    /// Gives the controller the shadow doorbell pages (Doorbell Buffer
    /// Config) and, if it takes them, turns them on; false if it refused.
    fn enable_shadow(&self, shadow: &Shadow) -> bool {
        let (dbs, eis) = shadow.dma();
        let taken = self
            .command(Command::new(admin::DOORBELL_BUFFER_CONFIG).prp(dbs, eis))
            .is_ok();
        if taken {
            shadow.enabled.store(true, Ordering::Release);
        }
        taken
    }

    /// Deletes I/O submission or completion queue `qid`.
    fn delete_queue(&self, opcode: u8, qid: u16) -> Result {
        self.command(Command::new(opcode).cdw(10, qid.into()))
            .map(drop)
    }
}

impl Controller {
    fn name(&self) -> &str {
        self.admin.name()
    }

    // ANCHOR: bring_up
    /// Everything after the controller was disabled. On error, the caller
    /// takes down what was set up.
    fn bring_up(&mut self) -> Result {
        let admin = self.admin.clone();
        enable(&admin.bar, admin.cap, &admin.queue.lock().queue)?;
        let page = CoherentAllocation::<u8>::alloc(admin.pdev.as_dev(), 4096, GFP_KERNEL)?;
        let (nn, oacs, limits) = self.identify_controller(&page)?;
        let max_transfer = limits.max_transfer;
        self.identify_namespaces(&page, nn, limits.awupf)?;
        // One I/O queue per CPU, each with a vector; the admin queue has
        // vector 0 (polled, it gets no handler).
        let want = cpu::num_online_cpus().clamp(1, 64);
        let granted = self.set_queue_count(want)?;
        let vectors = irq::Vectors::alloc_msix_spread(&admin.pdev, 2, granted + 1, 1)?;
        let count = granted.min(vectors.count() - 1);
        // Shadow doorbells when the controller has them (OACS bit 8), as
        // the C driver does.
        let shadow = if oacs & (1 << 8) != 0 {
            Some(Shadow::new(admin.pdev.as_dev())?)
        } else {
            None
        };
        self.create_io_queues(&vectors, count, max_transfer, shadow.as_ref())?;
        self.vectors = Some(vectors);
        if let Some(shadow) = shadow {
            // After the queues exist, as the C driver does; without it the
            // doorbells are only registers.
            if !admin.enable_shadow(&shadow) {
                pr_warn!("{}: shadow doorbells refused\n", self.name());
            }
            self.shadow = Some(shadow);
        }
        pr_info!(
            "{}: {} I/O queue pairs of {} entries ({} wanted, {} granted)\n",
            self.name(),
            self.io_queues.len(),
            IO_DEPTH,
            want,
            granted
        );
        self.add_disks(&limits)
    }
    // ANCHOR_END: bring_up

    /// Identify Controller: prints the model, serial number and largest
    /// transfer; returns the number of namespaces, the optional admin
    /// commands supported (OACS) and the limits.
    fn identify_controller(&self, page: &CoherentAllocation<u8>) -> Result<(u32, u16, Limits)> {
        self.admin
            .command(Command::identify(cns::CONTROLLER, 0, page.dma_handle()))?;
        let (mut model, mut serial, mut firmware) = ([0u8; 40], [0u8; 20], [0u8; 8]);
        let mdts = le::<1>(page, 77);
        let nn = le::<4>(page, 516) as u32;
        let max_transfer = if mdts == 0 || mdts > 20 {
            MAX_TRANSFER
        } else {
            (prp::PAGE_SIZE << mdts).min(MAX_TRANSFER)
        };
        pr_info!(
            "{}: model '{}', serial '{}', firmware '{}', max transfer {} KiB, {} namespace(s)\n",
            self.name(),
            ascii(page, 24, &mut model),
            ascii(page, 4, &mut serial),
            ascii(page, 64, &mut firmware),
            max_transfer >> 10,
            nn
        );
        let oacs = le::<2>(page, 256) as u16;
        let oncs = le::<2>(page, 520) as u16;
        let version = le::<4>(page, 80) as u32;
        let mut limits = Limits {
            max_transfer,
            awupf: le::<2>(page, 530) as u16,
            ..Limits::default()
        };
        if oncs & ONCS_DSM != 0 {
            limits.discard_ranges = cmd::DSM_MAX_RANGES;
        }
        if oncs & ONCS_WRITE_ZEROES != 0 {
            limits.zeroes_sectors = (max_transfer >> 9) as u32;
        }
        // The NVM command set's own limits, from NVMe 1.2 on (as C's
        // nvme_init_non_mdts_limits): DMRL, DMRSL, WZSL.
        if version >= 0x1_02_00 {
            self.admin
                .command(Command::identify(cns::CS_CONTROLLER, 0, page.dma_handle()).cdw(11, 0))?;
            let dmrl = le::<1>(page, 3) as u16;
            if dmrl != 0 && limits.discard_ranges != 0 {
                limits.discard_ranges = dmrl.min(cmd::DSM_MAX_RANGES);
            }
            limits.discard_blocks = le::<4>(page, 4) as u32;
            let wzsl = le::<1>(page, 1) as u32;
            if wzsl != 0 && limits.zeroes_sectors != 0 {
                // In units of the minimum memory page (4 KiB here).
                limits.zeroes_sectors = 1u32.checked_shl(wzsl + 3).unwrap_or(u32::MAX);
            }
        }
        Ok((nn, oacs, limits))
    }

    /// Identify Namespace for each active namespace (from the active
    /// namespace list: up to 1024, of at most `nn`).
    fn identify_namespaces(
        &mut self,
        page: &CoherentAllocation<u8>,
        nn: u32,
        awupf: u16,
    ) -> Result {
        self.admin.command(Command::identify(
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
            self.admin
                .command(Command::identify(cns::NAMESPACE, id, page.dma_handle()))?;
            let blocks = le::<8>(page, 0);
            if blocks == 0 {
                continue;
            }
            let format = le::<1>(page, 26) as usize & 0xf;
            let block_shift = le::<1>(page, 128 + 4 * format + 2) as u32;
            if !(9..=12).contains(&block_shift) {
                pr_warn!(
                    "{}: namespace {}: block size 2^{} not supported\n",
                    self.name(),
                    id,
                    block_shift
                );
                continue;
            }
            // The physical block size and optimal I/O size as the C driver
            // computes them: NPWG and NOWS if NSFEAT says they apply, the
            // physical size cut to the atomic write unit (NAWUPF or AWUPF,
            // if NABO is 0).
            let (bs, nsfeat) = (1u32 << block_shift, le::<1>(page, 24) as u8);
            let (mut physical, mut io_opt, mut atomic) = (bs, 0, bs);
            if le::<2>(page, 42) == 0 {
                let nawupf = le::<2>(page, 36) as u32;
                atomic = if nsfeat & NSFEAT_ATOMICS != 0 && nawupf != 0 {
                    (1 + nawupf) * bs
                } else {
                    (1 + u32::from(awupf)) * bs
                };
            }
            if nsfeat & NSFEAT_IO_OPT != 0 {
                physical = bs * (1 + le::<2>(page, 64) as u32);
                io_opt = bs * (1 + le::<2>(page, 72) as u32);
            }
            self.namespaces.push(
                Namespace {
                    id,
                    blocks,
                    block_shift,
                    physical: physical.min(atomic),
                    io_min: physical,
                    io_opt,
                },
                GFP_KERNEL,
            )?;
        }
        Ok(())
    }

    /// Set Features, Number of Queues: asks for `want` I/O submission and
    /// completion queues, returns how many pairs the controller grants.
    fn set_queue_count(&self, want: u32) -> Result<u32> {
        let n = want - 1;
        let result = self.admin.command(
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
    /// vector `n`, and the tag set whose hardware queues they are.
    fn create_io_queues(
        &mut self,
        vectors: &Arc<irq::Vectors>,
        count: u32,
        max_transfer: u64,
        shadow: Option<&Arc<Shadow>>,
    ) -> Result {
        let admin = self.admin.clone();
        let dev = admin.pdev.as_dev();
        let depth = IO_DEPTH.min(admin.cap.max_queue_entries().min(4096) as u16);
        let mut queues = KVec::with_capacity(count as usize, GFP_KERNEL)?;
        for qid in 1..=count as u16 {
            let queue = Queue::new(
                dev,
                &admin.bar,
                qid,
                depth,
                admin.cap.doorbell_stride(),
                shadow.cloned(),
            )?;
            queues.push(queue, GFP_KERNEL)?;
        }
        let pool = dma::Pool::new(
            dev,
            c_str!("rnvme prp"),
            prp::LIST_ENTRIES,
            prp::PAGE_SIZE as usize,
            0,
        )?;
        let (shared_admin, shared_vectors) = (admin.clone(), vectors.clone());
        let shared = Arc::pin_init(
            pin_init!(IoShared {
                queues <- queues,
                vectors <- shared_vectors,
                pool <- pool,
                admin <- shared_admin,
                max_segments <- MAX_SEGMENTS,
                max_lists <- prp::lists_for(max_transfer),
                state <- AtomicU8::new(blk::LIVE),
                reset_lock <- new_mutex!(()),
            }),
            GFP_KERNEL,
        )?;
        self.shared = Some(shared.clone());
        let tag_set = TagSet::new(
            TagSetOptions {
                nr_hw_queues: count,
                queue_depth: u32::from(depth) - 1,
                numa_node: None,
                should_merge: true,
                timeout_ms: IO_TIMEOUT_MS,
            },
            shared.clone(),
        )?;
        self.tag_set = Some(tag_set.clone());
        for queue in shared.queues.iter() {
            let qid = queue.qid;
            // The completion queue first, then its interrupt, then the
            // submission queue that feeds it.
            admin.create_cq(queue)?;
            let handler = IoIrq {
                queue: queue.clone(),
                tag_set: tag_set.clone(),
            };
            let irq = match irq::Registration::new(
                vectors,
                qid.into(),
                format_args!("rnvme{}q{}", admin.instance.id(), qid),
                handler,
            ) {
                Ok(irq) => irq,
                Err(e) => {
                    let _ = admin.delete_queue(admin::DELETE_CQ, qid);
                    return Err(e);
                }
            };
            if let Err(e) = admin.create_sq(queue) {
                drop(irq);
                let _ = admin.delete_queue(admin::DELETE_CQ, qid);
                return Err(e);
            }
            let io = IoQueue {
                _irq: irq,
                queue: queue.clone(),
            };
            if let Err(e) = self.io_queues.push(io, GFP_KERNEL) {
                let _ = admin.delete_queue(admin::DELETE_SQ, qid);
                let _ = admin.delete_queue(admin::DELETE_CQ, qid);
                return Err(e.into());
            }
        }
        Ok(())
    }
    // ANCHOR_END: create_io_queues

    // ANCHOR: add_disks
    /// One disk per namespace, `rnvmeXnY`.
    fn add_disks(&mut self, limits: &Limits) -> Result {
        let shared = self.shared.clone().ok_or(EINVAL)?;
        let tag_set = self.tag_set.clone().ok_or(EINVAL)?;
        for ns in self.namespaces.iter() {
            let block_size = 1u32 << ns.block_shift;
            let mut builder = GenDiskBuilder::new()
                .capacity_sectors(ns.blocks << (ns.block_shift - 9))
                .logical_block_size(block_size)
                .physical_block_size(ns.physical)
                .io_min(ns.io_min)
                .io_opt(ns.io_opt)
                .max_hw_sectors((limits.max_transfer >> 9) as u32)
                .max_segments(MAX_SEGMENTS as u16)
                // PRPs: every segment but the first starts on a page.
                .virt_boundary(prp::PAGE_SIZE - 1)
                // PRP1 must be dword aligned.
                .dma_alignment(3)
                .write_cache(true, false);
            if limits.discard_ranges != 0 {
                // DMRSL in blocks, as sectors if that fits (as C does).
                let shift = ns.block_shift - 9;
                let sectors = match limits.discard_blocks {
                    0 => u32::MAX,
                    blocks if blocks <= u32::MAX >> shift => blocks << shift,
                    _ => u32::MAX,
                };
                builder = builder.discard(sectors, limits.discard_ranges);
            }
            if limits.zeroes_sectors != 0 {
                builder = builder.write_zeroes(limits.zeroes_sectors);
            }
            let disk = builder.build(
                format_args!("rnvme{}n{}", self.admin.instance.id(), ns.id),
                tag_set.clone(),
                NsData {
                    nsid: ns.id,
                    block_shift: ns.block_shift,
                    shared: shared.clone(),
                },
            )?;
            pr_info!(
                "{}: rnvme{}n{}: {} blocks of {} bytes ({} MiB)\n",
                self.name(),
                self.admin.instance.id(),
                ns.id,
                ns.blocks,
                block_size,
                (ns.blocks << ns.block_shift) >> 20
            );
            self.disks.push(disk, GFP_KERNEL)?;
        }
        Ok(())
    }
    // ANCHOR_END: add_disks

    // ANCHOR: take_down
    /// Deletes the disks (each waits for its requests), the I/O queues
    /// (submission queues first) and shuts the controller down: after this
    /// it touches no memory of ours, and what is left may be freed.
    fn take_down(&mut self) {
        self.disks.clear();
        let admin = self.admin.clone();
        for io in self.io_queues.iter().rev() {
            let _ = admin.delete_queue(admin::DELETE_SQ, io.queue.qid);
        }
        for io in self.io_queues.iter().rev() {
            let _ = admin.delete_queue(admin::DELETE_CQ, io.queue.qid);
        }
        // The interrupts go (their handlers hold the queues and the tag
        // set); the memory stays until the controller is stopped.
        self.io_queues.clear();
        let bar = &admin.bar;
        let cc = bar.read32::<{ regs::CC }>();
        if cc & regs::CC_ENABLE != 0 {
            bar.write32::<{ regs::CC }>((cc & !regs::CC_SHN_MASK) | regs::CC_SHN_NORMAL);
            if wait_status(bar, admin.cap, regs::CSTS_SHST_MASK, regs::CSTS_SHST_CMPLT).is_err() {
                pr_warn!("{}: shutdown did not complete\n", self.name());
            }
        }
        // Disabled, the controller forgets the admin queue's addresses too.
        let _ = disable(bar, admin.cap);
        admin.pdev.clear_master();
        // Now the vectors, the tag set and the queues' memory may go.
        self.vectors = None;
        self.tag_set = None;
        self.shared = None;
    }
    // ANCHOR_END: take_down
}

// ANCHOR: reset
/// Resets the controller from the timeout path: quiesce the disks'
/// queues, disable the controller (it forgets its queues and stops using
/// our memory), fail the requests that timed out after an abort and
/// requeue the others, empty the queues, enable it and create the same I/O
/// queues again. If that fails, the controller is dead: every request
/// fails from now on.
pub(crate) fn reset(shared: &IoShared, tag_set: &TagSet<NvmeOps>) {
    let _one = shared.reset_lock.lock();
    shared.state.store(blk::RESETTING, Ordering::Release);
    // No queue_rq runs from here to the end (the guard's drop, after the
    // state is LIVE or DEAD): none puts a command in a queue that is being
    // emptied, and requeued requests wait, as C's nvme_dev_disable does.
    let _quiesced = tag_set.quiesce();
    let admin = &shared.admin;
    let result = disable(&admin.bar, admin.cap);
    // Disabled (or gone): the controller touches none of the requests'
    // pages any more, so they may be unmapped.
    tag_set.claim_in_flight(|mut rq| {
        blk::release(&mut rq);
        if rq.data().aborted {
            rq.end(Err(EIO));
        } else {
            rq.requeue();
        }
    });
    let result = result.and_then(|()| restart(shared));
    match result {
        Ok(()) => {
            pr_info!("{}: controller reset\n", admin.name());
            shared.state.store(blk::LIVE, Ordering::Release);
        }
        Err(e) => {
            pr_err!(
                "{}: reset failed ({:?}): the controller is dead\n",
                admin.name(),
                e
            );
            shared.state.store(blk::DEAD, Ordering::Release);
            let _ = disable(&admin.bar, admin.cap);
            tag_set.claim_in_flight(|mut rq| {
                blk::release(&mut rq);
                rq.end(Err(EIO));
            });
        }
    }
}

/// Brings a disabled controller back with the same queues.
fn restart(shared: &IoShared) -> Result {
    let admin = &shared.admin;
    {
        let admin_queue = admin.queue.lock();
        admin_queue.queue.reset();
        enable(&admin.bar, admin.cap, &admin_queue.queue)?;
    }
    let count = shared.queues.len() as u32;
    let n = count - 1;
    admin.command(
        Command::new(admin::SET_FEATURES)
            .cdw(10, feature::NUM_QUEUES)
            .cdw(11, (n << 16) | n),
    )?;
    let shadow = shared.queues.first().and_then(|q| q.shadow().cloned());
    if let Some(shadow) = &shadow {
        shadow.clear();
    }
    for queue in shared.queues.iter() {
        queue.reset();
        admin.create_queue_pair(queue)?;
    }
    if let Some(shadow) = shadow {
        admin.enable_shadow(&shadow);
    }
    Ok(())
}
// ANCHOR_END: reset
