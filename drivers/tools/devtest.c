// SPDX-License-Identifier: GPL-2.0
/*
 * devtest: the system calls that busybox cannot make, for the device labs'
 * guest steps. Built statically on the host (the guest has no libc) by the
 * labs' Makefiles and shipped to /lab/devtest (lab.toml `programs`).
 *
 *   devtest read-fault DEV        read(2) into an unmapped page
 *   devtest write-fault DEV       write(2) from an unmapped page
 *   devtest huge DEV              read and write with a length near SIZE_MAX
 *   devtest ioctl DEV CMD         ioctl(2) with command CMD (hex), no argument
 *   devtest ioctl-u64 DEV CMD     ioctl(2) with a pointer to a u64; prints it
 *   devtest ioctl-fault DEV CMD   ioctl(2) with an unmapped argument pointer
 *   devtest hold DEV CMD          run `sh -c CMD` while DEV is open
 *   devtest blocks DEV N          N processes pwrite and pread their own
 *                                 64-byte block at once; checks every byte
 *   devtest sem DEV N COUNT       N writers add COUNT each, N readers take
 *                                 COUNT each, all at once: nothing is lost
 *   devtest poll DEV MS           poll(2) for POLLIN with a time-out of MS
 *                                 milliseconds; says whether DEV became
 *                                 readable, and whether before the time-out
 *   devtest ioctl-roundtrip DEV   the semaphore's read count through its
 *                                 ioctls on one open: GET after two reads,
 *                                 SET then GET, GET after one more read, and
 *                                 GET on a second open (its own count)
 *   devtest fileops DEV           every other file operation, with hostile
 *                                 arguments, on an O_NONBLOCK open of a
 *                                 semaphore whose count is 0: lseek in every
 *                                 form, pread/pwrite at odd offsets, readv/
 *                                 writev with an unmapped buffer, poll,
 *                                 generic ioctls, mmap, fsync, ftruncate
 *   devtest hostile DEV           the same for a device that holds bytes
 *                                 (empty at the start): writes 10 bytes,
 *                                 then every file operation with hostile
 *                                 arguments on that O_NONBLOCK open: lseek
 *                                 with every whence and extreme offsets,
 *                                 pread/pwrite at, past and far past the
 *                                 capacity (4096), zero lengths and bad
 *                                 pointers, a write whose buffer runs into an
 *                                 unmapped page, readv/writev, ioctls, mmap,
 *                                 fsync, fallocate, poll
 *   devtest append DEV            writes on an O_APPEND open: where they go,
 *                                 where they leave the position
 *   devtest read DEV N            read(2) of N bytes; prints them
 *   devtest read-nonblock DEV N   the same on an O_NONBLOCK open
 *   devtest read-alarm DEV N      the same, with a SIGALRM (handler without
 *                                 SA_RESTART) after 1 s
 *   devtest pollout DEV MS        poll(2) for POLLOUT, as `poll` does POLLIN
 *   devtest stall DEV OP CMD      OP (read or write) of 16 bytes on DEV with
 *                                 a buffer whose page is not there yet
 *                                 (userfaultfd): once the driver waits for it,
 *                                 runs `sh -c CMD` and gives CMD 10 s to finish
 *                                 before the page is supplied; says whether CMD
 *                                 had to wait for the stalled call
 *   devtest churn DEV N ROUNDS    N processes open and close DEV ROUNDS
 *                                 times each (O_TRUNC, O_APPEND, O_NONBLOCK in
 *                                 turn), writing, reading, seeking and polling
 *                                 on each open, all at once
 *
 * Every result is printed as the errno's name, never as a number or a
 * locale-dependent message, so that the snapshots are stable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <unistd.h>

static const char *err_name(int e)
{
	switch (e) {
	case EFAULT: return "EFAULT";
	case EINVAL: return "EINVAL";
	case ENOTTY: return "ENOTTY";
	case EBUSY: return "EBUSY";
	case EAGAIN: return "EAGAIN";
	case ENOSPC: return "ENOSPC";
	case EFBIG: return "EFBIG";
	case ENOMEM: return "ENOMEM";
	case EINTR: return "EINTR";
	case ESPIPE: return "ESPIPE";
	case ENODEV: return "ENODEV";
	case EOVERFLOW: return "EOVERFLOW";
	case EBADF: return "EBADF";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENXIO: return "ENXIO";
	case EIO: return "EIO";
	case ENOSYS: return "ENOSYS";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ERESTART: return "ERESTART";
	case EISDIR: return "EISDIR";
	default: return "other";
	}
}

static void report(const char *what, long ret)
{
	if (ret < 0)
		printf("%s: %s\n", what, err_name(errno));
	else
		printf("%s: %ld\n", what, ret);
}

/* "ioctl(_IOR('c', 1, 8))": the command decoded, as the driver sees it. */
static const char *ioctl_name(const char *hex)
{
	static char name[64];
	unsigned long cmd = strtoul(hex, NULL, 16);
	unsigned int dir = _IOC_DIR(cmd), type = _IOC_TYPE(cmd);
	const char *macro = dir == (_IOC_READ | _IOC_WRITE) ? "_IOWR" :
			    dir == _IOC_READ ? "_IOR" :
			    dir == _IOC_WRITE ? "_IOW" : "_IO";

	if (dir == _IOC_NONE)
		snprintf(name, sizeof(name), "ioctl(%s('%c', %u))", macro,
			 type, (unsigned int)_IOC_NR(cmd));
	else
		snprintf(name, sizeof(name), "ioctl(%s('%c', %u, %u bytes))",
			 macro, type, (unsigned int)_IOC_NR(cmd),
			 (unsigned int)_IOC_SIZE(cmd));
	return name;
}

