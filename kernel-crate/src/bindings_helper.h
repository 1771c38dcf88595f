/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C API the `kernel` crate wraps. bindgen reads this file with the
 * flags Kbuild uses for C (see build.rs); only allowlisted items are kept.
 */
#include <linux/cdev.h>
#include <linux/completion.h>
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/poll.h>
#include <linux/kthread.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/module.h>
#include <linux/version.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/cred.h>
#include <linux/security.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <uapi/linux/android/binder.h>
#include <uapi/linux/nvme_ioctl.h>
#include <linux/capability.h>
/* PCI, MMIO, DMA, interrupts, delays, ids (pci.rs, io.rs, dma.rs, irq.rs,
 * delay.rs, ida.rs, device.rs). */
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/dmapool.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/pci.h>

#include "../helpers/helpers.h"

/*
 * Allocator constants (alloc/mod.rs). bindgen cannot expand macros with
 * casts, but it evaluates these initialisers; build.rs keeps the
 * `RUST_CONST_HELPER_` names.
 */
const gfp_t RUST_CONST_HELPER_GFP_KERNEL = GFP_KERNEL;
const gfp_t RUST_CONST_HELPER_GFP_ATOMIC = GFP_ATOMIC;
const gfp_t RUST_CONST_HELPER___GFP_ZERO = __GFP_ZERO;
const gfp_t RUST_CONST_HELPER___GFP_NOWARN = __GFP_NOWARN;
const size_t RUST_CONST_HELPER_KMALLOC_MAX_SIZE = KMALLOC_MAX_SIZE;
const size_t RUST_CONST_HELPER_ARCH_KMALLOC_MINALIGN = ARCH_KMALLOC_MINALIGN;
const size_t RUST_CONST_HELPER_PAGE_SIZE = PAGE_SIZE;

/* Task states and signals (sync/condvar.rs, task.rs). */
const unsigned int RUST_CONST_HELPER_TASK_RUNNING = TASK_RUNNING;
const int RUST_CONST_HELPER_TASK_INTERRUPTIBLE = TASK_INTERRUPTIBLE;
const int RUST_CONST_HELPER_TASK_UNINTERRUPTIBLE = TASK_UNINTERRUPTIBLE;
const unsigned int RUST_CONST_HELPER_TASK_IDLE = TASK_IDLE;
const unsigned int RUST_CONST_HELPER_TASK_NORMAL = TASK_NORMAL;
const int RUST_CONST_HELPER_SIGKILL = SIGKILL;
const int RUST_CONST_HELPER_NUMA_NO_NODE = NUMA_NO_NODE;

/* Files and devices (file.rs, miscdev.rs, chrdev.rs). */
const int RUST_CONST_HELPER_MISC_DYNAMIC_MINOR = MISC_DYNAMIC_MINOR;
const unsigned int RUST_CONST_HELPER_MINORBITS = MINORBITS;
const unsigned int RUST_CONST_HELPER_DEFAULT_POLLMASK = DEFAULT_POLLMASK;
const fmode_t RUST_CONST_HELPER_FMODE_WRITE = FMODE_WRITE;
/* Poll events (file.rs): `(__force __poll_t)` casts that bindgen cannot expand. */
const __poll_t RUST_CONST_HELPER_EPOLLIN = EPOLLIN;
const __poll_t RUST_CONST_HELPER_EPOLLOUT = EPOLLOUT;
const __poll_t RUST_CONST_HELPER_EPOLLERR = EPOLLERR;
const __poll_t RUST_CONST_HELPER_EPOLLRDNORM = EPOLLRDNORM;
const __poll_t RUST_CONST_HELPER_EPOLLWRNORM = EPOLLWRNORM;

/* Memory maps, pages and file descriptors (mm.rs, page.rs, fd.rs). */
const unsigned long RUST_CONST_HELPER_VM_READ = VM_READ;
const unsigned long RUST_CONST_HELPER_VM_WRITE = VM_WRITE;
const unsigned long RUST_CONST_HELPER_VM_EXEC = VM_EXEC;
const unsigned long RUST_CONST_HELPER_VM_MAYREAD = VM_MAYREAD;
const unsigned long RUST_CONST_HELPER_VM_MAYWRITE = VM_MAYWRITE;
const unsigned long RUST_CONST_HELPER_VM_MAYEXEC = VM_MAYEXEC;
const unsigned long RUST_CONST_HELPER_VM_DONTCOPY = VM_DONTCOPY;
const unsigned long RUST_CONST_HELPER_VM_DONTEXPAND = VM_DONTEXPAND;
const unsigned long RUST_CONST_HELPER_VM_MIXEDMAP = VM_MIXEDMAP;
const vm_fault_t RUST_CONST_HELPER_VM_FAULT_SIGBUS = VM_FAULT_SIGBUS;
const int RUST_CONST_HELPER_O_CLOEXEC = O_CLOEXEC;
/* Shrinkers (shrinker.rs). */
const int RUST_CONST_HELPER_DEFAULT_SEEKS = DEFAULT_SEEKS;

/* PCI, MMIO, DMA, interrupts (pci.rs, io.rs, dma.rs, irq.rs). */
const unsigned int RUST_CONST_HELPER_PCI_IRQ_MSIX = PCI_IRQ_MSIX;
const unsigned int RUST_CONST_HELPER_PCI_IRQ_AFFINITY = PCI_IRQ_AFFINITY;
const unsigned long RUST_CONST_HELPER_IORESOURCE_MEM = IORESOURCE_MEM;

/* The block layer (block/, scatterlist.rs): `(__force blk_status_t)` casts
 * and enum values that bindgen cannot expand. */
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/scatterlist.h>
const blk_status_t RUST_CONST_HELPER_BLK_STS_OK = BLK_STS_OK;
const blk_status_t RUST_CONST_HELPER_BLK_STS_IOERR = BLK_STS_IOERR;
const blk_status_t RUST_CONST_HELPER_BLK_STS_RESOURCE = BLK_STS_RESOURCE;
const unsigned int RUST_CONST_HELPER_BLK_MQ_F_SHOULD_MERGE = BLK_MQ_F_SHOULD_MERGE;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
/* Queue features, given with the limits at allocation (gen_disk.rs). */
const blk_features_t RUST_CONST_HELPER_BLK_FEAT_WRITE_CACHE = BLK_FEAT_WRITE_CACHE;
const blk_features_t RUST_CONST_HELPER_BLK_FEAT_FUA = BLK_FEAT_FUA;
const blk_features_t RUST_CONST_HELPER_BLK_FEAT_ROTATIONAL = BLK_FEAT_ROTATIONAL;
#endif
const unsigned int RUST_CONST_HELPER_REQ_OP_READ = REQ_OP_READ;
const unsigned int RUST_CONST_HELPER_REQ_OP_WRITE = REQ_OP_WRITE;
const unsigned int RUST_CONST_HELPER_REQ_OP_FLUSH = REQ_OP_FLUSH;
const unsigned int RUST_CONST_HELPER_REQ_OP_DISCARD = REQ_OP_DISCARD;
const unsigned int RUST_CONST_HELPER_REQ_OP_WRITE_ZEROES = REQ_OP_WRITE_ZEROES;
const unsigned int RUST_CONST_HELPER_DISK_NAME_LEN = DISK_NAME_LEN;
const unsigned int RUST_CONST_HELPER_HZ = HZ;
