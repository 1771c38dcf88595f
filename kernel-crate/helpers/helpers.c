// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers compiled by Kbuild into every Rust module (rust-module.mk copies
 * this file next to the module as kernel_helpers.c). Each one wraps a macro
 * or an inline function so that bindgen sees a real symbol to call.
 */
#include <linux/bug.h>

#include "helpers.h"

void rust_helper_BUG(void)
{
	BUG();
}
