// SPDX-License-Identifier: GPL-2.0
/*
 * binderalloc: calls of sizes drawn from a seed, to watch a Binder driver's
 * buffer allocator at work (lab 10's random step).
 *
 *   binderalloc DEVICE SEED CALLS
 *
 * A context manager maps 64 KiB and keeps the buffers of the calls it
 * receives, freeing some of them (drawn from the seed) before each reply;
 * a client makes CALLS synchronous calls of drawn sizes. The manager
 * prints where each buffer lies in its mapping, so the output shows every
 * decision of the allocator: best fit, splitting, merging, running out
 * (the client's BR_FAILED_REPLY). The same seed gives the same output on
 * any driver whose allocator decides as C's binder_alloc.c does.
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
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/android/binder.h>

#define MAP_SIZE (64 * 1024)
#define MAX_HELD 64
#define CODE_EXIT 0xffff

static uint64_t rng;

/* A small LCG: the same numbers whatever the libc. */
static uint32_t draw(uint32_t bound)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng >> 33) % bound;
}

static int open_map(const char *dev, char **map)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("open %s: %s\n", dev, strerror(errno));
		exit(1);
	}
	*map = mmap(NULL, MAP_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	if (*map == MAP_FAILED) {
		printf("mmap: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

static int write_read(int fd, void *w, size_t wlen, void *r, size_t rlen, size_t *got)
{
	struct binder_write_read bwr = {
		.write_size = wlen, .write_buffer = (uintptr_t)w,
		.read_size = rlen, .read_buffer = (uintptr_t)r,
	};
	int ret = ioctl(fd, BINDER_WRITE_READ, &bwr);

	if (got)
		*got = bwr.read_consumed;
	return ret;
}

static void command(int fd, uint32_t cmd, const void *arg, size_t len)
{
	char buf[128];

	memcpy(buf, &cmd, 4);
	memcpy(buf + 4, arg, len);
	write_read(fd, buf, 4 + len, NULL, 0, NULL);
}

static void send_txn(int fd, uint32_t bc, uint32_t code, const void *data, size_t size)
{
	struct {
		uint32_t cmd;
		struct binder_transaction_data tr;
	} __attribute__((packed)) m;

	memset(&m, 0, sizeof(m));
	m.cmd = bc;
	m.tr.code = code;
	m.tr.data_size = size;
	m.tr.data.ptr.buffer = (uintptr_t)data;
	write_read(fd, &m, sizeof(m), NULL, 0, NULL);
}

/* Reads until a transaction, a reply or a failure; returns its command. */
static uint32_t next(int fd, struct binder_transaction_data *tr)
{
	for (;;) {
		uint32_t buf[64];
		size_t got = 0, at = 0;

		if (write_read(fd, NULL, 0, buf, sizeof(buf), &got) < 0) {
			printf("read: %s\n", strerror(errno));
			exit(1);
		}
		while (at < got) {
			uint32_t cmd;

			memcpy(&cmd, (char *)buf + at, 4);
			at += 4;
			if (cmd == BR_TRANSACTION || cmd == BR_REPLY) {
				memcpy(tr, (char *)buf + at, sizeof(*tr));
				return cmd;
			}
			if (cmd == BR_FAILED_REPLY || cmd == BR_DEAD_REPLY)
				return cmd;
			if (cmd == BR_INCREFS || cmd == BR_ACQUIRE ||
			    cmd == BR_RELEASE || cmd == BR_DECREFS)
				at += 16;
		}
	}
}

static void free_buffer(int fd, uint64_t ptr)
{
	command(fd, BC_FREE_BUFFER, &ptr, sizeof(ptr));
}

static void manager(const char *dev, uint64_t seed, int ready)
{
	uint64_t held[MAX_HELD];
	int nheld = 0;
	char *map;
	int fd = open_map(dev, &map);

	rng = seed ^ 0x5eed;
	if (ioctl(fd, BINDER_SET_CONTEXT_MGR, 0) < 0) {
		printf("manager: BINDER_SET_CONTEXT_MGR: %s\n", strerror(errno));
		exit(1);
	}
	command(fd, BC_ENTER_LOOPER, NULL, 0);
	write(ready, "r", 1);
	for (;;) {
		struct binder_transaction_data tr;

		if (next(fd, &tr) != BR_TRANSACTION)
			continue;
		if (tr.code == CODE_EXIT) {
			free_buffer(fd, tr.data.ptr.buffer);
			send_txn(fd, BC_REPLY, 0, NULL, 0);
			break;
		}
		printf("manager: call %u: %llu bytes at offset %lu\n", tr.code,
		       (unsigned long long)tr.data_size,
		       (unsigned long)((char *)(uintptr_t)tr.data.ptr.buffer - map));
		if (nheld == MAX_HELD) {
			free_buffer(fd, held[0]);
			memmove(held, held + 1, sizeof(held[0]) * --nheld);
		}
		held[nheld++] = tr.data.ptr.buffer;
		for (int n = draw(3); n > 0 && nheld > 0; n--) {
			int i = draw(nheld);

			printf("manager:   frees the buffer at offset %lu\n",
			       (unsigned long)((char *)(uintptr_t)held[i] - map));
			free_buffer(fd, held[i]);
			memmove(held + i, held + i + 1, sizeof(held[0]) * (--nheld - i));
		}
		send_txn(fd, BC_REPLY, 0, NULL, 0);
	}
	exit(0);
}

int main(int argc, char **argv)
{
	static char data[16384];
	int pipefd[2], calls;
	uint64_t seed;
	char *map, c;
	pid_t pid;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: binderalloc DEVICE SEED CALLS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	seed = strtoull(argv[2], NULL, 0);
	calls = atoi(argv[3]);
	if (pipe(pipefd) < 0)
		return 1;
	pid = fork();
	if (pid == 0)
		manager(argv[1], seed, pipefd[1]);
	if (read(pipefd[0], &c, 1) != 1)
		return 1;
	fd = open_map(argv[1], &map);
	rng = seed;
	for (int i = 1; i <= calls; i++) {
		struct binder_transaction_data tr;
		/* Mostly small calls, now and then a large one. */
		size_t size = draw(4) ? draw(2048) : draw(sizeof(data));
		uint32_t r;

		send_txn(fd, BC_TRANSACTION, i, data, size);
		r = next(fd, &tr);
		if (r == BR_REPLY) {
			free_buffer(fd, tr.data.ptr.buffer);
		} else {
			printf("client: call %d of %zu bytes: %s\n", i, size,
			       r == BR_FAILED_REPLY ? "BR_FAILED_REPLY" : "BR_DEAD_REPLY");
		}
	}
	send_txn(fd, BC_TRANSACTION, CODE_EXIT, NULL, 0);
	if (next(fd, &(struct binder_transaction_data){ 0 }) != BR_REPLY)
		kill(pid, SIGKILL); /* no room left even for the last call */
	waitpid(pid, NULL, 0);
	printf("client: done\n");
	return 0;
}
