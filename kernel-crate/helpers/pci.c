// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers for PCI, MMIO and DMA masks (kernel-crate/src/{pci,io,dma}.rs).
 */
#include <linux/device.h>
#include <linux/dma-mapping.h>
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

struct pci_driver *rust_helper_pci_dev_driver(struct pci_dev *pdev)
{
	return to_pci_driver(pdev->dev.driver);
}
