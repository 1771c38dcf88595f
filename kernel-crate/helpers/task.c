// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers for tasks and work items (kernel-crate/src/task.rs, workqueue.rs).
 */
#include <linux/cred.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/workqueue.h>

#include "helpers.h"

void rust_helper_get_task_struct(struct task_struct *t)
{
	get_task_struct(t);
}

void rust_helper_put_task_struct(struct task_struct *t)
{
	put_task_struct(t);
}

int rust_helper_task_pid(struct task_struct *t)
{
	return READ_ONCE(t->pid);
}

int rust_helper_task_tgid(struct task_struct *t)
{
	return READ_ONCE(t->tgid);
}

int rust_helper_task_tgid_in_current_ns(struct task_struct *t)
{
	return task_tgid_nr_ns(t, task_active_pid_ns(current));
}

unsigned int rust_helper_task_euid(struct task_struct *t)
{
	return from_kuid(current_user_ns(), task_euid(t));
}

struct task_struct *rust_helper_task_group_leader(struct task_struct *t)
{
	return READ_ONCE(t->group_leader);
}

/*
 * INIT_WORK with the caller's lock class: the macro would give every work
 * item of the module the one class of this call site.
 */
void rust_helper_init_work_with_key(struct work_struct *work, work_func_t func,
				    const char *name,
				    struct lock_class_key *key)
{
	__init_work(work, 0);
	work->data = (atomic_long_t)WORK_DATA_INIT();
#ifdef CONFIG_LOCKDEP
	lockdep_init_map(&work->lockdep_map, name, key, 0);
#endif
	INIT_LIST_HEAD(&work->entry);
	work->func = func;
}

bool rust_helper_schedule_work(struct work_struct *work)
{
	return schedule_work(work);
}

/*
 * flush_scheduled_work() warns at compile time: flushing the system-wide
 * queue waits for every user's work. It is called once, at module exit,
 * where only that is enough (workqueue.rs, `drain`).
 */
void rust_helper_flush_system_wq(void)
{
	__flush_workqueue(system_wq);
}
