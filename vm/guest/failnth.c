// SPDX-License-Identifier: GPL-2.0
/*
 * failnth: the guest side of a lab step's `failslab` table. It loads a
 * module again and again, and each time makes one allocation call of the
 * load fail (/proc/thread-self/fail-nth), to show that the module's init
 * handles every allocation failure: the load fails cleanly with an error,
 * or succeeds, and the module unloads.
 *
 *   failnth [-f FIRST] [-e EVERY] NAME FILE.ko [PARAMS]
 *
 * Only the calls that failslab may fail count (see `checker/src/spec/lab.rs`):
 * with failslab's `cache-filter` on and the debug kernel booted with
 * `slub_debug=A,kmalloc-*`, those are the allocations from the kmalloc
 * caches, where the module's own come from. kmemleak's bookkeeping, the
 * vmalloc areas and sysfs nodes, which come from caches of their own and
 * vary from load to load, are not counted.
 *
 * 1. A load without failures, with fail-nth set high and read back, counts
 *    the calls the whole load makes (T). It must succeed.
 * 2. A binary search finds B, the first call whose failure the kernel
 *    reports (failslab's `FAULT_INJECTION` line) after the module's first
 *    `NAME: ` line: init has started by then. The kernel tolerates the
 *    failure of some of its own calls, so whether the load fails says
 *    little; the order of the two lines says where the call was. A call
 *    that fails silently (`__GFP_NOWARN`) says nothing, and the search
 *    looks at the next one.
 * 3. One load for each call from B - MARGIN (allocations init makes before
 *    it prints) to B + FIRST, then for every EVERY-th call up to T. The
 *    failure reports are off for these: a report printed in the middle of
 *    a line the module is still writing (pr_cont) would cut it in two.
 *    Now and then a load makes one call more or less before init than the
 *    others, and the load after it misses one of the module's calls, so
 *    the calls up to B + FIRST are swept again until two sweeps in a row
 *    add no new line (at most PASSES sweeps).
 *
 * It prints what does not depend on how many allocations the kernel makes
 * before the module's: the distinct outcomes of those loads (errno names,
 * `loaded`) and the distinct kernel log lines of the module that the load
 * without failures did not print (what the error paths said), read from
 * /dev/kmsg as they come, so that the log buffer cannot overflow. The
 * numbers go to stderr. Exit status 1 when the module does not load without
 * failures or does not unload.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Calls before B that are swept too. */
#define MARGIN 16
/* A binary search step looks at most this many calls for one that fails. */
#define SILENT_MAX 32
/* Sweeps of the calls up to B + FIRST at most. */
#define PASSES 6
/* Distinct lines kept. */
#define LINES_MAX 512

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

static void set_verbose(const char *level)
{
	int fd = open("/sys/kernel/debug/failslab/verbose", O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, level, strlen(level)) < 0)
		die("/sys/kernel/debug/failslab/verbose");
	close(fd);
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

/* What the kernel log said during one load. */
enum order { NO_FAULT, FAULT_FIRST, MODULE_FIRST };

/*
 * Reads the kernel log records since the last call; keeps the module's
 * lines in `into`, if any (the baseline's are left out of `failing`). Returns
 * whether a failure was reported, and whether the module printed first.
 */
static enum order read_module_lines(struct lines *into)
{
	char rec[8192];
	int printed = 0;
	enum order order = NO_FAULT;

	for (;;) {
		ssize_t n = read(kmsg_fd, rec, sizeof(rec) - 1);

		if (n < 0 && errno == EPIPE)
			continue; /* records overwritten: read on */
		if (n <= 0)
			return order;
		rec[n] = '\0';
		char *text = strchr(rec, ';');

		if (text && order == NO_FAULT &&
		    !strncmp(text + 1, "FAULT_INJECTION:", 16))
			order = printed ? MODULE_FIRST : FAULT_FIRST;
		if (!text || strncmp(text + 1, prefix, strlen(prefix)))
			continue;
		printed = 1;
		text++;
		text[strcspn(text, "\n")] = '\0';
		if (into == &baseline || (into && !has(&baseline, text)))
			add(into, text);
	}
}

struct outcome {
	int err;	/* 0: loaded */
	int injected;	/* the n-th call happened during the load */
	enum order order;	/* of the failure report and the module's lines */
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
	o.order = read_module_lines(into);
	if (rc == 0)
		unload(n);
	return o;
}

static int by_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether call n is at or after init's first print (see 2. above). */
static int after_init_started(long n, long total)
{
	for (long k = n; k < n + SILENT_MAX && k <= total; k++) {
		/* Its lines are left out: the failure report may cut them. */
		struct outcome o = load(k, NULL);

		if (o.injected && o.order != NO_FAULT)
			return o.order == MODULE_FIRST;
	}
	/* Only silent failures: too few calls to tell; count them as after. */
	return 1;
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
		printf("failnth: the load made no allocation call that failslab may fail "
		       "(cache-filter on, but no kmalloc cache marked: boot with slub_debug=A,kmalloc-*)\n");
		return 1;
	}

	long lo = 1, hi = total + 1; /* B is in [lo, hi] */

	set_verbose("1");

	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;

		if (after_init_started(mid, total))
			hi = mid;
		else
			lo = mid + 1;
	}
	set_verbose("0");
	long start = lo > MARGIN ? lo - MARGIN : 1;
	long runs = 0;

	/* The first calls of init, one by one, until they say nothing new. */
	long end = lo + first < total ? lo + first : total;
	int passes = 0, first_pass_lines = 0;
	char added_per_pass[64] = "";

	for (int quiet = 0; quiet < 2 && passes < PASSES; passes++) {
		int before = failing.n;

		for (long n = start; n <= end; n++, runs++)
			add(&outcomes, errno_name(load(n, &failing).err));
		quiet = failing.n > before ? 0 : quiet + 1;
		if (passes == 0)
			first_pass_lines = failing.n;
		snprintf(added_per_pass + strlen(added_per_pass),
			 sizeof(added_per_pass) - strlen(added_per_pass), "%s%d",
			 passes ? "+" : "", failing.n - before);
	}
	/* Then every EVERY-th call to the end of the load. */
	for (long n = end + every; n <= total; n += every, runs++)
		add(&outcomes, errno_name(load(n, &failing).err));
	for (int i = first_pass_lines; i < failing.n; i++)
		fprintf(stderr, "failnth: found after the first sweep: %s\n", failing.line[i]);
	fprintf(stderr,
		"failnth: %ld allocation calls per load; init prints before call %ld; %ld loads from call %ld; new lines in %d sweeps of the first calls: %s\n",
		total, lo, runs, start, passes, added_per_pass);

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