static int open_dev(const char *path)
{
	int fd = open(path, O_RDWR);

	if (fd < 0) {
		printf("open %s: %s\n", path, err_name(errno));
		exit(1);
	}
	return fd;
}

/* An address in user space that is certainly not mapped. */
static void *unmapped(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || munmap(p, 4096)) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static int blocks(const char *dev, int n)
{
	int fd = open_dev(dev);
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		if (fork() == 0) {
			char mine[64], back[64];
			int round;

			memset(mine, 'a' + i, sizeof(mine));
			for (round = 0; round < 200; round++) {
				if (pwrite(fd, mine, 64, i * 64) != 64)
					_exit(1);
				if (pread(fd, back, 64, i * 64) != 64 ||
				    memcmp(mine, back, 64))
					_exit(2);
			}
			_exit(0);
		}
	}
	for (i = 0; i < n; i++) {
		int status;

		wait(&status);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	for (i = 0; i < n; i++) {
		char back[64];
		int j;

		if (pread(fd, back, 64, i * 64) != 64)
			bad++;
		for (j = 0; j < 64; j++)
			if (back[j] != 'a' + i)
				bad++;
	}
	printf("blocks: %d processes, %s\n", n, bad ? "data lost" : "all data intact");
	return bad != 0;
}

static int sem(const char *dev, int n, int count)
{
	int i, bad = 0;

	for (i = 0; i < 2 * n; i++) {
		if (fork() == 0) {
			int fd = open_dev(dev);
			int k;
			char c = 'x';

			alarm(60); /* a lost increment would block a reader forever */
			for (k = 0; k < count; k++) {
				if (i < n) {
					if (pwrite(fd, &c, 1, 0) != 1)
						_exit(1);
				} else if (pread(fd, &c, 1, 0) != 1) {
					_exit(2);
				}
			}
			_exit(0);
		}
	}
	for (i = 0; i < 2 * n; i++) {
		int status;

		wait(&status);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	printf("sem: %d writers and %d readers x %d: %s\n", n, n, count,
	       bad ? "lost" : "nothing lost");
	return bad != 0;
}

/*
 * Whether DEV is ready for EVENT (POLLIN: "readable", POLLOUT: "writable"),
 * or becomes ready within MS milliseconds.
 */
static int poll_dev(const char *dev, short event, int ms)
{
	struct pollfd p = { .fd = open_dev(dev), .events = event };
	const char *name = event == POLLIN ? "POLLIN" : "POLLOUT";
	const char *ready = event == POLLIN ? "readable" : "writable";
	struct timespec t0, t1;
	long elapsed;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = poll(&p, 1, ms);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	elapsed = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	if (ret < 0) {
		report("poll", ret);
		return 1;
	}
	printf("poll(%s, %d ms): %s%s, %s\n", name, ms,
	       (p.revents & event) ? "" : "not ", ready,
	       elapsed < ms ? "before the time-out" : "at the time-out");
	return 0;
}

/* The events of a poll(2) with a time-out of 0, by name. */
static void report_poll(const char *what, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM };
	int ret = poll(&p, 1, 0);

	if (ret < 0) {
		report(what, ret);
		return;
	}
	printf("%s:%s%s%s%s%s%s%s\n", what,
	       p.revents & POLLIN ? " POLLIN" : "",
	       p.revents & POLLRDNORM ? " POLLRDNORM" : "",
	       p.revents & POLLOUT ? " POLLOUT" : "",
	       p.revents & POLLWRNORM ? " POLLWRNORM" : "",
	       p.revents & POLLERR ? " POLLERR" : "",
	       p.revents & POLLHUP ? " POLLHUP" : "",
	       p.revents ? "" : " nothing");
}

