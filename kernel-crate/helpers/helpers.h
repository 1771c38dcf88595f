/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declarations of the C helpers in helpers.c: macros and inline functions
 * of the kernel API that Rust cannot call directly.
 */
#ifndef RUST_KERNEL_HELPERS_H
#define RUST_KERNEL_HELPERS_H

#include <linux/compiler.h>

void __noreturn rust_helper_BUG(void);

#endif
