//! Interrupts: MSI-X vectors of a PCI function, and a handler registered
//! on one of them.
//!
//! C headers: [`include/linux/interrupt.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/interrupt.h),
//! [`include/linux/pci.h`](https://elixir.bootlin.com/linux/v6.1/source/include/linux/pci.h)
//! (`pci_alloc_irq_vectors`)
//!
//! [`Vectors`] owns the vectors; each [`Registration`] keeps the vectors
//! alive (an [`Arc`]), so they are freed only after every handler has been
//! freed, which `pci_free_irq_vectors` requires.

use core::ffi::{c_int, c_uint, c_void};
use core::fmt;
use core::marker::PhantomPinned;
use core::pin::Pin;
use core::ptr::{addr_of, addr_of_mut};

use crate::alloc::{flags::GFP_KERNEL, KBox};
use crate::bindings;
use crate::error::{code::EINVAL, to_result, Result};
use crate::init::pin_init_from_closure;
use crate::pci;
use crate::sync::Arc;
use crate::unload::{Entry, Ops};

/// What a handler tells the kernel (`irqreturn_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Return {
    /// The interrupt was not from this device (`IRQ_NONE`).
    None,
    /// The interrupt was handled (`IRQ_HANDLED`).
    Handled,
}

// ANCHOR: handler
/// An interrupt handler. It runs in hard interrupt context: it must not
/// sleep, and takes only spinlocks that are taken with interrupts disabled
/// elsewhere.
///
/// The type does not mark the context (no token is passed): as for
/// blk-mq's callbacks ([`crate::block::mq`]'s "Context"), the rule is
/// the kernel's, a documented contract that every sleeping function of
/// this crate states ("may sleep") and checks with `might_sleep()`, which
/// the debug kernel reports from here with a backtrace. Mainline's
/// `irq::Handler` does the same.
pub trait Handler: Send + Sync {
    /// Handles one interrupt.
    fn handle_irq(&self) -> Return;
}
// ANCHOR_END: handler

impl<T: Handler> Handler for Arc<T> {
    fn handle_irq(&self) -> Return {
        T::handle_irq(self)
    }
}

/// The MSI-X vectors of a PCI function; freed when the last reference
/// goes.
///
/// # Invariants
///
/// `count` vectors were allocated on `pdev` by `pci_alloc_irq_vectors` and
/// are not freed yet.
pub struct Vectors {
    pdev: pci::Device,
    count: u32,
}

impl Vectors {
    /// Allocates between `min` and `max` MSI-X vectors on `pdev`, each
    /// free to fire on any CPU.
    ///
    /// # Context
    ///
    /// May sleep (`pci_alloc_irq_vectors`): process context only.
    pub fn alloc_msix(pdev: &pci::Device, min: u32, max: u32) -> Result<Arc<Vectors>> {
        Self::alloc(pdev, min, max, None)
    }

    /// Allocates between `min` and `max` MSI-X vectors on `pdev`; after
    /// the first `pre` (left to any CPU), the kernel spreads them over the
    /// CPUs (`PCI_IRQ_AFFINITY`): vector `pre + i` fires on the CPUs of
    /// the `i`-th group, so a queue per CPU completes on its own CPU.
    ///
    /// # Context
    ///
    /// May sleep (`pci_alloc_irq_vectors_affinity`): process context only.
    pub fn alloc_msix_spread(
        pdev: &pci::Device,
        min: u32,
        max: u32,
        pre: u32,
    ) -> Result<Arc<Vectors>> {
        if pre >= min {
            return Err(EINVAL);
        }
        Self::alloc(pdev, min, max, Some(pre))
    }

    fn alloc(pdev: &pci::Device, min: u32, max: u32, spread: Option<u32>) -> Result<Arc<Vectors>> {
        if min == 0 || min > max {
            return Err(EINVAL);
        }
        let mut flags = bindings::RUST_CONST_HELPER_PCI_IRQ_MSIX;
        // SAFETY: all zeroes is a valid `irq_affinity` (no sets, no
        // callback).
        let mut affinity: bindings::irq_affinity = unsafe { core::mem::zeroed() };
        let affd = match spread {
            Some(pre) => {
                flags |= bindings::RUST_CONST_HELPER_PCI_IRQ_AFFINITY;
                affinity.pre_vectors = pre;
                &raw mut affinity
            }
            None => core::ptr::null_mut(),
        };
        // SAFETY: the function is alive (`pdev`); `affd` is NULL or points
        // at a descriptor that lives across the call (the kernel copies
        // what it needs).
        let n = to_result(unsafe {
            bindings::pci_alloc_irq_vectors_affinity(pdev.as_raw(), min, max, flags, affd)
        })?;
        // INVARIANT: `n >= min > 0` vectors were allocated.
        let vectors = Vectors {
            pdev: pdev.clone(),
            count: n.unsigned_abs(),
        };
        // On ENOMEM the vectors are dropped, hence freed.
        Ok(Arc::new(vectors, GFP_KERNEL)?)
    }