/* _IOR('c', 1, u64) and _IOW('c', 1, u64): the semaphore's ioctls. */
#define SEM_GET_READ_COUNT 0x80086301UL
#define SEM_SET_READ_COUNT 0x40086301UL

static void report_count(const char *what, int fd)
{
	uint64_t value = 0;
	long ret = ioctl(fd, SEM_GET_READ_COUNT, &value);

	if (ret < 0)
		report(what, ret);
	else
		printf("%s: %llu\n", what, (unsigned long long)value);
}

static int ioctl_roundtrip(const char *dev)
{
	int fd = open_dev(dev), other;
	uint64_t value = 42;
	char c;

	report("write(2)", write(fd, "xy", 2));
	report("pread(1, offset 0)", pread(fd, &c, 1, 0));
	report("pread(1, offset 0)", pread(fd, &c, 1, 0));
	report_count("GET after two reads", fd);
	report("SET 42", ioctl(fd, SEM_SET_READ_COUNT, &value));
	report_count("GET after SET 42", fd);
	report("write(1)", write(fd, "z", 1));
	report("pread(1, offset 0)", pread(fd, &c, 1, 0));
	report_count("GET after one more read", fd);
	other = open_dev(dev);
	report_count("GET on another open", other);
	close(other);
	close(fd);
	return 0;
}

