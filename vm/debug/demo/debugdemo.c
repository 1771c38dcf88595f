// SPDX-License-Identifier: GPL-2.0
/*
 * debugdemo: makes one mistake of each kind the debug kernel's tools catch,
 * chosen by the `bug` parameter. `checker lab debug-demo --kernel debug
 * --lab-dir vm/debug/demo` records their reports, which the checker's
 * parser tests (checker/src/tools/debugkernel.rs) and book/src/debug-kernel.md use.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>

static char *bug = "none";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "uaf, sleep, lock-order or leak");

static DEFINE_SPINLOCK(demo_lock);
static DEFINE_MUTEX(mutex_a);
static DEFINE_MUTEX(mutex_b);
static void *leaked;

/* KASAN: reads a block after kfree(). */
static noinline int use_after_free(void)
{
	int *p = kmalloc(sizeof(*p) * 8, GFP_KERNEL);
	int v;

	if (!p)
		return -ENOMEM;
	p[3] = 42;
	kfree(p);
	v = READ_ONCE(p[3]);
	pr_info("debugdemo: read %d after kfree\n", v);
	return 0;
}

/* might_sleep(): kmalloc(GFP_KERNEL), which may sleep, with a spinlock held. */
static noinline void sleep_in_atomic(void)
{
	spin_lock(&demo_lock);
	kfree(kmalloc(16, GFP_KERNEL));
	spin_unlock(&demo_lock);
}

/* lockdep: a then b, later b then a; no deadlock happens, lockdep still
 * sees that it could. */
static noinline void lock_order(void)
{
	mutex_lock(&mutex_a);
	mutex_lock(&mutex_b);
	mutex_unlock(&mutex_b);
	mutex_unlock(&mutex_a);

	mutex_lock(&mutex_b);
	mutex_lock(&mutex_a);
	mutex_unlock(&mutex_a);
	mutex_unlock(&mutex_b);
}

/* kmemleak: the only pointer to a block is overwritten. */
static noinline void leak(void)
{
	leaked = kmalloc(64, GFP_KERNEL);
	leaked = NULL;
}

static int __init debugdemo_init(void)
{
	pr_info("debugdemo: bug=%s\n", bug);
	if (!strcmp(bug, "uaf"))
		return use_after_free();
	if (!strcmp(bug, "sleep"))
		sleep_in_atomic();
	else if (!strcmp(bug, "lock-order"))
		lock_order();
	else if (!strcmp(bug, "leak"))
		leak();
	return 0;
}

static void __exit debugdemo_exit(void)
{
}

module_init(debugdemo_init);
module_exit(debugdemo_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("One bug of each kind the debug kernel catches");
