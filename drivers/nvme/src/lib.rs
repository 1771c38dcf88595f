//! NVMe in Rust: the PCI driver `rnvme`, for QEMU's NVMe controller
//! (`1b36:0010`) and any function of the NVMe class.
//!
//! Debian's C `nvme` driver matches the same functions: a function is
//! bound to one of them at a time, chosen with sysfs `driver_override`,
//! `unbind` and `bind`.

#![no_std]

use core::ffi::CStr;
use core::pin::Pin;

use kernel::c_str;
use kernel::pci;
use kernel::prelude::*;

mod regs;

use regs::Cap;

module! {
    type: RNvme,
    name: "rnvme",
    author: "Rust kernel workbook",
    description: "NVMe driver in Rust",
    license: "GPL",
}

/// The module: the registered PCI driver.
struct RNvme {
    _driver: Pin<KBox<pci::Registration<NvmeDriver>>>,
}

impl kernel::Module for RNvme {
    fn init(module: &'static ThisModule) -> Result<Self> {
        Ok(RNvme {
            _driver: pci::Registration::new_pinned(module)?,
        })
    }
}

/// The PCI driver.
struct NvmeDriver;

/// One bound controller.
struct Controller {
    bar: regs::Bar,
}

// ANCHOR: driver
impl pci::Driver for NvmeDriver {
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

    fn probe(pdev: &pci::Device, _id: &pci::DeviceId) -> Result<Controller> {
        pdev.enable_device()?;
        let bar = pdev.iomap_region(0, c_str!("rnvme"))?;
        let cap = Cap(bar.read64::<{ regs::CAP }>());
        let vs = bar.read32::<{ regs::VS }>();
        pr_info!(
            "{}: NVMe {}.{}.{}, CAP {:#018x}: MQES {}, TO {} ms, DSTRD {}\n",
            pdev.as_dev().name().to_str().unwrap_or("?"),
            vs >> 16,
            (vs >> 8) & 0xff,
            vs & 0xff,
            cap.0,
            cap.max_queue_entries(),
            cap.timeout_ms(),
            cap.doorbell_stride()
        );
        Ok(Controller { bar })
    }

    fn remove(pdev: &pci::Device, ctrl: &Controller) {
        let _ = &ctrl.bar;
        pr_info!(
            "{}: removed\n",
            pdev.as_dev().name().to_str().unwrap_or("?")
        );
    }
}
// ANCHOR_END: driver
