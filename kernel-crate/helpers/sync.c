// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers for the interrupt-disabling spinlock and the atomic-context
 * checks (kernel-crate/src/sync).
 */
#include <linux/bug.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>

#include "helpers.h"

/*
 * SpinLockIrq's guards may be dropped in any order, so a guard cannot
 * restore the interrupt state it saw: the first of two nested guards
 * saw them on, and dropping it first would enable them while the second
 * lock is held. Instead the first guard this module takes on a CPU saves
 * the state and the last one it drops restores it, with a count in
 * between, as mainline's local_interrupt_disable() does (there the count
 * is in preempt_count; an out-of-tree module has to keep its own).
 * Interrupts are off while the count is not zero, so the task cannot
 * move to another CPU and no interrupt handler sees a half-updated count.
 */
struct rust_irq_disable {
	unsigned long flags;
	unsigned int count;
};

static DEFINE_PER_CPU(struct rust_irq_disable, rust_irq_disable);

void rust_helper_spin_lock_irq_disable(spinlock_t *lock)
{
	unsigned long flags;
	unsigned int count;

	local_irq_save(flags);
	count = __this_cpu_read(rust_irq_disable.count);
	/*
	 * A count with interrupts on was left by a guard that was forgotten
	 * or slept with the lock held (both reported when they happened):
	 * start again from this guard rather than never enable them again.
	 */
	if (WARN_ON_ONCE(count && !irqs_disabled_flags(flags)))
		count = 0;
	if (!count)
		__this_cpu_write(rust_irq_disable.flags, flags);
	__this_cpu_write(rust_irq_disable.count, count + 1);
	spin_lock(lock);
}

void rust_helper_spin_unlock_irq_enable(spinlock_t *lock)
{
	unsigned int count;

	/* Preemption stays off until interrupts are back on, so that a
	 * reschedule asked for meanwhile happens at preempt_enable(). */
	preempt_disable();
	count = __this_cpu_read(rust_irq_disable.count);
	spin_unlock(lock);
	if (!WARN_ON_ONCE(!count)) {
		__this_cpu_write(rust_irq_disable.count, count - 1);
		if (count == 1)
			local_irq_restore(__this_cpu_read(rust_irq_disable.flags));
	}
	preempt_enable();
}

bool rust_helper_irqs_disabled(void)
{
	return irqs_disabled();
}

void rust_helper_might_sleep(void)
{
	might_sleep();
}

/*
 * The atomic-context half of might_sleep(), for a task that has already
 * set its state to sleeping (after prepare_to_wait, on its way to
 * schedule): might_sleep() would also warn that it is not TASK_RUNNING.
 */
void rust_helper_might_sleep_prepared(void)
{
#ifdef CONFIG_DEBUG_ATOMIC_SLEEP
	__might_resched(__FILE__, __LINE__, 0);
#endif
}
