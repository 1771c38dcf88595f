/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declarations of the C helpers (the .c files of this folder): macros and
 * inline functions of the kernel API that Rust cannot call directly.
 */
#ifndef RUST_KERNEL_HELPERS_H
#define RUST_KERNEL_HELPERS_H

#include <linux/compiler.h>
#include <linux/version.h>

void __noreturn rust_helper_BUG(void);
void rust_helper_dma_rmb(void);
void rust_helper_dma_wmb(void);
void rust_helper_mb(void);

/* The allocator's fault-injection site (kernel-crate/src/alloc). */
bool rust_helper_alloc_should_fail(void);

/* Synchronisation (kernel-crate/src/sync, task.rs). */
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>

void rust_helper_spin_lock_init(spinlock_t *lock, const char *name,
				struct lock_class_key *key);
void rust_helper_spin_lock(spinlock_t *lock);
void rust_helper_mutex_lock(struct mutex *lock);
void rust_helper_spin_unlock(spinlock_t *lock);
void rust_helper_spin_lock_irq_disable(spinlock_t *lock);
void rust_helper_spin_unlock_irq_enable(spinlock_t *lock);
bool rust_helper_irqs_disabled(void);
void rust_helper_might_sleep(void);
void rust_helper_might_sleep_prepared(void);
int rust_helper_signal_pending(void);
void rust_helper_allow_signal(int sig);
struct task_struct *rust_helper_get_current(void);
void rust_helper_set_current_state(unsigned int state);
void rust_helper_refcount_inc(refcount_t *r);
int rust_helper_refcount_dec_and_test(refcount_t *r);

/* Files and user memory (kernel-crate/src/file.rs, user.rs). */
#include <linux/fs.h>
#include <linux/poll.h>

unsigned long rust_helper_copy_from_user(void *to, const void __user *from,
					 unsigned long n);
unsigned long rust_helper_copy_to_user(void __user *to, const void *from,
				       unsigned long n);
void rust_helper_poll_wait(struct file *filp, wait_queue_head_t *head,
			   poll_table *p);
dev_t rust_helper_file_rdev(struct file *file);

/* Char device regions (kernel-crate/src/chrdev.rs). */
#include <linux/cdev.h>

struct cdev *rust_helper_cdev_alloc(const struct file_operations *fops,
				    struct module *owner);
void rust_helper_cdev_put(struct cdev *cdev);
void rust_helper_chrdev_open_lock(void);
void rust_helper_chrdev_open_unlock(void);

/* Completions (lab 09 writes their abstraction). */
#include <linux/completion.h>

void rust_helper_init_completion(struct completion *x);

/* Memory maps, pages, credentials, fds (mm.rs, page.rs, cred.rs, fd.rs). */
#include <linux/mm_types.h>

unsigned long rust_helper_vma_start(struct vm_area_struct *vma);
unsigned long rust_helper_vma_end(struct vm_area_struct *vma);
unsigned long rust_helper_vma_flags(struct vm_area_struct *vma);
void rust_helper_vma_set_flags(struct vm_area_struct *vma, unsigned long flags);
struct mm_struct *rust_helper_vma_mm(struct vm_area_struct *vma);
void *rust_helper_vma_private_data(struct vm_area_struct *vma);
void rust_helper_vma_set_private_data(struct vm_area_struct *vma, void *data);
void rust_helper_vma_set_ops(struct vm_area_struct *vma, const struct vm_operations_struct *ops);
void rust_helper_mmgrab(struct mm_struct *mm);
void rust_helper_mmdrop(struct mm_struct *mm);
bool rust_helper_mmget_not_zero(struct mm_struct *mm);
void rust_helper_mmap_read_lock(struct mm_struct *mm);
void rust_helper_mmap_read_unlock(struct mm_struct *mm);
bool rust_helper_mmap_read_trylock(struct mm_struct *mm);
const struct vm_operations_struct *rust_helper_vma_ops(struct vm_area_struct *vma);
struct vm_area_struct *rust_helper_vma_lookup(struct mm_struct *mm, unsigned long addr);
struct page *rust_helper_alloc_page(gfp_t gfp);
void *rust_helper_kmap_local_page(struct page *page);
void rust_helper_kunmap_local(const void *addr);
const struct cred *rust_helper_file_get_cred(struct file *file);
void rust_helper_put_cred(const struct cred *cred);
unsigned int rust_helper_cred_euid(const struct cred *cred);

