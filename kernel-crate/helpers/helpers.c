// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers compiled by Kbuild into every Rust module (rust-module.mk
 * generates a kernel_helpers.c next to the module that includes this file).
 * Each one wraps a macro or an inline function so that bindgen sees a real
 * symbol to call.
 */
#include <asm/barrier.h>
#include <linux/bug.h>
#include <linux/cdev.h>
#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#include <linux/cred.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
#include <linux/sched.h>

#include "helpers.h"

/*
 * The fault-injection site of the crate's allocator: whether this
 * allocation call is the one the task's /proc/thread-self/fail-nth asks to
 * fail (see Documentation/fault-injection/fault-injection.rst). The kernel
 * counts its own calls to should_fail() on the same counter; the debug
 * kernel's failslab and fail_page_alloc are set so that none of theirs
 * counts during a failslab step (vm/guest/failslab.sh), so the n-th
 * allocation call of the module is the one that fails, whatever the kernel
 * allocates around it. Kernels without CONFIG_FAULT_INJECTION (Debian's)
 * never fail here.
 */
bool rust_helper_alloc_should_fail(void)
{
#ifdef CONFIG_FAULT_INJECTION
	unsigned int n;

	if (!in_task())
		return false;
	n = READ_ONCE(current->fail_nth);
	if (!n)
		return false;
	WRITE_ONCE(current->fail_nth, n - 1);
	return n == 1;
#else
	return false;
#endif
}

void rust_helper_BUG(void)
{
	BUG();
}

/* Barriers (kernel-crate/src/barrier.rs). */
void rust_helper_dma_rmb(void)
{
	dma_rmb();
}

void rust_helper_dma_wmb(void)
{
	dma_wmb();
}

void rust_helper_mb(void)
{
	mb();
}

void rust_helper_spin_lock_init(spinlock_t *lock, const char *name,
				struct lock_class_key *key)
{
#ifdef CONFIG_DEBUG_SPINLOCK
	__raw_spin_lock_init(spinlock_check(lock), name, key, LD_WAIT_CONFIG);
#else
	spin_lock_init(lock);
#endif
}

void rust_helper_spin_lock(spinlock_t *lock)
{
	spin_lock(lock);
}

/* With lockdep (CONFIG_DEBUG_LOCK_ALLOC, the debug kernel), mutex_lock() is
 * a macro for mutex_lock_nested(lock, 0): no function to bind to. */
void rust_helper_mutex_lock(struct mutex *lock)
{
	mutex_lock(lock);
}

void rust_helper_spin_unlock(spinlock_t *lock)
{
	spin_unlock(lock);
}

/* SpinLockIrq and the atomic-context checks: a file of their own. */
#include "sync.c"

int rust_helper_signal_pending(void)
{
	return signal_pending(current);
}

void rust_helper_allow_signal(int sig)
{
	allow_signal(sig);
}

struct task_struct *rust_helper_get_current(void)
{
	return current;
}

void rust_helper_set_current_state(unsigned int state)
{
	set_current_state(state);
}

void rust_helper_refcount_set(refcount_t *r, int n)
{
	refcount_set(r, n);
}

void rust_helper_refcount_inc(refcount_t *r)
{
	refcount_inc(r);
}

int rust_helper_refcount_dec_and_test(refcount_t *r)
{
	return refcount_dec_and_test(r);
}

unsigned long rust_helper_copy_from_user(void *to, const void __user *from,
					 unsigned long n)
{
	return copy_from_user(to, from, n);
}

unsigned long rust_helper_copy_to_user(void __user *to, const void *from,
				       unsigned long n)
{
	return copy_to_user(to, from, n);
}

void rust_helper_poll_wait(struct file *filp, wait_queue_head_t *head,
			   poll_table *p)
{
	poll_wait(filp, head, p);
}

dev_t rust_helper_file_rdev(struct file *file)
{
	return file_inode(file)->i_rdev;
}

/*
 * A cdev that owns its memory through its kobject (cdev_alloc: the last
 * kobject_put frees it, in the core's release, never in module code), set
 * up as cdev_init does, with the owner that cdev_get pins for each open.
 */
struct cdev *rust_helper_cdev_alloc(const struct file_operations *fops,
				    struct module *owner)
{
	struct cdev *cdev = cdev_alloc();

	if (cdev) {
		cdev->ops = fops;
		cdev->owner = owner;
	}
	return cdev;
}

/* Drops the reference of cdev_alloc on a cdev that was never added. */
void rust_helper_cdev_put(struct cdev *cdev)
{
	kobject_put(&cdev->kobj);
}

/*
 * Serialises the opens of this module's char device regions with their
 * unregistration (chrdev.rs): this file is compiled into each module, so
 * each has its own, as the misc devices share misc_mtx.
 */
static DEFINE_MUTEX(rust_chrdev_open_mutex);

void rust_helper_chrdev_open_lock(void)
{
	mutex_lock(&rust_chrdev_open_mutex);
}

