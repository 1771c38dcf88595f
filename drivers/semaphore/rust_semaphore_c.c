// SPDX-License-Identifier: GPL-2.0
/*
 * The C twin of rust_semaphore (src/lib.rs): the same misc device, written
 * as a C driver would be, for comparing the two line by line and size by
 * size. Built by the same Kbuild run as the Rust module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <linux/wait.h>

/* ANCHOR: ioctls */
#define IOCTL_GET_READ_COUNT _IOR('c', 1, u64)
#define IOCTL_SET_READ_COUNT _IOW('c', 1, u64)
/* ANCHOR_END: ioctls */

/* ANCHOR: shared */
struct semaphore_state {
	struct kref ref;
	struct miscdevice miscdev;
	wait_queue_head_t changed;
	struct mutex mutex;
	size_t count;
};

struct file_state {
	atomic64_t read_count;
	struct semaphore_state *shared;
};
/* ANCHOR_END: shared */

static struct semaphore_state *device;

static void semaphore_state_release(struct kref *ref)
{
	struct semaphore_state *state =
		container_of(ref, struct semaphore_state, ref);

	kfree(state);
}

static int semaphore_open(struct inode *nodp, struct file *filp)
{
	struct semaphore_state *shared =
		container_of(filp->private_data, struct semaphore_state, miscdev);
	struct file_state *state;

	state = kzalloc(sizeof(*state), GFP_KERNEL);
	if (!state)
		return -ENOMEM;
	kref_get(&shared->ref);
	state->shared = shared;
	atomic64_set(&state->read_count, 0);
	filp->private_data = state;
	return 0;
}

static int semaphore_release(struct inode *nodp, struct file *filp)
{
	struct file_state *state = filp->private_data;

	kref_put(&state->shared->ref, semaphore_state_release);
	kfree(state);
	return 0;
}

/* ANCHOR: consume */
static int semaphore_consume(struct semaphore_state *state, bool nonblocking)
{
	DEFINE_WAIT(wait);

	mutex_lock(&state->mutex);
	while (state->count == 0) {
		if (nonblocking) {
			mutex_unlock(&state->mutex);
			return -EAGAIN;
		}
		prepare_to_wait(&state->changed, &wait, TASK_INTERRUPTIBLE);
		mutex_unlock(&state->mutex);
		schedule();
		finish_wait(&state->changed, &wait);
		if (signal_pending(current))
			return -EINTR;
		mutex_lock(&state->mutex);
	}
	state->count--;
	mutex_unlock(&state->mutex);
	return 0;
}
/* ANCHOR_END: consume */

/* ANCHOR: read_write */
static ssize_t semaphore_read(struct file *filp, char __user *buffer,
			      size_t count, loff_t *ppos)
{
	struct file_state *state = filp->private_data;
	char c = 0;
	int ret;

	if (count == 0 || *ppos > 0)
		return 0;
	/* Copy first: a bad pointer must not cost a count. */
	if (copy_to_user(buffer, &c, sizeof(c)))
		return -EFAULT;
	ret = semaphore_consume(state->shared, filp->f_flags & O_NONBLOCK);
	if (ret)
		return ret;
	atomic64_add(1, &state->read_count);
	*ppos += 1;
	return 1;
}

static ssize_t semaphore_write(struct file *filp, const char __user *buffer,
			       size_t count, loff_t *ppos)
{
	struct file_state *state = filp->private_data;
	struct semaphore_state *shared = state->shared;
	char chunk[64];
	size_t done = 0;

	/* Read (and drop) what was written: a bad pointer is EFAULT. */
	while (done < count) {
		size_t len = min(count - done, sizeof(chunk));

		if (copy_from_user(chunk, buffer + done, len))
			return -EFAULT;
		done += len;
	}
	mutex_lock(&shared->mutex);
	shared->count += count;
	if (shared->count < count) /* saturate, as the Rust driver does */
		shared->count = SIZE_MAX;
	mutex_unlock(&shared->mutex);
	wake_up_all(&shared->changed);
	*ppos += count;
	return count;
}
/* ANCHOR_END: read_write */

/* ANCHOR: poll */
static __poll_t semaphore_poll(struct file *filp, poll_table *wait)
{
	struct file_state *state = filp->private_data;
	struct semaphore_state *shared = state->shared;
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;

	/* Register before looking: a write in between then wakes us. */
	poll_wait(filp, &shared->changed, wait);
	mutex_lock(&shared->mutex);
	if (shared->count > 0)
		mask |= EPOLLIN | EPOLLRDNORM;
	mutex_unlock(&shared->mutex);
	return mask;
}
/* ANCHOR_END: poll */

/* ANCHOR: ioctl */
static long semaphore_ioctl(struct file *filp, unsigned int cmd,
			    unsigned long arg)
{
	struct file_state *state = filp->private_data;
	void __user *buffer = (void __user *)arg;
	u64 value;

	switch (cmd) {
	case IOCTL_GET_READ_COUNT:
		value = atomic64_read(&state->read_count);
		if (copy_to_user(buffer, &value, sizeof(value)))
			return -EFAULT;
		return 0;
	case IOCTL_SET_READ_COUNT:
		if (copy_from_user(&value, buffer, sizeof(value)))
			return -EFAULT;
		atomic64_set(&state->read_count, value);
		return 0;
	default:
		return -ENOTTY;
	}
}
/* ANCHOR_END: ioctl */

static const struct file_operations semaphore_fops = {
	.owner = THIS_MODULE,
	.open = semaphore_open,
	.release = semaphore_release,
	.read = semaphore_read,
	.write = semaphore_write,
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
	/* 6.12 removed no_llseek: no .llseek means no seeking there. */
	.llseek = no_llseek,
#endif
	.poll = semaphore_poll,
	.unlocked_ioctl = semaphore_ioctl,
	.compat_ioctl = semaphore_ioctl,
};

/* ANCHOR: init */
static int __init semaphore_init(void)
{
	int ret;
	struct semaphore_state *state;

	pr_info("C semaphore sample (init)\n");
	state = kzalloc(sizeof(*state), GFP_KERNEL);
	if (!state)
		return -ENOMEM;
	mutex_init(&state->mutex);
	kref_init(&state->ref);
	init_waitqueue_head(&state->changed);
	state->miscdev.fops = &semaphore_fops;
	state->miscdev.minor = MISC_DYNAMIC_MINOR;
	state->miscdev.name = "rust_semaphore_c";
	state->miscdev.mode = 0666;
	ret = misc_register(&state->miscdev);
	if (ret < 0) {
		kfree(state);
		return ret;
	}
	device = state;
	return 0;
}
/* ANCHOR_END: init */

static void __exit semaphore_exit(void)
{
	pr_info("C semaphore sample (exit)\n");
	misc_deregister(&device->miscdev);
	kref_put(&device->ref, semaphore_state_release);
}

module_init(semaphore_init);
module_exit(semaphore_exit);

MODULE_AUTHOR("Rust kernel workbook");
MODULE_DESCRIPTION("C semaphore sample");
MODULE_LICENSE("GPL");