/* Tasks and work items (helpers/task.c; kernel-crate/src/task.rs,
 * workqueue.rs). */
#include <linux/workqueue.h>

void rust_helper_get_task_struct(struct task_struct *t);
void rust_helper_put_task_struct(struct task_struct *t);
int rust_helper_task_pid(struct task_struct *t);
int rust_helper_task_tgid(struct task_struct *t);
int rust_helper_task_tgid_in_current_ns(struct task_struct *t);
unsigned int rust_helper_task_euid(struct task_struct *t);
struct task_struct *rust_helper_task_group_leader(struct task_struct *t);
void rust_helper_init_work_with_key(struct work_struct *work, work_func_t func,
				    const char *name,
				    struct lock_class_key *key);
bool rust_helper_schedule_work(struct work_struct *work);
void rust_helper_flush_system_wq(void);

/* PCI, MMIO, DMA, interrupts, delays, ids (helpers/pci.c; kernel-crate/src/
 * pci.rs, io.rs, dma.rs, irq.rs, delay.rs, ida.rs, device.rs). */
#include <linux/device.h>
#include <linux/idr.h>
#include <linux/pci.h>

void rust_helper_pci_set_drvdata(struct pci_dev *pdev, void *data);
void *rust_helper_pci_get_drvdata(struct pci_dev *pdev);
struct device *rust_helper_pci_dev_device(struct pci_dev *pdev);
u16 rust_helper_pci_vendor(struct pci_dev *pdev);
u16 rust_helper_pci_device(struct pci_dev *pdev);
u32 rust_helper_pci_class(struct pci_dev *pdev);
resource_size_t rust_helper_pci_resource_len(struct pci_dev *pdev, int bar);
unsigned long rust_helper_pci_resource_flags(struct pci_dev *pdev, int bar);
const char *rust_helper_dev_name(const struct device *dev);
u32 rust_helper_readl(const void __iomem *addr);
void rust_helper_writel(u32 value, void __iomem *addr);
u64 rust_helper_readq(const void __iomem *addr);
void rust_helper_writeq(u64 value, void __iomem *addr);
int rust_helper_dma_set_mask_and_coherent(struct device *dev, u64 mask);
void rust_helper_usleep_range(unsigned long min, unsigned long max);
void rust_helper_ida_init(struct ida *ida);
unsigned long rust_helper_jiffies(void);
unsigned long rust_helper_msecs_to_jiffies(unsigned int ms);
unsigned int rust_helper_num_online_cpus(void);
struct pci_driver *rust_helper_pci_dev_driver(struct pci_dev *pdev);
int rust_helper_cpumask_next(int n, const struct cpumask *mask);

/* Block layer: blk-mq, disks, scatterlists (kernel-crate/src/block,
 * scatterlist.rs; the helpers are in block.c). */
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/scatterlist.h>

/* rq_for_each_segment()'s state, for rust_helper_rq_seg_iter_next(). */
struct rust_rq_seg_iter {
	struct bio *bio;
	struct bvec_iter iter;
};

void *rust_helper_blk_mq_rq_to_pdu(struct request *rq);
struct request *rust_helper_blk_mq_rq_from_pdu(void *pdu);
struct request *rust_helper_blk_mq_tag_to_rq(struct blk_mq_tag_set *set,
					     unsigned int hctx_idx,
					     unsigned int tag);