static int fileops(const char *dev)
{
	int fd = open(dev, O_RDWR | O_NONBLOCK);
	char c, two[2];
	struct iovec iov[2];
	void *map;

	if (fd < 0) {
		printf("open: %s\n", err_name(errno));
		return 1;
	}
	report_poll("poll(empty)", fd);
	report("read(1, O_NONBLOCK, empty)", read(fd, &c, 1));
	report("lseek(0, SEEK_SET)", lseek(fd, 0, SEEK_SET));
	report("lseek(-1, SEEK_SET)", lseek(fd, -1, SEEK_SET));
	report("lseek(1, SEEK_SET)", lseek(fd, 1, SEEK_SET));
	report("lseek(LLONG_MAX, SEEK_CUR)", lseek(fd, INT64_MAX, SEEK_CUR));
	report("lseek(LLONG_MIN, SEEK_CUR)", lseek(fd, INT64_MIN, SEEK_CUR));
	report("lseek(0, SEEK_END)", lseek(fd, 0, SEEK_END));
	report("lseek(0, SEEK_DATA)", lseek(fd, 0, SEEK_DATA));
	report("lseek(0, SEEK_HOLE)", lseek(fd, 0, SEEK_HOLE));
	report("lseek(0, whence 7)", lseek(fd, 0, 7));
	report("pwrite(2, offset 5)", pwrite(fd, "ab", 2, 5));
	report_poll("poll(count 2)", fd);
	report("pread(1, offset 1)", pread(fd, &c, 1, 1));
	report("pread(1, offset 0)", pread(fd, &c, 1, 0));
	report("pread(1, offset -1)", pread(fd, &c, 1, -1));
	report("pwrite(1, offset LLONG_MAX)", pwrite(fd, "x", 1, INT64_MAX));
	iov[0] = (struct iovec){ .iov_base = two, .iov_len = 1 };
	iov[1] = (struct iovec){ .iov_base = two + 1, .iov_len = 1 };
	report("readv(1 + 1, count 1)", readv(fd, iov, 2));
	report("read(1, after the first byte)", read(fd, &c, 1));
	report("read(0)", read(fd, &c, 0));
	iov[0] = (struct iovec){ .iov_base = "x", .iov_len = 1 };
	iov[1] = (struct iovec){ .iov_base = unmapped(), .iov_len = 1 };
	report("writev(1 + unmapped 1)", writev(fd, iov, 2));
	report("write(unmapped, 0)", write(fd, unmapped(), 0));
	report_poll("poll(count 1)", fd);
	report("pread(1, offset 0, count 1)", pread(fd, &c, 1, 0));
	report("pread(1, offset 0, count 0)", pread(fd, &c, 1, 0));
	report_poll("poll(count 0)", fd);
	report("ioctl(FIONREAD)", ioctl(fd, FIONREAD, &c));
	report("ioctl(FIONBIO)", ioctl(fd, FIONBIO, &(int){ 1 }));
	report("ioctl(FIOQSIZE)", ioctl(fd, FIOQSIZE, two));
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	report("mmap", map == MAP_FAILED ? -1 : 0);
	if (map != MAP_FAILED)
		munmap(map, 4096);
	report("fsync", fsync(fd));
	report("ftruncate(0)", ftruncate(fd, 0));
	report("fcntl(F_SETFL, O_ASYNC)", fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK));
	report("close", close(fd));
	return 0;
}

/* A read's result and, when it read anything, the bytes (escaped). */
static void report_read(const char *what, long ret, const char *buf)
{
	long i;

	if (ret <= 0) {
		report(what, ret);
		return;
	}
	printf("%s: %ld \"", what, ret);
	for (i = 0; i < ret; i++) {
		unsigned char c = buf[i];

		if (c == '\n')
			printf("\\n");
		else if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c >= ' ' && c < 127)
			putchar(c);
		else
			printf("\\%o", c);
	}
	printf("\"\n");
}

/*
 * Two pages, the second unmapped: a buffer that starts `before` bytes
 * before the end of the first runs into the hole. The mapped part holds
 * 'F's.
 */
static char *half_mapped(size_t before)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || munmap(p + 4096, 4096)) {
		perror("mmap");
		exit(1);
	}
	memset(p, 'F', 4096);
	return p + 4096 - before;
}

