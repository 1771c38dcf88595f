// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of a module's kernel threads and registrations
 * (kernel-crate/src/unload.rs): its lock, and what the exit says and does
 * about a leaked one. This file is compiled into each module that uses
 * it, so each has its own lock, and KBUILD_MODNAME names the module.
 */
#include <linux/bug.h>
#include <linux/kmemleak.h>
#include <linux/module.h>
#include <linux/spinlock.h>

#include "helpers.h"

static DEFINE_SPINLOCK(rust_unload_lock);

void rust_helper_unload_lock(void)
{
	spin_lock(&rust_unload_lock);
}

void rust_helper_unload_unlock(void)
{
	spin_unlock(&rust_unload_lock);
}

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