void rust_helper_chrdev_open_unlock(void)
{
	mutex_unlock(&rust_chrdev_open_mutex);
}

void rust_helper_init_completion(struct completion *x)
{
	init_completion(x);
}

unsigned long rust_helper_vma_start(struct vm_area_struct *vma)
{
	return vma->vm_start;
}

unsigned long rust_helper_vma_end(struct vm_area_struct *vma)
{
	return vma->vm_end;
}

unsigned long rust_helper_vma_flags(struct vm_area_struct *vma)
{
	return vma->vm_flags;
}

/* 6.1 has no vm_flags_set(): an mmap handler writes vm_flags directly.
 * 6.3+ makes vm_flags read-only: the area is write-locked first (as
 * vm_flags_mod() does; the caller holds the mmap_lock for writing). */
void rust_helper_vma_set_flags(struct vm_area_struct *vma, unsigned long flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vma_start_write(vma);
	vm_flags_reset(vma, flags);
#else
	vma->vm_flags = flags;
#endif
}

struct mm_struct *rust_helper_vma_mm(struct vm_area_struct *vma)
{
	return vma->vm_mm;
}

void *rust_helper_vma_private_data(struct vm_area_struct *vma)
{
	return vma->vm_private_data;
}

void rust_helper_vma_set_private_data(struct vm_area_struct *vma, void *data)
{
	vma->vm_private_data = data;
}

void rust_helper_vma_set_ops(struct vm_area_struct *vma, const struct vm_operations_struct *ops)
{
	vma->vm_ops = ops;
}

void rust_helper_mmgrab(struct mm_struct *mm)
{
	mmgrab(mm);
}

void rust_helper_mmdrop(struct mm_struct *mm)
{
	mmdrop(mm);
}

bool rust_helper_mmget_not_zero(struct mm_struct *mm)
{
	return mmget_not_zero(mm);
}

void rust_helper_mmap_read_lock(struct mm_struct *mm)
{
	mmap_read_lock(mm);
}

void rust_helper_mmap_read_unlock(struct mm_struct *mm)
{
	mmap_read_unlock(mm);
}

struct vm_area_struct *rust_helper_vma_lookup(struct mm_struct *mm, unsigned long addr)
{
	return vma_lookup(mm, addr);
}

bool rust_helper_mmap_read_trylock(struct mm_struct *mm)
{
	return mmap_read_trylock(mm);
}

const struct vm_operations_struct *rust_helper_vma_ops(struct vm_area_struct *vma)
{
	return vma->vm_ops;
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
/* shrinker_alloc() is variadic (a printf format for the name). */
struct shrinker *rust_helper_shrinker_alloc(const char *name)
{
	return shrinker_alloc(0, "%s", name);
}
#else
/* register_shrinker() is variadic (a printf format for the name). */
int rust_helper_register_shrinker(struct shrinker *shrinker, const char *name)
{
	return register_shrinker(shrinker, "%s", name);
}
#endif

struct page *rust_helper_alloc_page(gfp_t gfp)
{
	return alloc_page(gfp);
}

void *rust_helper_kmap_local_page(struct page *page)
{
	return kmap_local_page(page);
}

void rust_helper_kunmap_local(const void *addr)
{
	kunmap_local(addr);
}

const struct cred *rust_helper_file_get_cred(struct file *file)
{
	return get_cred(file->f_cred);
}

void rust_helper_put_cred(const struct cred *cred)
{
	put_cred(cred);
}

unsigned int rust_helper_cred_euid(const struct cred *cred)
{
	return from_kuid(current_user_ns(), cred->euid);
}

/* Tasks and work items (task.rs, workqueue.rs): a file of their own. */
#include "task.c"

/* PCI, MMIO, DMA, interrupts, delays and ids: a file of their own. */
#include "pci.c"

/* The block layer's helpers (kernel-crate/src/block, scatterlist.rs). */
#include "block.c"

/* The registry of kthreads and registrations (unload.rs). */
#include "unload.c"

/* KASAN's memory intrinsics for the Rust code (rust-module.mk). */
#include "kasan.c"

void rust_helper_rb_link_node(struct rb_node *node, struct rb_node *parent,
			      struct rb_node **rb_link)
{
	rb_link_node(node, parent, rb_link);
}

int rust_helper_security_binder_set_context_mgr(const struct cred *mgr)
{
	return security_binder_set_context_mgr(mgr);
}

int rust_helper_security_binder_transaction(const struct cred *from,
					    const struct cred *to)
{
	return security_binder_transaction(from, to);
}

int rust_helper_security_binder_transfer_binder(const struct cred *from,
						const struct cred *to)
{
	return security_binder_transfer_binder(from, to);
}

int rust_helper_security_binder_transfer_file(const struct cred *from,
					      const struct cred *to,
					      struct file *file)
{
	return security_binder_transfer_file(from, to, file);
}
