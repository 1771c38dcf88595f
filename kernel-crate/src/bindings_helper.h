/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C API the `kernel` crate wraps. bindgen reads this file with the
 * flags Kbuild uses for C (see build.rs); only allowlisted items are kept.
 */
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/printk.h>

#include "../helpers/helpers.h"
