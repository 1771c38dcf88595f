// SPDX-License-Identifier: GPL-2.0
/*
 * failnth: the guest side of a lab step's `failslab` table. It loads a
 * module again and again, and each time makes one allocation call of the
 * module fail, to show that the module handles every allocation failure:
 * the load fails cleanly with an error, or succeeds, and the module unloads.
 *
 *   failnth [-f FIRST] [-e EVERY] NAME FILE.ko [PARAMS]
 *
 * The count is the task's /proc/thread-self/fail-nth, the kernel's own
 * fault-injection counter: write n, and the n-th fault-injection site the
 * task passes fails. The kernel crate's allocator is such a site (every
 * allocation of a Rust module goes through it, see
 * `kernel-crate/helpers/helpers.c`), and failslab.sh sets failslab and
 * fail_page_alloc so that none of the kernel's own allocation calls count
 * (no cache marked for failslab's cache-filter, fail_page_alloc's min-order
 * above every order). So the n-th call is the module's n-th allocation,
 * whatever the kernel allocates around it: the same call in every load,
 * and no search for where init starts.
 *
 * 1. A load without failures, with fail-nth set high and read back, counts
 *    the module's calls (T). It must succeed.
 * 2. One load for each call from 1 to FIRST, then for every EVERY-th call
 *    up to T, that call failing. A load that does not reach its call means
 *    the module allocates differently from one load to the next: reported,
 *    and the step fails.
 *
 * It prints the distinct outcomes of those loads (errno names, `loaded`)
 * and the distinct kernel log lines of the module that the load without
 * failures did not print (what the error paths said), read from /dev/kmsg
 * as they come, so that the log buffer cannot overflow. The numbers go to
 * stderr. Exit status 1 when the module does not load without failures,
 * does not unload, or does not reach a call it reached before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Distinct lines kept. */
#define LINES_MAX 512
/*
 * The bytes of a line's /dev/kmsg text that are compared and kept. From
 * 6.10 on (PRINTK_MESSAGE_MAX) a record reads back cut to 2048 bytes,
 * header included; the header's length follows the sequence number and
 * timestamp, so a long line (lab 04's, escaped as \xNN) came back cut one
 * byte earlier once the timestamp had a digit more, and passed for a line
 * the load without failures did not print. 6.1 reads 8192. Every line is
 * cut here, well below any header's room.
 */
#define TEXT_MAX 1536

static const char *name, *path, *params = "";
static int failnth_fd = -1, kmsg_fd = -1;
static char prefix[128];

static void die(const char *what)
{
	fprintf(stderr, "failnth: %s: %s\n", what, strerror(errno));
	exit(2);
}

static const char *errno_name(int e)
{
	static char other[32];

	switch (e) {
	case 0: return "loaded";
	case ENOMEM: return "ENOMEM";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case EEXIST: return "EEXIST";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case ENOSPC: return "ENOSPC";
	case EPERM: return "EPERM";
	case EIO: return "EIO";
	case ENODEV: return "ENODEV";
	}
	snprintf(other, sizeof(other), "errno %d", e);
	return other;
}

static void set_nth(long n)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%ld", n);

	if (pwrite(failnth_fd, buf, len, 0) != len)
		die("write /proc/thread-self/fail-nth");
}

static long get_nth(void)
{
	char buf[32] = { 0 };

	if (pread(failnth_fd, buf, sizeof(buf) - 1, 0) < 0)
		die("read /proc/thread-self/fail-nth");
	return atol(buf);
}

/*
 * Distinct strings: the module's lines of the load without failures, then
 * of the others; the outcomes of the loads.
 */
static struct lines {
	char *line[LINES_MAX];
	int n, dropped;
} baseline, failing, outcomes;

static int has(const struct lines *l, const char *s)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->line[i], s))
			return 1;
	return 0;
}

static void add(struct lines *l, const char *s)
{
	if (has(l, s))
		return;
	if (l->n == LINES_MAX) {
		l->dropped++;
		return;
	}
	l->line[l->n] = strdup(s);
	if (!l->line[l->n])
		die("strdup");
	l->n++;
}

/*
 * Cuts the /dev/kmsg text `text` to TEXT_MAX bytes, not inside an escape
 * (`\xNN`: /dev/kmsg escapes a backslash too, so each one starts one).
 */
static void cut(char *text)
{
	size_t len = strlen(text);

	if (len <= TEXT_MAX)
		return;
	len = TEXT_MAX;
	for (size_t i = len - 3; i < len; i++)
		if (text[i] == '\\') {
			len = i;
			break;
		}
	text[len] = '\0';
}