unsigned int rust_helper_req_op(struct request *rq);
u64 rust_helper_blk_rq_pos(struct request *rq);
unsigned int rust_helper_blk_rq_bytes(struct request *rq);
unsigned int rust_helper_blk_rq_nr_phys_segments(struct request *rq);
int rust_helper_rq_tag(struct request *rq);
unsigned int rust_helper_rq_hctx_idx(struct request *rq);
void *rust_helper_rq_queuedata(struct request *rq);
struct blk_mq_tag_set *rust_helper_rq_tag_set(struct request *rq);
bool rust_helper_blk_should_fake_timeout(struct request *rq);
void rust_helper_blk_mq_quiesce_tagset(struct blk_mq_tag_set *set,
				       bool quiesce);
int rust_helper_blk_rq_map_sg(struct request *rq, struct scatterlist *sgl);
void *rust_helper_hctx_driver_data(struct blk_mq_hw_ctx *hctx);
void rust_helper_hctx_set_driver_data(struct blk_mq_hw_ctx *hctx, void *data);
unsigned int rust_helper_hctx_queue_num(struct blk_mq_hw_ctx *hctx);
void *rust_helper_hctx_queuedata(struct blk_mq_hw_ctx *hctx);
void rust_helper_rq_seg_iter_init(struct request *rq,
				  struct rust_rq_seg_iter *it);
bool rust_helper_rq_seg_iter_next(struct rust_rq_seg_iter *it,
				  struct page **page, unsigned int *offset,
				  unsigned int *len);
struct request_queue *rust_helper_disk_queue(struct gendisk *disk);
void rust_helper_disk_set_fops(struct gendisk *disk,
			       const struct block_device_operations *fops);
char *rust_helper_disk_name(struct gendisk *disk);
int rust_helper_add_disk(struct gendisk *disk);
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
void rust_helper_blk_queue_set_nonrot(struct request_queue *q);
#endif
dma_addr_t rust_helper_sg_dma_address(struct scatterlist *sg);
unsigned int rust_helper_sg_dma_len(struct scatterlist *sg);
struct page *rust_helper_sg_page(struct scatterlist *sg);
unsigned int rust_helper_nr_cpu_ids(void);
bool rust_helper_rq_has_data(struct request *rq);
struct bio *rust_helper_rq_first_bio(struct request *rq);
struct bio *rust_helper_bio_next(struct bio *bio);
u64 rust_helper_bio_sector(struct bio *bio);
unsigned int rust_helper_bio_size(struct bio *bio);
void rust_helper_blk_queue_discard_granularity(struct request_queue *q,
					       unsigned int bytes);
void rust_helper_disk_set_private_data(struct gendisk *disk, void *data);
void *rust_helper_disk_private_data(struct gendisk *disk);
struct gendisk *rust_helper_bdev_disk(struct block_device *bdev);

/* Red-black trees (kernel-crate/src/rbtree.rs). */
#include <linux/rbtree.h>

void rust_helper_rb_link_node(struct rb_node *node, struct rb_node *parent,
			      struct rb_node **rb_link);

/* LSM hooks (kernel-crate/src/security.rs): without CONFIG_SECURITY (the
 * debug kernel) they are static inlines that return 0. */
#include <linux/security.h>

int rust_helper_security_binder_set_context_mgr(const struct cred *mgr);
int rust_helper_security_binder_transaction(const struct cred *from,
					    const struct cred *to);
int rust_helper_security_binder_transfer_binder(const struct cred *from,
						const struct cred *to);
int rust_helper_security_binder_transfer_file(const struct cred *from,
					      const struct cred *to,
					      struct file *file);

/* Shrinkers (kernel-crate/src/shrinker.rs). */
#include <linux/shrinker.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
struct shrinker *rust_helper_shrinker_alloc(const char *name);
#else
int rust_helper_register_shrinker(struct shrinker *shrinker, const char *name);
#endif

/* The registry of kthreads and registrations (kernel-crate/src/unload.rs). */
extern struct mutex rust_unload_mutex;
void rust_helper_unload_warn(const char *type, size_t len, const char *action);
void rust_helper_warn_misuse(const char *what);
void rust_helper_kmemleak_not_leak(const void *ptr);
bool rust_helper_try_module_get(struct module *module);

#endif
