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
 *   devtest fileops DEV           every other file operation, with hostile
 *                                 arguments, on an O_NONBLOCK open of a
 *                                 semaphore whose count is 0: lseek in every
 *                                 form, pread/pwrite at odd offsets, readv/
 *                                 writev with an unmapped buffer, poll,
 *                                 generic ioctls, mmap, fsync, ftruncate
 *
 * Every result is printed as the errno's name, never as a number or a
 * locale-dependent message, so that the snapshots are stable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
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

/* Whether DEV is readable, or becomes readable within MS milliseconds. */
static int poll_dev(const char *dev, int ms)
{
	struct pollfd p = { .fd = open_dev(dev), .events = POLLIN };
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
	printf("poll(POLLIN, %d ms): %s, %s\n", ms,
	       (p.revents & POLLIN) ? "readable" : "not readable",
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
		return poll_dev(argv[2], atoi(argv[3]));
	if (!strcmp(cmd, "fileops"))
		return fileops(argv[2]);

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
