// SPDX-License-Identifier: GPL-2.0
/*
 * Char device regions (kernel-crate/src/chrdev.rs).
 */
#include <linux/cdev.h>
#include <linux/fs.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/mutex.h>

#include "helpers.h"

/*
 * A cdev that owns its memory through its kobject (cdev_alloc: the last
 * kobject_put frees it, in the core's release, never in module code), set
 * up as cdev_init does, with the owner that cdev_get pins for each open.
 */
struct cdev *rust_helper_cdev_alloc(const struct file_operations *fops,
				    struct module *owner)
{
	struct cdev *cdev = cdev_alloc();

	if (cdev) {
		cdev->ops = fops;
		cdev->owner = owner;
	}
	return cdev;
}

/* Drops the reference of cdev_alloc on a cdev that was never added. */
void rust_helper_cdev_put(struct cdev *cdev)
{
	kobject_put(&cdev->kobj);
}

/*
 * Serialises the opens of this module's char device regions with their
 * unregistration (chrdev.rs): this file is compiled into each module that
 * uses it, so each has its own, as the misc devices share misc_mtx.
 */
static DEFINE_MUTEX(rust_chrdev_open_mutex);

void rust_helper_chrdev_open_lock(void)
{
	mutex_lock(&rust_chrdev_open_mutex);
}

void rust_helper_chrdev_open_unlock(void)
{
	mutex_unlock(&rust_chrdev_open_mutex);
}
