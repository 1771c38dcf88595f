// SPDX-License-Identifier: GPL-2.0
/*
 * Memory maps and pages (kernel-crate/src/mm.rs, page.rs).
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
#include <linux/version.h>

#include "helpers.h"

unsigned long rust_helper_vma_start(struct vm_area_struct *vma)
{
	return vma->vm_start;
}

unsigned long rust_helper_vma_end(struct vm_area_struct *vma)
{
	return vma->vm_end;
}

unsigned long rust_helper_vma_flags(struct vm_area_struct *vma)
{
	return vma->vm_flags;
}

/* 6.1 has no vm_flags_set(): an mmap handler writes vm_flags directly.
 * 6.3+ makes vm_flags read-only: the area is write-locked first (as
 * vm_flags_mod() does; the caller holds the mmap_lock for writing). */
void rust_helper_vma_set_flags(struct vm_area_struct *vma, unsigned long flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vma_start_write(vma);
	vm_flags_reset(vma, flags);
#else
	vma->vm_flags = flags;
#endif
}

struct mm_struct *rust_helper_vma_mm(struct vm_area_struct *vma)
{
	return vma->vm_mm;
}

void *rust_helper_vma_private_data(struct vm_area_struct *vma)
{
	return vma->vm_private_data;
}

void rust_helper_vma_set_private_data(struct vm_area_struct *vma, void *data)
{
	vma->vm_private_data = data;
}

void rust_helper_vma_set_ops(struct vm_area_struct *vma, const struct vm_operations_struct *ops)
{
	vma->vm_ops = ops;
}

void rust_helper_mmgrab(struct mm_struct *mm)
{
	mmgrab(mm);
}

void rust_helper_mmdrop(struct mm_struct *mm)
{
	mmdrop(mm);
}

bool rust_helper_mmget_not_zero(struct mm_struct *mm)
{
	return mmget_not_zero(mm);
}

void rust_helper_mmap_read_lock(struct mm_struct *mm)
{
	mmap_read_lock(mm);
}

void rust_helper_mmap_read_unlock(struct mm_struct *mm)
{
	mmap_read_unlock(mm);
}

struct vm_area_struct *rust_helper_vma_lookup(struct mm_struct *mm, unsigned long addr)
{
	return vma_lookup(mm, addr);
}

bool rust_helper_mmap_read_trylock(struct mm_struct *mm)
{
	return mmap_read_trylock(mm);
}

const struct vm_operations_struct *rust_helper_vma_ops(struct vm_area_struct *vma)
{
	return vma->vm_ops;
}
struct page *rust_helper_alloc_page(gfp_t gfp)
{
	return alloc_page(gfp);
}

void *rust_helper_kmap_local_page(struct page *page)
{
	return kmap_local_page(page);
}

void rust_helper_kunmap_local(const void *addr)
{
	kunmap_local(addr);
}
