// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers compiled by Kbuild into every Rust module (rust-module.mk
 * generates a kernel_helpers.c next to the module that includes this file).
 * Each one wraps a macro or an inline function so that bindgen sees a real
 * symbol to call.
 */
#include <linux/bug.h>

#include "helpers.h"

void rust_helper_BUG(void)
{
	BUG();
}
