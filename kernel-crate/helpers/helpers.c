// SPDX-License-Identifier: GPL-2.0
/*
 * The C helpers that most modules need: BUG, barriers, locks, signals,
 * the current task and reference counts (kernel-crate/src/sync, task.rs,
 * barrier.rs, rbtree.rs). Each wraps a macro or an inline function so
 * that bindgen sees a real symbol to call.
 *
 * Every file of this folder is one unit of linking: rust-module.mk
 * compiles into a module only the files that define a symbol its Rust
 * object calls (see kbuild/rust-module.mk), so a module imports nothing
 * from a subsystem it does not use. A helper must therefore not call a
 * helper of another file, and a file's helpers belong together.
 */
#include <asm/barrier.h>
#include <linux/bug.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>
#include <linux/spinlock.h>

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

void rust_helper_refcount_inc(refcount_t *r)
{
	refcount_inc(r);
}

int rust_helper_refcount_dec_and_test(refcount_t *r)
{
	return refcount_dec_and_test(r);
}
void rust_helper_init_completion(struct completion *x)
{
	init_completion(x);
}
void rust_helper_rb_link_node(struct rb_node *node, struct rb_node *parent,
			      struct rb_node **rb_link)
{
	rb_link_node(node, parent, rb_link);
}
