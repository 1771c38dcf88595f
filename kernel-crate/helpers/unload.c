// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of a module's kernel threads and registrations
 * (kernel-crate/src/unload.rs): its lock, and what the exit says and does
 * about a leaked one. This file is compiled into each module that uses
 * it, so each has its own lock, and KBUILD_MODNAME names the module.
 *
 * The lock is a mutex, which the Rust code takes with mutex_lock and
 * mutex_unlock themselves (functions of the kernel, which most modules
 * import anyway): a spinlock would need two helpers, as spin_lock is
 * inline. Every caller may sleep (it registers, unregisters, spawns or
 * stops). __visible: the helpers are compiled with -fwhole-program.
 */
#include <linux/bug.h>
#include <linux/kmemleak.h>
#include <linux/module.h>
#include <linux/mutex.h>

#include "helpers.h"

__visible struct mutex rust_unload_mutex = __MUTEX_INITIALIZER(rust_unload_mutex);

void rust_helper_unload_warn(const char *type, size_t len, const char *action)
{
	WARN(1, KBUILD_MODNAME ": a %.*s was leaked: %s before unload\n",
	     (int)len, type, action);
}

void rust_helper_warn_misuse(const char *what)
{
	WARN(1, KBUILD_MODNAME ": %s\n", what);
}

void rust_helper_kmemleak_not_leak(const void *ptr)
{
	kmemleak_not_leak(ptr);
}

bool rust_helper_try_module_get(struct module *module)
{
	return try_module_get(module);
}
