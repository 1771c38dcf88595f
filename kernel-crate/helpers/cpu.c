// SPDX-License-Identifier: GPL-2.0
/*
 * Online CPUs and CPU masks (kernel-crate/src/cpu.rs, irq.rs).
 */
#include <linux/cpumask.h>

#include "helpers.h"

unsigned int rust_helper_num_online_cpus(void)
{
	return num_online_cpus();
}

int rust_helper_cpumask_next(int n, const struct cpumask *mask)
{
	return cpumask_next(n, mask);
}
