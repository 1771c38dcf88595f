// SPDX-License-Identifier: GPL-2.0
/*
 * Shrinkers (kernel-crate/src/shrinker.rs).
 */
#include <linux/mm.h>
#include <linux/version.h>

#include "helpers.h"

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