    /// How many vectors were granted.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Calls `f` with each CPU that vector `index` fires on, when the
    /// kernel spread the vectors ([`alloc_msix_spread`](Self::alloc_msix_spread));
    /// returns whether it had a set of CPUs for the vector. A block driver
    /// maps each CPU to the queue whose vector fires there, as C's
    /// `blk_mq_pci_map_queues` does.
    pub fn for_each_cpu(&self, index: u32, mut f: impl FnMut(u32)) -> bool {
        let Ok(vec) = c_int::try_from(index) else {
            return false;
        };
        if index >= self.count {
            return false;
        }
        // SAFETY: the function is alive and its vectors allocated (type
        // invariants); `index` is in range.
        let mask = unsafe { bindings::pci_irq_get_affinity(self.pdev.as_raw(), vec) };
        if mask.is_null() {
            return false;
        }
        // SAFETY: reads a variable set at boot.
        let nr_cpus = unsafe { bindings::rust_helper_nr_cpu_ids() };
        let mut cpu: c_int = -1;
        loop {
            // SAFETY: `mask` is the vector's affinity mask, which lives as
            // long as the vectors; -1 starts the walk.
            cpu = unsafe { bindings::rust_helper_cpumask_next(cpu, mask) };
            match u32::try_from(cpu) {
                Ok(c) if c < nr_cpus => f(c),
                _ => return true,
            }
        }
    }

    /// The Linux interrupt number of vector `index`.
    fn irq(&self, index: u32) -> Result<c_uint> {
        if index >= self.count {
            return Err(EINVAL);
        }
        // SAFETY: the function is alive and its vectors allocated (type
        // invariants); `index` is in range.
        let irq = to_result(unsafe { bindings::pci_irq_vector(self.pdev.as_raw(), index) })?;
        Ok(irq.unsigned_abs())
    }
}

impl Drop for Vectors {
    fn drop(&mut self) {
        // SAFETY: allocated (type invariants), freed once; every
        // registration holds an `Arc` on this value, so none is left.
        unsafe { bindings::pci_free_irq_vectors(self.pdev.as_raw()) };
    }
}

// ANCHOR: registration
/// Handler `H` registered on one vector; dropping it frees the interrupt
/// (waiting for a running handler to finish) and then drops `H`.
///
/// A leaked registration (`mem::forget`, `KBox::leak`, an `Arc` cycle) is
/// freed by the module's exit, with a warning ([`crate::unload`]): the
/// interrupt never calls into the unloaded module.
///
/// # Invariants
///
/// `unload` is enrolled; `irq` is requested with this registration's
/// address as its cookie and `handler_callback::<H>` as its handler, until
/// drop, or the module's exit if that comes first (it has then freed it).
pub struct Registration<H: Handler> {
    handler: H,
    irq: c_uint,
    vectors: Arc<Vectors>,
    unload: Entry,
    /// The name in `/proc/interrupts`, NUL-terminated: the kernel keeps a
    /// pointer to it until `free_irq`.
    name: [u8; NAME_LEN],
    _pin: PhantomPinned,
}

/// Room for an interrupt's name, its NUL included.
const NAME_LEN: usize = 32;

/// Formats `args` into a NUL-terminated name, cut to fit.
fn format_name(args: fmt::Arguments<'_>) -> [u8; NAME_LEN] {
    struct Cursor([u8; NAME_LEN], usize);
    impl fmt::Write for Cursor {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            for &b in s.as_bytes() {
                // The last byte stays 0; a NUL inside would end the name.
                if self.1 + 1 < NAME_LEN && b != 0 {
                    self.0[self.1] = b;
                    self.1 += 1;
                }
            }
            Ok(())
        }
    }
    let mut cursor = Cursor([0; NAME_LEN], 0);
    let _ = fmt::write(&mut cursor, args);
    cursor.0
}
// ANCHOR_END: registration

