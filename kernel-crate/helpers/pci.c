// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers for PCI, MMIO, DMA, interrupts, delays and the id allocator
 * (kernel-crate/src/{pci,io,dma,irq,delay,ida,device}.rs). helpers.c
 * includes this file, so Kbuild compiles it into every module.
 */
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/io.h>
#include <linux/pci.h>

#include "helpers.h"

void rust_helper_pci_set_drvdata(struct pci_dev *pdev, void *data)
{
	pci_set_drvdata(pdev, data);
}

void *rust_helper_pci_get_drvdata(struct pci_dev *pdev)
{
	return pci_get_drvdata(pdev);
}

struct device *rust_helper_pci_dev_device(struct pci_dev *pdev)
{
	return &pdev->dev;
}

u16 rust_helper_pci_vendor(struct pci_dev *pdev)
{
	return pdev->vendor;
}

u16 rust_helper_pci_device(struct pci_dev *pdev)
{
	return pdev->device;
}

u32 rust_helper_pci_class(struct pci_dev *pdev)
{
	return pdev->class;
}

resource_size_t rust_helper_pci_resource_len(struct pci_dev *pdev, int bar)
{
	return pci_resource_len(pdev, bar);
}

unsigned long rust_helper_pci_resource_flags(struct pci_dev *pdev, int bar)
{
	return pci_resource_flags(pdev, bar);
}

const char *rust_helper_dev_name(const struct device *dev)
{
	return dev_name(dev);
}

u32 rust_helper_readl(const void __iomem *addr)
{
	return readl(addr);
}

void rust_helper_writel(u32 value, void __iomem *addr)
{
	writel(value, addr);
}

u64 rust_helper_readq(const void __iomem *addr)
{
	return readq(addr);
}

void rust_helper_writeq(u64 value, void __iomem *addr)
{
	writeq(value, addr);
}

int rust_helper_dma_set_mask_and_coherent(struct device *dev, u64 mask)
{
	return dma_set_mask_and_coherent(dev, mask);
}

void rust_helper_usleep_range(unsigned long min, unsigned long max)
{
	usleep_range(min, max);
}

void rust_helper_ida_init(struct ida *ida)
{
	ida_init(ida);
}

unsigned long rust_helper_jiffies(void)
{
	return jiffies;
}

unsigned long rust_helper_msecs_to_jiffies(unsigned int ms)
{
	return msecs_to_jiffies(ms);
}

unsigned int rust_helper_num_online_cpus(void)
{
	return num_online_cpus();
}

struct pci_driver *rust_helper_pci_dev_driver(struct pci_dev *pdev)
{
	return to_pci_driver(pdev->dev.driver);
}

int rust_helper_cpumask_next(int n, const struct cpumask *mask)
{
	return cpumask_next(n, mask);
}
