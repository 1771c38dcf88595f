// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers for the block layer abstractions (kernel-crate/src/block,
 * scatterlist.rs): blk-mq's inline functions and the fields of its structs
 * that the Rust side reads, so that bindgen only has to see the tag set,
 * the ops tables and `struct scatterlist`.
 */
#include <linux/bio.h>
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/cpumask.h>
#include <linux/highmem.h>
#include <linux/scatterlist.h>

#include "helpers.h"

void *rust_helper_blk_mq_rq_to_pdu(struct request *rq)
{
	return blk_mq_rq_to_pdu(rq);
}

struct request *rust_helper_blk_mq_rq_from_pdu(void *pdu)
{
	return blk_mq_rq_from_pdu(pdu);
}

/* NULL for a tag out of range or a tag without a request. */
struct request *rust_helper_blk_mq_tag_to_rq(struct blk_mq_tag_set *set,
					     unsigned int hctx_idx,
					     unsigned int tag)
{
	if (hctx_idx >= set->nr_hw_queues || !set->tags || !set->tags[hctx_idx])
		return NULL;
	return blk_mq_tag_to_rq(set->tags[hctx_idx], tag);
}

unsigned int rust_helper_req_op(struct request *rq)
{
	return req_op(rq);
}

u64 rust_helper_blk_rq_pos(struct request *rq)
{
	return blk_rq_pos(rq);
}

unsigned int rust_helper_blk_rq_bytes(struct request *rq)
{
	return blk_rq_bytes(rq);
}

unsigned int rust_helper_blk_rq_nr_phys_segments(struct request *rq)
{
	return blk_rq_nr_phys_segments(rq);
}

int rust_helper_rq_tag(struct request *rq)
{
	return rq->tag;
}

unsigned int rust_helper_rq_hctx_idx(struct request *rq)
{
	return rq->mq_hctx ? rq->mq_hctx->queue_num : 0;
}

void *rust_helper_rq_queuedata(struct request *rq)
{
	return rq->q->queuedata;
}

struct blk_mq_tag_set *rust_helper_rq_tag_set(struct request *rq)
{
	return rq->q->tag_set;
}

/*
 * 6.1 has no blk_mq_quiesce_tagset or blk_mq_unquiesce_tagset (6.2 has):
 * every queue that shares the tag set, under the set's tag_list_lock as
 * 6.2 does it; `quiesce` false unquiesces.
 */
void rust_helper_blk_mq_quiesce_tagset(struct blk_mq_tag_set *set,
				       bool quiesce)
{
	struct request_queue *q;

	mutex_lock(&set->tag_list_lock);
	list_for_each_entry(q, &set->tag_list, tag_set_list) {
		if (quiesce)
			blk_mq_quiesce_queue(q);
		else
			blk_mq_unquiesce_queue(q);
	}
	mutex_unlock(&set->tag_list_lock);
}

/*
 * fail_io_timeout: true if this completion is to be lost (the disk's
 * io-timeout-fail is set and the fault attribute fires). Always false on
 * a kernel without CONFIG_FAIL_IO_TIMEOUT.
 */
bool rust_helper_blk_should_fake_timeout(struct request *rq)
{
	return blk_should_fake_timeout(rq->q);
}

int rust_helper_blk_rq_map_sg(struct request *rq, struct scatterlist *sgl)
{
	return blk_rq_map_sg(rq->q, rq, sgl);
}

void *rust_helper_hctx_driver_data(struct blk_mq_hw_ctx *hctx)
{
	return hctx->driver_data;
}

void rust_helper_hctx_set_driver_data(struct blk_mq_hw_ctx *hctx, void *data)
{
	hctx->driver_data = data;
}

unsigned int rust_helper_hctx_queue_num(struct blk_mq_hw_ctx *hctx)
{
	return hctx->queue_num;
}

void *rust_helper_hctx_queuedata(struct blk_mq_hw_ctx *hctx)
{
	return hctx->queue->queuedata;
}

/*
 * rq_for_each_segment() as an iterator: single-page segments of every bio
 * of the request. A request without data (flush, discard, write zeroes)
 * has no segments.
 */
void rust_helper_rq_seg_iter_init(struct request *rq,
				  struct rust_rq_seg_iter *it)
{
	it->bio = (rq->bio && bio_has_data(rq->bio)) ? rq->bio : NULL;
	if (it->bio)
		it->iter = it->bio->bi_iter;
}

bool rust_helper_rq_seg_iter_next(struct rust_rq_seg_iter *it,
				  struct page **page, unsigned int *offset,
				  unsigned int *len)
{
	while (it->bio) {
		if (it->iter.bi_size) {
			struct bio_vec bv = bio_iter_iovec(it->bio, it->iter);

			*page = bv.bv_page;
			*offset = bv.bv_offset;
			*len = bv.bv_len;
			bio_advance_iter_single(it->bio, &it->iter, bv.bv_len);
			return true;
		}
		it->bio = it->bio->bi_next;
		if (it->bio)
			it->iter = it->bio->bi_iter;
	}
	return false;
}

struct request_queue *rust_helper_disk_queue(struct gendisk *disk)
{
	return disk->queue;
}

void rust_helper_disk_set_fops(struct gendisk *disk,
			       const struct block_device_operations *fops)
{
	disk->fops = fops;
}

char *rust_helper_disk_name(struct gendisk *disk)
{
	return disk->disk_name;
}

int rust_helper_add_disk(struct gendisk *disk)
{
	return add_disk(disk);
}

/* 6.11+: a queue feature given at allocation (BLK_FEAT_ROTATIONAL). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
void rust_helper_blk_queue_set_nonrot(struct request_queue *q)
{
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
}
#endif

dma_addr_t rust_helper_sg_dma_address(struct scatterlist *sg)
{
	return sg_dma_address(sg);
}

unsigned int rust_helper_sg_dma_len(struct scatterlist *sg)
{
	return sg_dma_len(sg);
}

struct page *rust_helper_sg_page(struct scatterlist *sg)
{
	return sg_page(sg);
}

unsigned int rust_helper_nr_cpu_ids(void)
{
	return nr_cpu_ids;
}

/*
 * Whether the request carries data pages (a read or a write): a discard or
 * write-zeroes request has bios with a size but no pages, which
 * blk_rq_map_sg and rq_for_each_segment would read as pages.
 */
bool rust_helper_rq_has_data(struct request *rq)
{
	return rq->bio && bio_has_data(rq->bio);
}

/* The bios of a request, for discard ranges (__rq_for_each_bio). */
struct bio *rust_helper_rq_first_bio(struct request *rq)
{
	return rq->bio;
}

struct bio *rust_helper_bio_next(struct bio *bio)
{
	return bio->bi_next;
}

u64 rust_helper_bio_sector(struct bio *bio)
{
	return bio->bi_iter.bi_sector;
}

unsigned int rust_helper_bio_size(struct bio *bio)
{
	return bio->bi_iter.bi_size;
}

void rust_helper_blk_queue_discard_granularity(struct request_queue *q,
					       unsigned int bytes)
{
	q->limits.discard_granularity = bytes;
}

void rust_helper_disk_set_private_data(struct gendisk *disk, void *data)
{
	disk->private_data = data;
}

void *rust_helper_disk_private_data(struct gendisk *disk)
{
	return disk->private_data;
}

struct gendisk *rust_helper_bdev_disk(struct block_device *bdev)
{
	return bdev->bd_disk;
}
