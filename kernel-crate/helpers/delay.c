// SPDX-License-Identifier: GPL-2.0
/*
 * Sleeps and time-outs (kernel-crate/src/delay.rs).
 */
#include <linux/delay.h>
#include <linux/jiffies.h>

#include "helpers.h"

void rust_helper_usleep_range(unsigned long min, unsigned long max)
{
	usleep_range(min, max);
}

unsigned long rust_helper_jiffies(void)
{
	return jiffies;
}

unsigned long rust_helper_msecs_to_jiffies(unsigned int ms)
{
	return msecs_to_jiffies(ms);
}