impl<H: Handler> Registration<H> {
    /// Registers `handler` on vector `index` of `vectors`, named `name` in
    /// `/proc/interrupts` (cut to 31 bytes). The handler may run before
    /// this returns.
    ///
    /// # Context
    ///
    /// May sleep (`request_threaded_irq` allocates and takes the
    /// descriptor's mutex): process context only. Dropping the registration
    /// waits for a running handler (`free_irq`), so it may sleep too.
    pub fn new(
        vectors: &Arc<Vectors>,
        index: u32,
        name: fmt::Arguments<'_>,
        handler: H,
    ) -> Result<Pin<KBox<Self>>> {
        let irq = vectors.irq(index)?;
        let vectors = vectors.clone();
        let name = format_name(name);
        let init = move |slot: *mut Self| {
            // SAFETY: `slot` is valid for writes and will not move
            // (contract of `PinInit`).
            unsafe {
                slot.write(Registration {
                    handler,
                    irq,
                    vectors,
                    unload: Entry::new(Self::UNLOAD),
                    name,
                    _pin: PhantomPinned,
                })
            };
            // SAFETY: the registration is initialised and pinned, so the
            // cookie and its NUL-terminated name stay valid until `Drop`
            // frees the interrupt.
            let ret = unsafe {
                bindings::request_threaded_irq(
                    irq,
                    Some(handler_callback::<H>),
                    None,
                    0,
                    addr_of!((*slot).name).cast(),
                    slot.cast(),
                )
            };
            if let Err(e) = to_result(ret) {
                // Not requested: drop the fields, not the registration,
                // whose `Drop` would free an interrupt it does not hold.
                // SAFETY: both were initialised above and are dropped once.
                unsafe {
                    core::ptr::drop_in_place(addr_of_mut!((*slot).handler));
                    core::ptr::drop_in_place(addr_of_mut!((*slot).vectors));
                }
                return Err(e);
            }
            // SAFETY: written above, pinned with the slot.
            unsafe { Entry::enrol(addr_of!((*slot).unload)) };
            // INVARIANT: requested with `slot` and `handler_callback::<H>`,
            // and the entry enrolled.
            Ok(())
        };
        // SAFETY: on `Ok` the registration is initialised; on `Err` its
        // fields that need dropping have been dropped.
        Entry::pin_own_block(unsafe { pin_init_from_closure(init) }, |reg| &reg.unload)
    }

    /// How the module's exit frees a leaked registration.
    const UNLOAD: &'static Ops = &Ops {
        name: core::any::type_name::<Self>,
        stop: Self::free_leaked,
        reclaim: None,
        kthread: false,
    };

    /// Frees the interrupt of a registration that was leaked, at the
    /// module's exit.
    ///
    /// # Safety
    ///
    /// `e` is the `unload` entry of a live registration, taken by the
    /// sweep; called once.
    unsafe fn free_leaked(e: *const Entry) {
        let reg = crate::container_of!(e, Self, unload);
        // SAFETY: the registration is live while the sweep holds its entry
        // (caller).
        unsafe { (*e).warn_leaked(c"freeing its interrupt") };
        // SAFETY: requested with this cookie (type invariants), and its
        // `Drop` will not free it again (the sweep holds the entry);
        // `free_irq` waits for a running handler. The vectors stay
        // allocated: the leaked registration keeps its `Arc`.
        unsafe { bindings::free_irq((*reg).irq, reg.cast_mut().cast()) };
    }

    /// The handler.
    pub fn handler(&self) -> &H {
        &self.handler
    }
}

impl<H: Handler> Drop for Registration<H> {
    fn drop(&mut self) {
        // SAFETY: enrolled (type invariants), left once, here.
        if !unsafe { Entry::leave(&self.unload) } {
            // The module's exit has freed the interrupt.
            return;
        }
        let cookie: *const Self = self;
        // SAFETY: requested with this cookie (type invariants), freed once;
        // `free_irq` waits for a running handler, so none uses `self` after.
        unsafe { bindings::free_irq(self.irq, cookie.cast_mut().cast()) };
    }
}

/// The C handler of a [`Registration<H>`].
///
/// # Safety
///
/// `cookie` is the address of a live, requested `Registration<H>`.
unsafe extern "C" fn handler_callback<H: Handler>(
    _irq: c_int,
    cookie: *mut c_void,
) -> bindings::irqreturn {
    // SAFETY: the kernel passes the cookie given to `request_threaded_irq`,
    // and the registration outlives the interrupt (type invariants).
    let reg = unsafe { &*cookie.cast::<Registration<H>>() };
    match reg.handler.handle_irq() {
        Return::None => bindings::IRQ_NONE,
        Return::Handled => bindings::IRQ_HANDLED,
    }
}
