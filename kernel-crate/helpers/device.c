// SPDX-License-Identifier: GPL-2.0
/*
 * Devices' names and the id allocator (kernel-crate/src/device.rs, ida.rs).
 */
#include <linux/device.h>
#include <linux/idr.h>

#include "helpers.h"

const char *rust_helper_dev_name(const struct device *dev)
{
	return dev_name(dev);
}

void rust_helper_ida_init(struct ida *ida)
{
	ida_init(ida);
}