/*
 * Reads the kernel log records since the last call; keeps the module's
 * lines in `into`, if any (the baseline's are left out of `failing`).
 */
static void read_module_lines(struct lines *into)
{
	char rec[8192];

	for (;;) {
		ssize_t n = read(kmsg_fd, rec, sizeof(rec) - 1);

		if (n < 0 && errno == EPIPE)
			continue; /* records overwritten: read on */
		if (n <= 0)
			return;
		rec[n] = '\0';
		char *text = strchr(rec, ';');

		if (!text || strncmp(text + 1, prefix, strlen(prefix)))
			continue;
		text++;
		text[strcspn(text, "\n")] = '\0';
		cut(text);
		if (into == &baseline || (into && !has(&baseline, text)))
			add(into, text);
	}
}

struct outcome {
	int err;	/* 0: loaded */
	int injected;	/* the n-th call happened during the load */
	long used;	/* calls made, when none was failed */
};

static void unload(long n)
{
	if (syscall(SYS_delete_module, name, O_NONBLOCK) != 0) {
		printf("failnth: cannot unload %s after load %ld: %s\n", name, n,
		       errno_name(errno));
		exit(1);
	}
}

static struct outcome load(long n, struct lines *into)
{
	struct outcome o = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die(path);
	lseek(kmsg_fd, 0, SEEK_END);
	set_nth(n);
	long rc = syscall(SYS_finit_module, fd, params, 0);

	o.err = rc ? errno : 0;
	long left = get_nth();

	set_nth(0);
	close(fd);
	o.injected = left == 0;
	o.used = left ? n - left : 0;
	read_module_lines(into);
	if (rc == 0)
		unload(n);
	return o;
}

static int by_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	long first = 64, every = 1;
	int opt;

	while ((opt = getopt(argc, argv, "f:e:")) != -1) {
		switch (opt) {
		case 'f': first = atol(optarg); break;
		case 'e': every = atol(optarg); break;
		default: goto usage;
		}
	}
	if (argc - optind < 2 || argc - optind > 3 || first < 0 || every < 1)
		goto usage;
	name = argv[optind];
	path = argv[optind + 1];
	if (argc - optind == 3)
		params = argv[optind + 2];
	snprintf(prefix, sizeof(prefix), "%s: ", name);

	failnth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (failnth_fd < 0)
		die("/proc/thread-self/fail-nth (is this the debug kernel?)");
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd < 0)
		die("/dev/kmsg");

	struct outcome clean = load(1L << 30, &baseline);

	if (clean.err) {
		printf("failnth: %s does not load without failures: %s\n", name,
		       errno_name(clean.err));
		return 1;
	}
	long total = clean.used;

	if (total == 0) {
		printf("failnth: %s's load made no allocation call through the kernel crate's "
		       "allocator: nothing to fail\n", name);
		return 1;
	}

	long runs = 0, unreached = 0;

	/* The first calls one by one, then every EVERY-th to the end. */
	for (long n = 1; n <= total; n += n < first ? 1 : every, runs++) {
		struct outcome o = load(n, &failing);

		if (!o.injected) {
			printf("failnth: the load failing call %ld made only %ld calls, the load without failures %ld: "
			       "%s allocates differently from one load to the next\n",
			       n, o.used, total, name);
			unreached++;
			continue;
		}
		add(&outcomes, errno_name(o.err));
	}
	fprintf(stderr, "failnth: %ld allocation calls per load; %ld loads\n", total, runs);
	if (unreached)
		return 1;

	qsort(outcomes.line, outcomes.n, sizeof(outcomes.line[0]), by_line);
	printf("failslab: one load per failing allocation call of %s's init\n", name);
	printf("outcomes:");
	for (int i = 0; i < outcomes.n; i++)
		printf(" %s", outcomes.line[i]);
	printf("\n");
	printf("--- distinct kernel log lines, without those of a load without failures\n");
	qsort(failing.line, failing.n, sizeof(failing.line[0]), by_line);
	for (int i = 0; i < failing.n; i++)
		printf("%s\n", failing.line[i]);
	if (failing.dropped)
		printf("(and %d more)\n", failing.dropped);
	return 0;

usage:
	fprintf(stderr, "usage: failnth [-f FIRST] [-e EVERY] NAME FILE.ko [PARAMS]\n");
	return 2;
}