#define LSEEK(off, whence, name) \
	report("lseek(" #off ", " name ")", lseek(fd, off, whence))

static int hostile(const char *dev)
{
	int fd = open(dev, O_RDWR | O_NONBLOCK), ro;
	char buf[64], big[512];
	struct iovec iov[2];
	void *map;
	const off_t tera = (off_t)1 << 40;
	/* volatile: the compiler rightly warns about a null buffer. */
	void *volatile null = NULL;

	if (fd < 0) {
		printf("open: %s\n", err_name(errno));
		return 1;
	}
	report("write(\"0123456789\")", write(fd, "0123456789", 10));
	LSEEK(0, SEEK_CUR, "SEEK_CUR");
	LSEEK(0, SEEK_SET, "SEEK_SET");
	report_read("read(4)", read(fd, buf, 4), buf);
	LSEEK(3, SEEK_CUR, "SEEK_CUR");
	LSEEK(-8, SEEK_CUR, "SEEK_CUR");
	LSEEK(LLONG_MAX, SEEK_CUR, "SEEK_CUR");
	LSEEK(LLONG_MIN, SEEK_CUR, "SEEK_CUR");
	LSEEK(0, SEEK_CUR, "SEEK_CUR");
	LSEEK(-1, SEEK_SET, "SEEK_SET");
	LSEEK(LLONG_MIN, SEEK_SET, "SEEK_SET");
	LSEEK(LLONG_MAX, SEEK_SET, "SEEK_SET");
	LSEEK(4097, SEEK_SET, "SEEK_SET");
	LSEEK(4096, SEEK_SET, "SEEK_SET");
	report_read("read(4) at 4096", read(fd, buf, 4), buf);
	LSEEK(0, SEEK_END, "SEEK_END");
	LSEEK(-10, SEEK_END, "SEEK_END");
	LSEEK(-11, SEEK_END, "SEEK_END");
	LSEEK(LLONG_MAX, SEEK_END, "SEEK_END");
	LSEEK(LLONG_MIN, SEEK_END, "SEEK_END");
	LSEEK(4086, SEEK_END, "SEEK_END");
	LSEEK(4087, SEEK_END, "SEEK_END");
	LSEEK(0, SEEK_DATA, "SEEK_DATA");
	LSEEK(9, SEEK_DATA, "SEEK_DATA");
	LSEEK(10, SEEK_DATA, "SEEK_DATA");
	LSEEK(-1, SEEK_DATA, "SEEK_DATA");
	LSEEK(LLONG_MAX, SEEK_DATA, "SEEK_DATA");
	LSEEK(3, SEEK_HOLE, "SEEK_HOLE");
	LSEEK(10, SEEK_HOLE, "SEEK_HOLE");
	LSEEK(0, 5, "whence 5");
	LSEEK(0, -1, "whence -1");
	LSEEK(0, SEEK_CUR, "SEEK_CUR");
	report_read("pread(4, offset 2)", pread(fd, buf, 4, 2), buf);
	report_read("pread(4, offset 8)", pread(fd, buf, 4, 8), buf);
	report_read("pread(4, offset 4096)", pread(fd, buf, 4, 4096), buf);
	report_read("pread(4, offset 2^40)", pread(fd, buf, 4, tera), buf);
	report_read("pread(4, offset LLONG_MAX-4)", pread(fd, buf, 4, LLONG_MAX - 4), buf);
	report_read("pread(4, offset LLONG_MAX)", pread(fd, buf, 4, LLONG_MAX), buf);
	report_read("pread(4, offset -1)", pread(fd, buf, 4, -1), buf);
	report("pwrite(\"ab\", offset 12)", pwrite(fd, "ab", 2, 12));
	report_read("pread(16, offset 8)", pread(fd, buf, 16, 8), buf);
	report("pwrite(\"x\", offset 4095)", pwrite(fd, "x", 1, 4095));
	report("pwrite(\"yz\", offset 4095)", pwrite(fd, "yz", 2, 4095));
	report("pwrite(\"x\", offset 4096)", pwrite(fd, "x", 1, 4096));
	report("pwrite(\"x\", offset 2^40)", pwrite(fd, "x", 1, tera));
	report("pwrite(\"x\", offset LLONG_MAX)", pwrite(fd, "x", 1, LLONG_MAX));
	report("pwrite(0 bytes, offset 2^40)", pwrite(fd, "x", 0, tera));
	report("pwrite(\"x\", offset -1)", pwrite(fd, "x", 1, -1));
	LSEEK(0, SEEK_CUR, "SEEK_CUR");
	LSEEK(0, SEEK_END, "SEEK_END");
	report("read(NULL, 0)", read(fd, null, 0));
	report("write(NULL, 0)", write(fd, null, 0));
	report("read(unmapped, 0)", read(fd, unmapped(), 0));
	report("write(unmapped, 0)", write(fd, unmapped(), 0));
	LSEEK(0, SEEK_SET, "SEEK_SET");
	report("read(NULL, 16)", read(fd, null, 16));
	report("write(NULL, 16)", write(fd, null, 16));
	LSEEK(0, SEEK_CUR, "SEEK_CUR");
	/* 300 bytes of 'F' of which the last 44 are not mapped. */
	report("write(300, last 44 unmapped)", write(fd, half_mapped(256), 300));
	LSEEK(0, SEEK_CUR, "SEEK_CUR");
	report_read("pread(4, offset 0)", pread(fd, buf, 4, 0), buf);
	report("pread(512, offset 0), how much there is", pread(fd, big, 512, 0));
	LSEEK(0, SEEK_END, "SEEK_END");
	LSEEK(0, SEEK_SET, "SEEK_SET");
	iov[0] = (struct iovec){ .iov_base = buf, .iov_len = 2 };
	iov[1] = (struct iovec){ .iov_base = unmapped(), .iov_len = 2 };
	report_read("readv(2 + unmapped 2)", readv(fd, iov, 2), buf);
	iov[0] = (struct iovec){ .iov_base = "wv", .iov_len = 2 };
	report("writev(\"wv\" + unmapped 2)", writev(fd, iov, 2));
	LSEEK(0, SEEK_CUR, "SEEK_CUR");
	report_read("pread(8, offset 0)", pread(fd, buf, 8, 0), buf);
	report("ioctl(_IO('S', 99))", ioctl(fd, _IO('S', 99), 0));
	report("ioctl(_IOR('S', 1, 8 bytes), unmapped)", ioctl(fd, _IOR('S', 1, uint64_t), unmapped()));
	report("ioctl(FIONREAD, unmapped)", ioctl(fd, FIONREAD, unmapped()));
	report("ioctl(FIONBIO)", ioctl(fd, FIONBIO, &(int){ 1 }));
	/* 0x5301, lab 07's SCRATCH_CLEAR, through an open for reading only. */
	ro = open(dev, O_RDONLY | O_NONBLOCK);
	report("ioctl(_IO('S', 1)), O_RDONLY open", ioctl(ro, _IO('S', 1), 0));
	close(ro);
	report_read("pread(8, offset 0)", pread(fd, buf, 8, 0), buf);
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	report("mmap", map == MAP_FAILED ? -1 : 0);
	if (map != MAP_FAILED)
		munmap(map, 4096);
	report("fsync", fsync(fd));
	report("fdatasync", fdatasync(fd));
	report("ftruncate(0)", ftruncate(fd, 0));
	report("fallocate(0, 4096)", fallocate(fd, 0, 0, 4096));
	report_poll("poll", fd);
	report("close", close(fd));
	return 0;
}

/* O_APPEND: where writes go and where they leave the position. */
static int append(const char *dev)
{
	int fd = open(dev, O_RDWR | O_APPEND);
	char buf[64];

	if (fd < 0) {
		printf("open: %s\n", err_name(errno));
		return 1;
	}
	report("lseek(0, SEEK_CUR)", lseek(fd, 0, SEEK_CUR));
	report("write(\"xyz\")", write(fd, "xyz", 3));
	report("lseek(0, SEEK_CUR)", lseek(fd, 0, SEEK_CUR));
	report("lseek(0, SEEK_SET)", lseek(fd, 0, SEEK_SET));
	report("write(\"!\")", write(fd, "!", 1));
	report("lseek(0, SEEK_CUR)", lseek(fd, 0, SEEK_CUR));
	report_read("read(8)", read(fd, buf, 8), buf);
	report("pwrite(\"P\", offset 0)", pwrite(fd, "P", 1, 0));
	report("lseek(0, SEEK_CUR)", lseek(fd, 0, SEEK_CUR));
	report_read("pread(64, offset 0)", pread(fd, buf, 64, 0), buf);
	close(fd);
	return 0;
}

static int read_dev(const char *dev, int n, int flags, int alarm_after)
{
	int fd = open(dev, O_RDWR | flags);
	char buf[256];
	long ret;

	if (fd < 0) {
		printf("open: %s\n", err_name(errno));
		return 1;
	}
	if (n > (int)sizeof(buf))
		n = sizeof(buf);
	if (alarm_after)
		alarm(alarm_after);
	ret = read(fd, buf, n);
	snprintf(buf + 128, 64, "read(%d%s)", n,
		 flags & O_NONBLOCK ? ", O_NONBLOCK" :
		 alarm_after ? ", SIGALRM after 1 s" : "");
	report_read(buf + 128, ret, buf);
	close(fd);
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

struct stalled {
	int fd;
	char *page;
	int write;
	long ret;
	int err;
	int returned;
};

static void *stalled_call(void *arg)
{
	struct stalled *s = arg;

	s->ret = s->write ? write(s->fd, s->page, 16) : read(s->fd, s->page, 16);
	s->err = errno;
	__atomic_store_n(&s->returned, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Waits up to MS milliseconds for the page fault of S's call on UFFD;
 * whether it came. A call that returned did not fault (a faulting one
 * waits for the page): no need to wait on then.
 */
static int wait_for_fault(int uffd, struct stalled *s, int ms)
{
	struct pollfd p = { .fd = uffd, .events = POLLIN };
	int waited;

	for (waited = 0; waited < ms; waited += 10) {
		int returned = __atomic_load_n(&s->returned, __ATOMIC_ACQUIRE);

		if (poll(&p, 1, returned ? 0 : 10) == 1)
			return !!(p.revents & POLLIN);
		if (returned)
			return 0;
	}
	return 0;
}

/* Waits up to MS milliseconds for PID; whether it ended. */
static int wait_for(pid_t pid, int ms)
{
	int waited;

	for (waited = 0; waited < ms; waited += 10) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return 1;
		usleep(10000);
	}
	return 0;
}

static int stall(const char *dev, const char *op, const char *cmd)
{
	long page_size = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct uffdio_copy copy = { 0 };
	struct uffd_msg msg;
	struct stalled s = { .write = !strcmp(op, "write") };
	pthread_t thread;
	char *page, *src;
	pid_t pid;
	int uffd, done;

	/* O_NONBLOCK: poll(2) on a blocking userfaultfd is always POLLERR. */
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		printf("userfaultfd: %s\n", err_name(errno));
		return 1;
	}
	page = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = malloc(page_size);
	if (page == MAP_FAILED || !src) {
		perror("mmap");
		return 1;
	}
	memset(src, 'p', page_size);
	reg.range.start = (unsigned long)page;
	reg.range.len = page_size;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		printf("UFFDIO_REGISTER: %s\n", err_name(errno));
		return 1;
	}
	s.fd = open_dev(dev);
	s.page = page;
	pthread_create(&thread, NULL, stalled_call, &s);
	/*
	 * The fault arrives when the driver copies from or to the page; a
	 * driver that returns without copying never makes one (it waited
	 * 5 s for it: 10 s of lab 07's steps on the skeleton).
	 */
	if (!wait_for_fault(uffd, &s, 5000) ||
	    read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT) {
		pthread_join(thread, NULL);
		errno = s.err;
		printf("%s(16): returned without touching the page: ", op);
		report_read("", s.ret, page);
		return 0;
	}
	printf("%s(16) with a page that is not there yet: waits in the driver\n", op);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	done = wait_for(pid, 10000);
	if (!done) {
		printf("meanwhile: `%s` still waits after 10 s\n", cmd);
		fflush(stdout);
	}
	/* Supply the page: the stalled call goes on. */
	copy.dst = (unsigned long)page;
	copy.src = (unsigned long)src;
	copy.len = page_size;
	if (ioctl(uffd, UFFDIO_COPY, &copy))
		printf("UFFDIO_COPY: %s\n", err_name(errno));
	pthread_join(thread, NULL);
	if (!done) {
		waitpid(pid, NULL, 0);
		printf("meanwhile: `%s` finished once the page arrived\n", cmd);
	} else {
		printf("meanwhile: `%s` finished while the %s was stalled\n", cmd, op);
	}
	errno = s.err;
	if (s.write)
		report("write(16) once the page arrived", s.ret);
	else
		report_read("read(16) once the page arrived", s.ret, page);
	close(s.fd);
	return 0;
}

static int churn(const char *dev, int n, int rounds)
{
	static const int flags[] = { O_TRUNC, O_APPEND, O_NONBLOCK, 0 };
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		if (fork() == 0) {
			int round;

			alarm(60);
			for (round = 0; round < rounds; round++) {
				int fd = open(dev, O_RDWR | flags[(i + round) % 4]);
				struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };
				char buf[32];

				if (fd < 0)
					_exit(1);
				/* Errors (ENOSPC, EAGAIN, ESPIPE) are fine here. */
				if (write(fd, "churn\n", 6) < 0 && errno != ENOSPC)
					_exit(2);
				lseek(fd, round % 7, SEEK_SET);
				if (read(fd, buf, sizeof(buf)) < 0 && errno != EAGAIN)
					_exit(3);
				poll(&p, 1, 0);
				if (close(fd))
					_exit(4);
			}
			_exit(0);
		}
	}
	for (i = 0; i < n; i++) {
		int status;

		wait(&status);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	printf("churn: %d processes x %d opens: %s\n", n, rounds,
	       bad ? "some failed" : "all done");
	return bad != 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	char buf[64];
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: devtest COMMAND DEV [ARGS]\n");
		return 2;
	}
	if (!strcmp(cmd, "blocks") && argc == 4)
		return blocks(argv[2], atoi(argv[3]));
	if (!strcmp(cmd, "sem") && argc == 5)
		return sem(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(cmd, "poll") && argc == 4)
		return poll_dev(argv[2], POLLIN, atoi(argv[3]));
	if (!strcmp(cmd, "fileops"))
		return fileops(argv[2]);
	if (!strcmp(cmd, "ioctl-roundtrip"))
		return ioctl_roundtrip(argv[2]);
	if (!strcmp(cmd, "hostile"))
		return hostile(argv[2]);
	if (!strcmp(cmd, "append"))
		return append(argv[2]);
	if (!strcmp(cmd, "read") && argc == 4)
		return read_dev(argv[2], atoi(argv[3]), 0, 0);
	if (!strcmp(cmd, "read-nonblock") && argc == 4)
		return read_dev(argv[2], atoi(argv[3]), O_NONBLOCK, 0);
	if (!strcmp(cmd, "read-alarm") && argc == 4) {
		struct sigaction sa = { .sa_handler = on_alarm };

		sigaction(SIGALRM, &sa, NULL);
		return read_dev(argv[2], atoi(argv[3]), 0, 1);
	}
	if (!strcmp(cmd, "pollout") && argc == 4)
		return poll_dev(argv[2], POLLOUT, atoi(argv[3]));
	if (!strcmp(cmd, "stall") && argc == 5 &&
	    (!strcmp(argv[3], "read") || !strcmp(argv[3], "write")))
		return stall(argv[2], argv[3], argv[4]);
	if (!strcmp(cmd, "churn") && argc == 5)
		return churn(argv[2], atoi(argv[3]), atoi(argv[4]));

	fd = open_dev(argv[2]);
	if (!strcmp(cmd, "read-fault")) {
		report("read(unmapped, 16)", read(fd, unmapped(), 16));
	} else if (!strcmp(cmd, "write-fault")) {
		report("write(unmapped, 16)", write(fd, unmapped(), 16));
	} else if (!strcmp(cmd, "huge")) {
		/* volatile: the compiler rightly warns about these lengths. */
		volatile size_t max = SIZE_MAX, half = SIZE_MAX / 2;

		report("read(buf, SIZE_MAX)", read(fd, buf, max));
		report("write(buf, SIZE_MAX)", write(fd, buf, max));
		report("read(buf, SSIZE_MAX)", read(fd, buf, half));
		report("write(buf, SSIZE_MAX)", write(fd, buf, half));
	} else if (!strcmp(cmd, "ioctl") && argc == 4) {
		unsigned long nr = strtoul(argv[3], NULL, 16);

		report(ioctl_name(argv[3]), ioctl(fd, nr, 0));
	} else if (!strcmp(cmd, "ioctl-u64") && argc == 4) {
		uint64_t value = 0;
		long ret = ioctl(fd, strtoul(argv[3], NULL, 16), &value);

		report(ioctl_name(argv[3]), ret);
		if (ret >= 0)
			printf("value: %llu\n", (unsigned long long)value);
	} else if (!strcmp(cmd, "ioctl-fault") && argc == 4) {
		report(ioctl_name(argv[3]), ioctl(fd, strtoul(argv[3], NULL, 16), unmapped()));
	} else if (!strcmp(cmd, "hold") && argc == 4) {
		int status;

		fflush(stdout);
		status = system(argv[3]);
		printf("while open: exit status %d\n", WEXITSTATUS(status));
	} else {
		fprintf(stderr, "devtest: unknown command %s\n", cmd);
		return 2;
	}
	close(fd);
	return 0;
}
