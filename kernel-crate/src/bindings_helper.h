/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C API the `kernel` crate wraps. bindgen reads this file with the
 * flags Kbuild uses for C (see build.rs); only allowlisted items are kept.
 */
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>
#include <linux/slab.h>

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
