// SPDX-License-Identifier: GPL-2.0
/*
 * Files and user memory (kernel-crate/src/file.rs, user.rs).
 */
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/uaccess.h>

#include "helpers.h"

unsigned long rust_helper_copy_from_user(void *to, const void __user *from,
					 unsigned long n)
{
	return copy_from_user(to, from, n);
}

unsigned long rust_helper_copy_to_user(void __user *to, const void *from,
				       unsigned long n)
{
	return copy_to_user(to, from, n);
}

void rust_helper_poll_wait(struct file *filp, wait_queue_head_t *head,
			   poll_table *p)
{
	poll_wait(filp, head, p);
}

dev_t rust_helper_file_rdev(struct file *file)
{
	return file_inode(file)->i_rdev;
}
