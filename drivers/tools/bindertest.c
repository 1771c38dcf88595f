// SPDX-License-Identifier: GPL-2.0
/*
 * bindertest: one test program for two Binder drivers, Debian's C
 * binder_linux (/dev/binder) and the Rust one (/dev/rust-binder). Built
 * statically on the host (the guest has no libc) and shipped to
 * /lab/bindertest (lab.toml `programs`).
 *
 *   bindertest DEVICE [SCENARIO...]   run the scenarios (all by default)
 *   bindertest --list                 name them
 *
 * and the benchmarks of `make bench-binder` (checker/src/commands/binderbench.rs),
 * which print numbers, not snapshots:
 *
 *   bindertest DEVICE bench-latency SIZE COUNT     round trips of SIZE bytes:
 *                                                  min, p50, p99 in ns
 *   bindertest DEVICE bench-throughput PAIRS COUNT calls per second, PAIRS
 *                                                  clients and server threads
 *   bindertest DEVICE bench-oneway COUNT           one-way calls per second,
 *                                                  the client's retries (the
 *                                                  buffer was full) and the
 *                                                  server's sleeps (it had
 *                                                  read every call)
 *
 * Each scenario runs in a process group of its own: a leader forks the
 * processes it needs (a context manager, a client, a server...), each
 * opening DEVICE for itself, and they talk through the driver. A scenario
 * that does not finish within its time limit is killed and reported, so a
 * hung driver fails the step instead of hanging the guest.
 *
 * The output is deterministic: every process writes its lines into a
 * buffer of its own in shared memory, and the buffers are printed in a
 * fixed order (the order of the processes' creation) once the scenario
 * has ended, so the interleaving of processes never shows. No pid,
 * address or fd number is printed: only relations ("sender_pid client",
 * "buffer in mapping: yes") and the values the program chose itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/android/binder.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>

static const char *device;

/* ------------------------------------------------------------------ */
/* Output: one buffer per process, in shared memory.                  */

#define ROLES 8
#define SLOT 12288

struct role {
	char name[16];
	pid_t pid;
	size_t len;
	char text[SLOT];
};

static struct role *roles; /* MAP_SHARED, ROLES entries */
static int me;             /* this process's index into roles */
static int nroles;

static void say(const char *fmt, ...)
{
	struct role *r = &roles[me];
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = snprintf(r->text + r->len, SLOT - r->len, "%s: %s\n", r->name, line);
	if (n > 0 && r->len + n < SLOT)
		r->len += n;
}

static const char *errname(int e)
{
	switch (e) {
	case 0: return "ok";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case ENOTTY: return "ENOTTY";
	case EPROTO: return "EPROTO";
	case EOVERFLOW: return "EOVERFLOW";
	case ENOSYS: return "ENOSYS";
	}
	static char buf[32];
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

/* The result of a system call: "ok" or the errno's name. */
static const char *res(int ret)
{
	return errname(ret < 0 ? errno : 0);
}

/* The name of the role whose process is `pid`, for sender_pid. */
static const char *who(pid_t pid)
{
	if (pid == 0)
		return "0";
	for (int i = 0; i < ROLES; i++)
		if (roles[i].pid == pid)
			return roles[i].name;
	return "another process";
}

/* ------------------------------------------------------------------ */
/* Processes and their synchronisation.                               */

static pid_t kids[ROLES];
static int killed[ROLES];

/* Forks a process named `name` that runs fn(arg) and exits. */
static int spawn(const char *name, void (*fn)(void *), void *arg)
{
	int idx = nroles++;
	pid_t pid;

	snprintf(roles[idx].name, sizeof(roles[idx].name), "%s", name);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		say("fork: %s", res(-1));
		exit(1);
	}
	if (pid == 0) {
		me = idx;
		roles[idx].pid = getpid();
		fn(arg);
		_exit(0);
	}
	roles[idx].pid = pid;
	kids[idx] = pid;
	return idx;
}

/* Waits for every process spawned; reports those that did not exit 0
 * (except the ones the scenario killed on purpose). */
static void reap(void)
{
	for (int i = 0; i < nroles; i++) {
		int st;

		if (!kids[i] || waitpid(kids[i], &st, 0) < 0)
			continue;
		kids[i] = 0;
		if (killed[i])
			continue;
		if (WIFSIGNALED(st))
			say("%s died of signal %d", roles[i].name, WTERMSIG(st));
		else if (WEXITSTATUS(st))
			say("%s exited with status %d", roles[i].name, WEXITSTATUS(st));
	}
}

static void kill_role(int idx)
{
	killed[idx] = 1;
	kill(kids[idx], SIGKILL);
	waitpid(kids[idx], NULL, 0);
	kids[idx] = 0;
}

/* A one-way signal between processes: a pipe. */
struct chan {
	int fd[2];
};

static void chan_init(struct chan *c)
{
	if (pipe(c->fd)) {
		say("pipe: %s", res(-1));
		exit(1);
	}
}

static void post(struct chan *c)
{
	if (write(c->fd[1], "x", 1) != 1)
		exit(1);
}

static void await(struct chan *c)
{
	char x;

	if (read(c->fd[0], &x, 1) != 1)
		exit(1);
}

/* Starts the scenario's context manager, manager(&ready), and waits until
 * it has become the manager (it posts `ready`). */
static void start(void (*manager)(void *))
{
	static struct chan ready;

	chan_init(&ready);
	spawn("manager", manager, &ready);
	await(&ready);
}

/* ------------------------------------------------------------------ */
/* Binder plumbing.                                                    */

#define MAP_SIZE (128 * 1024)

struct bp {
	int fd;
	char *map;
	size_t size;
	uint8_t rbuf[1024];
	size_t rlen, rpos;
};

/* Opens the device, maps `size` bytes (read-only, as the driver wants)
 * and enters the looper, so that this thread takes the process's work. */
static void bopen(struct bp *p, size_t size)
{
	uint32_t cmd = BC_ENTER_LOOPER;
	struct binder_write_read bwr = { 0 };

	memset(p, 0, sizeof(*p));
	p->fd = open(device, O_RDWR | O_CLOEXEC);
	if (p->fd < 0) {
		say("open: %s", res(-1));
		exit(1);
	}
	p->size = size;
	if (size) {
		p->map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, p->fd, 0);
		if (p->map == MAP_FAILED) {
			say("mmap: %s", res(-1));
			exit(1);
		}
	}
	bwr.write_buffer = (uintptr_t)&cmd;
	bwr.write_size = sizeof(cmd);
	if (ioctl(p->fd, BINDER_WRITE_READ, &bwr) < 0) {
		say("BC_ENTER_LOOPER: %s", res(-1));
		exit(1);
	}
}

/* Writes commands; returns 0 or -errno. */
static int bwrite(struct bp *p, const void *cmds, size_t n)
{
	struct binder_write_read bwr = { 0 };

	bwr.write_buffer = (uintptr_t)cmds;
	bwr.write_size = n;
	return ioctl(p->fd, BINDER_WRITE_READ, &bwr) < 0 ? -errno : 0;
}

/* Command buffers. */
struct wb {
	uint8_t b[512];
	size_t n;
};

static void put(struct wb *w, const void *x, size_t n)
{
	memcpy(w->b + w->n, x, n);
	w->n += n;
}

static void put32(struct wb *w, uint32_t x)
{
	put(w, &x, 4);
}

static void put64(struct wb *w, uint64_t x)
{
	put(w, &x, 8);
}

static void bc(struct bp *p, struct wb *w, const char *what)
{
	int ret = bwrite(p, w->b, w->n);

	if (ret)
		say("%s: %s", what, errname(-ret));
	w->n = 0;
}

static void bc32(struct bp *p, uint32_t cmd, uint32_t arg, const char *what)
{
	struct wb w = { .n = 0 };

	put32(&w, cmd);
	put32(&w, arg);
	bc(p, &w, what);
}

static void free_buffer(struct bp *p, binder_uintptr_t buffer)
{
	struct wb w = { .n = 0 };

	put32(&w, BC_FREE_BUFFER);
	put64(&w, buffer);
	bc(p, &w, "BC_FREE_BUFFER");
}

struct txn {
	uint32_t cmd; /* BC_TRANSACTION or BC_REPLY */
	uint32_t handle;
	uint32_t code;
	uint32_t flags;
	const void *data;
	size_t size;
	const binder_size_t *offs;
	size_t offs_size; /* bytes */
};

static int send_txn(struct bp *p, const struct txn *t)
{
	struct binder_transaction_data tr;
	struct wb w = { .n = 0 };

	memset(&tr, 0, sizeof(tr));
	tr.target.handle = t->handle;
	tr.code = t->code;
	tr.flags = t->flags;
	tr.data_size = t->size;
	tr.offsets_size = t->offs_size;
	tr.data.ptr.buffer = (uintptr_t)t->data;
	tr.data.ptr.offsets = (uintptr_t)t->offs;
	put32(&w, t->cmd);
	put(&w, &tr, sizeof(tr));
	return bwrite(p, w.b, w.n);
}

/* A returned command with its payload. */
struct br {
	uint32_t cmd;
	union {
		struct binder_transaction_data tr;
		struct binder_ptr_cookie pc;
		binder_uintptr_t cookie;
		int32_t err;
		uint8_t raw[128];
	} u;
};

static const char *brname(uint32_t cmd)
{
	switch (cmd) {
	case BR_ERROR: return "BR_ERROR";
	case BR_OK: return "BR_OK";
	case BR_TRANSACTION: return "BR_TRANSACTION";
	case BR_TRANSACTION_SEC_CTX: return "BR_TRANSACTION_SEC_CTX";
	case BR_REPLY: return "BR_REPLY";
	case BR_ACQUIRE_RESULT: return "BR_ACQUIRE_RESULT";
	case BR_DEAD_REPLY: return "BR_DEAD_REPLY";
	case BR_TRANSACTION_COMPLETE: return "BR_TRANSACTION_COMPLETE";
	case BR_INCREFS: return "BR_INCREFS";
	case BR_ACQUIRE: return "BR_ACQUIRE";
	case BR_RELEASE: return "BR_RELEASE";
	case BR_DECREFS: return "BR_DECREFS";
	case BR_ATTEMPT_ACQUIRE: return "BR_ATTEMPT_ACQUIRE";
	case BR_NOOP: return "BR_NOOP";
	case BR_SPAWN_LOOPER: return "BR_SPAWN_LOOPER";
	case BR_FINISHED: return "BR_FINISHED";
	case BR_DEAD_BINDER: return "BR_DEAD_BINDER";
	case BR_CLEAR_DEATH_NOTIFICATION_DONE: return "BR_CLEAR_DEATH_NOTIFICATION_DONE";
	case BR_FAILED_REPLY: return "BR_FAILED_REPLY";
	case BR_FROZEN_REPLY: return "BR_FROZEN_REPLY";
	case BR_ONEWAY_SPAM_SUSPECT: return "BR_ONEWAY_SPAM_SUSPECT";
	}
	static char buf[32];
	snprintf(buf, sizeof(buf), "unknown 0x%x", cmd);
	return buf;
}

/* The next returned command other than BR_NOOP, reading (blocking) when
 * the last read's are used up. 0 or -errno. */
static int bnext(struct bp *p, struct br *c)
{
	for (;;) {
		uint32_t size;

		if (p->rpos >= p->rlen) {
			struct binder_write_read bwr = { 0 };

			bwr.read_buffer = (uintptr_t)p->rbuf;
			bwr.read_size = sizeof(p->rbuf);
			if (ioctl(p->fd, BINDER_WRITE_READ, &bwr) < 0)
				return -errno;
			p->rlen = bwr.read_consumed;
			p->rpos = 0;
			continue;
		}
		memset(c, 0, sizeof(*c));
		memcpy(&c->cmd, p->rbuf + p->rpos, 4);
		size = _IOC_SIZE(c->cmd);
		if (size > sizeof(c->u) || p->rpos + 4 + size > p->rlen) {
			say("malformed read buffer at command %s", brname(c->cmd));
			exit(1);
		}
		memcpy(&c->u, p->rbuf + p->rpos + 4, size);
		p->rpos += 4 + size;
		if (c->cmd != BR_NOOP)
			return 0;
	}
}

static int in_map(struct bp *p, binder_uintptr_t addr, size_t len)
{
	uintptr_t start = (uintptr_t)p->map;

	return addr >= start && addr + len <= start + p->size && addr + len >= addr;
}

/* Prints data as text when it is, else as hex (at most 48 bytes). */
static void data_text(char *out, size_t outlen, const uint8_t *d, size_t n)
{
	size_t i, printable = 1, shown = n < 48 ? n : 48;

	for (i = 0; i < shown; i++)
		if (d[i] < 0x20 || d[i] > 0x7e)
			printable = d[i] == 0 && i == n - 1 && printable;
	if (printable) {
		size_t len = n && !d[n - 1] && n - 1 < shown ? n - 1 : shown;

		snprintf(out, outlen, "'%.*s'%s", (int)len, d, len < n - (n && !d[n - 1]) ? "..." : "");
	} else {
		size_t o = 0;

		for (i = 0; i < shown && o + 3 < outlen; i++)
			o += snprintf(out + o, outlen - o, "%02x", d[i]);
		if (shown < n && o + 4 < outlen)
			snprintf(out + o, outlen - o, "...");
	}
}

/* Prints a received transaction or reply. */
static void show_txn(struct bp *p, const char *what, const struct binder_transaction_data *tr)
{
	char text[128];
	const uint8_t *d = (const uint8_t *)(uintptr_t)tr->data.ptr.buffer;

	/* Objects hold numbers the driver chose (handles, fds): shown by the
	 * scenarios that expect them, not as raw bytes. */
	if (tr->offsets_size)
		snprintf(text, sizeof(text), "with objects");
	else
		data_text(text, sizeof(text), d, tr->data_size);
	say("%s code 0x%x flags 0x%x data %s (%llu bytes) offsets %llu", what, tr->code,
	    tr->flags, text, (unsigned long long)tr->data_size,
	    (unsigned long long)tr->offsets_size);
	say("  sender_pid %s, sender_euid %u, buffer in mapping: %s, offsets in mapping: %s",
	    who(tr->sender_pid), tr->sender_euid,
	    in_map(p, tr->data.ptr.buffer, tr->data_size) ? "yes" : "no",
	    in_map(p, tr->data.ptr.offsets, tr->offsets_size) ? "yes" : "no");
}

/* Answers BR_INCREFS / BR_ACQUIRE as libbinder does. */
static void ack_node(struct bp *p, const struct br *c)
{
	struct wb w = { .n = 0 };

	put32(&w, c->cmd == BR_INCREFS ? BC_INCREFS_DONE : BC_ACQUIRE_DONE);
	put64(&w, c->u.pc.ptr);
	put64(&w, c->u.pc.cookie);
	bc(p, &w, c->cmd == BR_INCREFS ? "BC_INCREFS_DONE" : "BC_ACQUIRE_DONE");
}

/* Prints a node command (BR_INCREFS...) and acknowledges it. */
static void show_node(struct bp *p, const struct br *c)
{
	say("%s ptr 0x%llx cookie 0x%llx", brname(c->cmd), (unsigned long long)c->u.pc.ptr,
	    (unsigned long long)c->u.pc.cookie);
	if (c->cmd == BR_INCREFS || c->cmd == BR_ACQUIRE)
		ack_node(p, c);
}

/* Prints (and acknowledges) node notices up to the node's BR_DECREFS. */
static void show_nodes_until_decrefs(struct bp *p)
{
	struct br c;

	do {
		if (bnext(p, &c)) {
			say("read: %s", res(-1));
			return;
		}
		show_node(p, &c);
	} while (c.cmd != BR_DECREFS);
}

/* Reads until the answer to this thread's call: BR_REPLY (printed, its
 * buffer freed unless `keep`), BR_DEAD_REPLY, BR_FAILED_REPLY. Prints
 * every command on the way. Returns the final command. */
static uint32_t wait_reply(struct bp *p, struct br *c, int keep)
{
	for (;;) {
		int ret = bnext(p, c);

		if (ret) {
			say("read: %s", errname(-ret));
			return 0;
		}
		switch (c->cmd) {
		case BR_TRANSACTION_COMPLETE:
			say("%s", brname(c->cmd));
			break;
		case BR_INCREFS:
		case BR_ACQUIRE:
		case BR_RELEASE:
		case BR_DECREFS:
			show_node(p, c);
			break;
		case BR_REPLY:
			show_txn(p, "BR_REPLY", &c->u.tr);
			if (!keep)
				free_buffer(p, c->u.tr.data.ptr.buffer);
			return c->cmd;
		case BR_DEAD_REPLY:
		case BR_FAILED_REPLY:
			say("%s", brname(c->cmd));
			return c->cmd;
		case BR_ERROR:
			say("BR_ERROR %s", errname(-c->u.err));
			return c->cmd;
		default:
			say("%s", brname(c->cmd));
			return c->cmd;
		}
	}
}

/* Reads until a BR_TRANSACTION (returned, printed if `show`), printing
 * and answering everything else on the way. */
static int wait_txn(struct bp *p, struct br *c, int show)
{
	for (;;) {
		int ret = bnext(p, c);

		if (ret) {
			say("read: %s", errname(-ret));
			return ret;
		}
		switch (c->cmd) {
		case BR_TRANSACTION:
			if (show)
				show_txn(p, "BR_TRANSACTION", &c->u.tr);
			return 0;
		case BR_INCREFS:
		case BR_ACQUIRE:
		case BR_RELEASE:
		case BR_DECREFS:
			show_node(p, c);
			break;
		case BR_DEAD_BINDER:
		case BR_CLEAR_DEATH_NOTIFICATION_DONE:
			say("%s cookie 0x%llx", brname(c->cmd), (unsigned long long)c->u.cookie);
			break;
		default:
			say("%s", brname(c->cmd));
			break;
		}
	}
}

/* A synchronous call: prints what comes back. */
static uint32_t call(struct bp *p, uint32_t handle, uint32_t code, const void *data, size_t size,
		     const binder_size_t *offs, size_t offs_size, uint32_t flags)
{
	struct txn t = { BC_TRANSACTION, handle, code, flags, data, size, offs, offs_size };
	struct br c;
	int ret = send_txn(p, &t);

	if (ret) {
		say("BC_TRANSACTION: %s", errname(-ret));
		return 0;
	}
	return wait_reply(p, &c, 0);
}

static void reply(struct bp *p, uint32_t code, const void *data, size_t size)
{
	struct txn t = { BC_REPLY, 0, code, 0, data, size, NULL, 0 };
	int ret = send_txn(p, &t);

	if (ret)
		say("BC_REPLY: %s", errname(-ret));
}

/* Reads the BR_TRANSACTION_COMPLETE of a reply or one-way call. */
static void complete(struct bp *p)
{
	struct br c;
	int ret = bnext(p, &c);

	if (ret)
		say("read: %s", errname(-ret));
	else if (c.cmd != BR_TRANSACTION_COMPLETE)
		say("%s instead of BR_TRANSACTION_COMPLETE", brname(c.cmd));
}

/* Reads and prints one command (after a reply or a one-way call). */
static void read_one(struct bp *p)
{
	struct br c;
	int ret = bnext(p, &c);

	if (ret)
		say("read: %s", errname(-ret));
	else
		say("%s", brname(c.cmd));
}

/* Becomes the context manager; the previous scenario's manager may still
 * be going away (the C driver releases a process on a workqueue), so
 * EBUSY is retried for a while. */
static int become_manager(struct bp *p, const struct flat_binder_object *ext)
{
	for (int i = 0; i < 250; i++) {
		int ret = ext ? ioctl(p->fd, BINDER_SET_CONTEXT_MGR_EXT, ext)
			      : ioctl(p->fd, BINDER_SET_CONTEXT_MGR, 0);

		if (ret == 0 || errno != EBUSY)
			return ret < 0 ? -errno : 0;
		usleep(20000);
	}
	return -EBUSY;
}

static void manager_or_die(struct bp *p, const struct flat_binder_object *ext)
{
	int ret = become_manager(p, ext);

	if (ret) {
		say("context manager: %s", errname(-ret));
		exit(1);
	}
}

/* A manager that answers `n` calls: prints each, replies "re: DATA" with
 * code+1. */
struct serve_args {
	int calls;
	const struct flat_binder_object *ext;
	size_t map;
	struct chan *ready;
};

static void echo_once(struct bp *p)
{
	struct br c;
	char out[256];

	if (wait_txn(p, &c, 1))
		exit(1);
	snprintf(out, sizeof(out), "re: %.*s", (int)(c.u.tr.data_size < 200 ? c.u.tr.data_size : 200),
		 (const char *)(uintptr_t)c.u.tr.data.ptr.buffer);
	free_buffer(p, c.u.tr.data.ptr.buffer);
	if (!(c.u.tr.flags & TF_ONE_WAY)) {
		reply(p, c.u.tr.code + 1, out, strlen(out) + 1);
		complete(p);
	}
}

static void manager_main(void *arg)
{
	struct serve_args *a = arg;
	struct bp p;

	bopen(&p, a->map ? a->map : MAP_SIZE);
	manager_or_die(&p, a->ext);
	post(a->ready);
	for (int i = 0; i < a->calls; i++)
		echo_once(&p);
}

static int start_manager(int calls, const struct flat_binder_object *ext, size_t map)
{
	static struct chan ready;
	static struct serve_args a;
	int idx;

	chan_init(&ready);
	a = (struct serve_args){ calls, ext, map, &ready };
	idx = spawn("manager", manager_main, &a);
	await(&ready);
	return idx;
}

static const char *yes(int b)
{
	return b ? "yes" : "no";
}

/* ------------------------------------------------------------------ */
/* Scenarios.                                                          */

static void bwr_case(struct bp *p, const char *what, struct binder_write_read *bwr);

/* The protocol version, ioctls without a mapping, and no manager yet. */
static void s_version(void)
{
	struct binder_version v = { 0 };
	struct bp p;
	int fd = open(device, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	struct binder_write_read bwr = { 0 };
	uint8_t rbuf[64];
	uint32_t n = 4;

	say("open: %s", res(fd));
	n = ioctl(fd, BINDER_VERSION, &v);
	say("BINDER_VERSION: %s, protocol %d", res(n), v.protocol_version);
	n = 4;
	say("BINDER_VERSION to NULL: %s", res(ioctl(fd, BINDER_VERSION, NULL)));
	say("unknown ioctl: %s", res(ioctl(fd, _IOW('b', 99, int), &n)));
	say("BINDER_SET_MAX_THREADS 4: %s", res(ioctl(fd, BINDER_SET_MAX_THREADS, &n)));
	say("BINDER_SET_MAX_THREADS from NULL: %s", res(ioctl(fd, BINDER_SET_MAX_THREADS, NULL)));
	say("BINDER_WRITE_READ of nothing: %s", res(ioctl(fd, BINDER_WRITE_READ, &bwr)));
	bwr.read_buffer = (uintptr_t)rbuf;
	bwr.read_size = sizeof(rbuf);
	bwr_case(&(struct bp){ .fd = fd }, "non-blocking read with no work", &bwr);
	say("BINDER_THREAD_EXIT: %s", res(ioctl(fd, BINDER_THREAD_EXIT, 0)));
	close(fd);

	/* A call to handle 0 while nobody is the context manager. */
	bopen(&p, MAP_SIZE);
	say("call to handle 0 without a context manager:");
	call(&p, 0, 1, "anyone?", 8, NULL, 0, 0);
}

static void mmap_child(void *arg)
{
	int fd = *(int *)arg;
	void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);

	say("mmap of the parent's open in a forked child: %s", res(m == MAP_FAILED ? -1 : 0));
}

static void s_mmap(void)
{
	int fd = open(device, O_RDWR | O_CLOEXEC);
	void *m;

	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	say("mmap PROT_READ|PROT_WRITE: %s", res(m == MAP_FAILED ? -1 : 0));
	/* The child runs before this process has mapped anything. */
	spawn("child", mmap_child, &fd);
	reap();
	m = mmap(NULL, 8 << 20, PROT_READ, MAP_PRIVATE, fd, 0);
	say("mmap 8 MiB PROT_READ: %s", res(m == MAP_FAILED ? -1 : 0));
	if (m != MAP_FAILED) {
		say("mprotect PROT_WRITE: %s", res(mprotect(m, 4096, PROT_READ | PROT_WRITE)));
		say("mprotect PROT_EXEC: %s", res(mprotect(m, 4096, PROT_READ | PROT_EXEC)));
	}
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	say("second mmap: %s", res(m == MAP_FAILED ? -1 : 0));
	close(fd);
}

/* The 8 MiB mapping is a 4 MiB buffer: 4 MiB fit, 8 bytes more do not. */
static void big_client(void *arg)
{
	struct bp p;
	size_t big = 4 << 20;
	char *d = malloc(big + 8);

	(void)arg;
	memset(d, 'b', big + 8);
	d[big - 1] = 0;
	bopen(&p, MAP_SIZE);
	say("call with 4 MiB:");
	call(&p, 0, 7, d, big, NULL, 0, 0);
	say("call with 4 MiB + 8 bytes:");
	call(&p, 0, 7, d, big + 8, NULL, 0, 0);
	say("a small call after that:");
	call(&p, 0, 7, "small", 6, NULL, 0, 0);
	free(d);
}

static void s_mmap_limit(void)
{
	start_manager(2, NULL, 8 << 20);
	spawn("client", big_client, NULL);
	reap();
}

static void mgr_again(void *arg)
{
	struct bp p;
	struct chan *done = arg;

	bopen(&p, MAP_SIZE);
	say("BINDER_SET_CONTEXT_MGR while another process is: %s",
	    res(ioctl(p.fd, BINDER_SET_CONTEXT_MGR, 0)));
	post(done);
}

static struct chan cm_next;

static void mgr_later(void *arg)
{
	struct bp p;
	struct flat_binder_object ext = { .hdr.type = BINDER_TYPE_BINDER,
					  .binder = 0x1234, .cookie = 0x5678 };

	(void)arg;
	bopen(&p, MAP_SIZE);
	say("BINDER_SET_CONTEXT_MGR_EXT from NULL: %s",
	    res(ioctl(p.fd, BINDER_SET_CONTEXT_MGR_EXT, NULL)));
	say("BINDER_SET_CONTEXT_MGR_EXT once the first manager has closed: %s",
	    errname(-become_manager(&p, &ext)));
	post(&cm_next);
	echo_once(&p);
}

static void cm_caller(void *arg)
{
	struct bp p;

	(void)arg;
	bopen(&p, MAP_SIZE);
	say("call to handle 0:");
	call(&p, 0, 5, "to the new one", 15, NULL, 0, 0);
}

static void s_context_manager(void)
{
	struct bp p;
	struct chan done;

	bopen(&p, MAP_SIZE);
	chan_init(&done);
	chan_init(&cm_next);
	say("BINDER_SET_CONTEXT_MGR: %s", errname(-become_manager(&p, NULL)));
	say("BINDER_SET_CONTEXT_MGR again: %s", res(ioctl(p.fd, BINDER_SET_CONTEXT_MGR, 0)));
	say("call to handle 0 from the manager itself:");
	call(&p, 0, 1, "me?", 4, NULL, 0, 0);
	spawn("other", mgr_again, &done);
	await(&done);
	reap();
	munmap(p.map, p.size);
	close(p.fd);
	spawn("next", mgr_later, NULL);
	await(&cm_next);
	spawn("caller", cm_caller, NULL);
	reap();
}

/* Call and reply: code, data, sender_pid, euid, the buffers. */
static void caller(void *arg)
{
	struct bp p;

	(void)arg;
	bopen(&p, MAP_SIZE);
	say("call:");
	call(&p, 0, 0x10, "hello binder", 13, NULL, 0, TF_ACCEPT_FDS);
	/* The euid is the caller's at the time of the call. */
	if (seteuid(4321))
		say("seteuid: %s", res(-1));
	say("call with euid 4321:");
	call(&p, 0, 0x20, "who am i", 9, NULL, 0, 0);
	if (seteuid(0))
		say("seteuid back: %s", res(-1));
	say("empty call:");
	call(&p, 0, 0x30, NULL, 0, NULL, 0, 0);
}

static void s_call_reply(void)
{
	start_manager(3, NULL, 0);
	spawn("client", caller, NULL);
	reap();
}

/* Objects: a node sent to the manager becomes a handle, is called back,
 * and comes home as the original binder. */
#define NODE_PTR 0xb1d0
#define NODE_COOKIE 0xc00c1e

struct objmsg {
	uint32_t before;
	struct flat_binder_object obj;
	uint32_t after;
};

/* Calls the manager (handle 0) with `code` and a message holding one
 * BINDER object, node `ptr` with `cookie` and `flags`, between two words. */
static void call_with_node(struct bp *p, uint32_t code, uint32_t before, binder_uintptr_t ptr,
			   binder_uintptr_t cookie, uint32_t flags, uint32_t after)
{
	struct objmsg m = { before, { .hdr.type = BINDER_TYPE_BINDER, .flags = flags,
				      .binder = ptr, .cookie = cookie }, after };
	binder_size_t off = offsetof(struct objmsg, obj);

	call(p, 0, code, &m, sizeof(m), &off, sizeof(off), 0);
}

static void show_obj(const struct flat_binder_object *o)
{
	const char *type = o->hdr.type == BINDER_TYPE_BINDER ? "BINDER"
			 : o->hdr.type == BINDER_TYPE_WEAK_BINDER ? "WEAK_BINDER"
			 : o->hdr.type == BINDER_TYPE_HANDLE ? "HANDLE"
			 : o->hdr.type == BINDER_TYPE_WEAK_HANDLE ? "WEAK_HANDLE"
			 : o->hdr.type == BINDER_TYPE_FD ? "FD" : "other";

	if (o->hdr.type == BINDER_TYPE_HANDLE || o->hdr.type == BINDER_TYPE_WEAK_HANDLE)
		say("  object: %s %u, cookie 0x%llx, flags 0x%x", type, o->handle,
		    (unsigned long long)o->cookie, o->flags);
	else
		say("  object: %s 0x%llx, cookie 0x%llx, flags 0x%x", type,
		    (unsigned long long)o->binder, (unsigned long long)o->cookie, o->flags);
}

static const struct objmsg *msg_of(const struct br *c)
{
	return (const struct objmsg *)(uintptr_t)c->u.tr.data.ptr.buffer;
}

static void show_msg(const struct br *c)
{
	const struct objmsg *m = msg_of(c);
	const binder_size_t *off = (const binder_size_t *)(uintptr_t)c->u.tr.data.ptr.offsets;

	if (c->u.tr.data_size != sizeof(*m) || c->u.tr.offsets_size != 8) {
		say("  unexpected sizes %llu/%llu", (unsigned long long)c->u.tr.data_size,
		    (unsigned long long)c->u.tr.offsets_size);
		return;
	}
	say("  offsets[0] %llu, words around the object: 0x%x 0x%x", (unsigned long long)off[0],
	    m->before, m->after);
	show_obj(&m->obj);
}

static void node_info(struct bp *p, uint32_t handle, const char *when)
{
	struct binder_node_info_for_ref info = { .handle = handle };
	int ret = ioctl(p->fd, BINDER_GET_NODE_INFO_FOR_REF, &info);

	if (ret < 0)
		say("node info of handle %u %s: %s", handle, when, res(-1));
	else
		say("node info of handle %u %s: strong %u weak %u", handle, when,
		    info.strong_count, info.weak_count);
}

static struct chan obj_go, obj_done;

static void obj_server(void *arg)
{
	struct bp p;
	struct br c;

	(void)arg;
	bopen(&p, MAP_SIZE);
	say("sends its node to the manager:");
	call_with_node(&p, 1, 0xaaaa, NODE_PTR, NODE_COOKIE, 0x7f | FLAT_BINDER_FLAG_ACCEPTS_FDS,
		       0xbbbb);
	/* Called back on its node, then sent its own node. */
	for (int i = 0; i < 2; i++) {
		if (wait_txn(&p, &c, 1))
			exit(1);
		say("  target ptr 0x%llx cookie 0x%llx", (unsigned long long)c.u.tr.target.ptr,
		    (unsigned long long)c.u.tr.cookie);
		if (c.u.tr.offsets_size)
			show_msg(&c);
		free_buffer(&p, c.u.tr.data.ptr.buffer);
		reply(&p, 0, "done", 5);
		complete(&p);
	}
	/* The manager lets go of its reference. */
	post(&obj_go);
	show_nodes_until_decrefs(&p);
	post(&obj_done);
}

static void obj_manager(void *arg)
{
	struct bp p;
	struct br c;
	struct chan *ready = arg;
	struct wb w = { .n = 0 };
	struct objmsg m;
	binder_size_t off = offsetof(struct objmsg, obj);

	bopen(&p, MAP_SIZE);
	manager_or_die(&p, NULL);
	post(ready);
	if (wait_txn(&p, &c, 1))
		exit(1);
	show_msg(&c);
	m = *msg_of(&c);
	node_info(&p, m.obj.handle, "as received");
	bc32(&p, BC_ACQUIRE, m.obj.handle, "BC_ACQUIRE");
	node_info(&p, m.obj.handle, "after BC_ACQUIRE");
	free_buffer(&p, c.u.tr.data.ptr.buffer);
	node_info(&p, m.obj.handle, "after BC_FREE_BUFFER");
	reply(&p, 0, "got it", 7);
	complete(&p);
	say("calls back on the handle:");
	call(&p, m.obj.handle, 2, "call back", 10, NULL, 0, 0);
	say("sends the handle home:");
	m.before = 0xcccc;
	m.after = 0xdddd;
	call(&p, m.obj.handle, 3, &m, sizeof(m), &off, sizeof(off), 0);
	node_info(&p, m.obj.handle, "after the calls");
	await(&obj_go);
	bc32(&p, BC_RELEASE, m.obj.handle, "BC_RELEASE");
	node_info(&p, m.obj.handle, "after BC_RELEASE");
	bc32(&p, BC_DECREFS, m.obj.handle, "BC_DECREFS");
	node_info(&p, m.obj.handle, "after BC_DECREFS");
	put32(&w, BC_INCREFS);
	put32(&w, m.obj.handle);
	bc(&p, &w, "BC_INCREFS on the dropped handle");
	node_info(&p, 0, "(its own node)");
	await(&obj_done);
}

/* Reference counts: three processes hold the node, then let go. */
static struct chan rc_sent, rc_drop, rc_dropped, rc_end;

static void rc_owner(void *arg)
{
	struct bp p;

	(void)arg;
	bopen(&p, MAP_SIZE);
	say("registers with the manager:");
	call_with_node(&p, 1, 1, NODE_PTR, NODE_COOKIE, 0, 2);
	post(&rc_sent);
	/* Every count change the others make reaches the owner. */
	show_nodes_until_decrefs(&p);
	post(&rc_end);
	post(&rc_end);
}

/* The holder's node, for the manager to call it by (handle 2 in the
 * manager: the owner's node is handle 1). */
static void rc_holder_main(void *arg)
{
	struct bp p;
	struct br c;
	uint32_t h;

	(void)arg;
	bopen(&p, MAP_SIZE);
	await(&rc_sent);
	say("registers with the manager:");
	call_with_node(&p, 2, 5, 0x401d, 0x401d, 0, 6);
	/* Receives the owner's handle from the manager. */
	if (wait_txn(&p, &c, 0))
		exit(1);
	show_msg(&c);
	h = msg_of(&c)->obj.handle;
	bc32(&p, BC_ACQUIRE, h, "BC_ACQUIRE");
	free_buffer(&p, c.u.tr.data.ptr.buffer);
	reply(&p, 0, NULL, 0);
	complete(&p);
	say("node info as a non-manager: %s",
	    res(ioctl(p.fd, BINDER_GET_NODE_INFO_FOR_REF,
		      &(struct binder_node_info_for_ref){ .handle = h })));
	await(&rc_drop);
	bc32(&p, BC_RELEASE, h, "BC_RELEASE");
	post(&rc_dropped);
	await(&rc_drop);
	bc32(&p, BC_DECREFS, h, "BC_DECREFS");
	post(&rc_dropped);
	await(&rc_end);
}

static void rc_manager_main(void *arg)
{
	struct bp p;
	struct br c;
	struct chan *ready = arg;
	struct objmsg m;
	binder_size_t off = offsetof(struct objmsg, obj);
	struct binder_node_info_for_ref bad = { .handle = 1, .strong_count = 1 };
	uint32_t h, holder;

	bopen(&p, MAP_SIZE);
	manager_or_die(&p, NULL);
	post(ready);
	/* The owner's node, then the holder's. */
	for (int i = 0; i < 2; i++) {
		if (wait_txn(&p, &c, 0))
			exit(1);
		if (i == 0)
			m = *msg_of(&c);
		else
			holder = msg_of(&c)->obj.handle;
		bc32(&p, BC_ACQUIRE, msg_of(&c)->obj.handle, "BC_ACQUIRE");
		free_buffer(&p, c.u.tr.data.ptr.buffer);
		reply(&p, 0, NULL, 0);
		complete(&p);
	}
	h = m.obj.handle;
	say("handles: owner's node %u, holder's node %u", h, holder);
	node_info(&p, h, "held by the manager");
	say("node info with a count filled in: %s",
	    res(ioctl(p.fd, BINDER_GET_NODE_INFO_FOR_REF, &bad)));
	node_info(&p, 9, "(no such handle)");
	m.before = 3;
	m.after = 4;
	say("passes the owner's handle to the holder:");
	call(&p, holder, 1, &m, sizeof(m), &off, sizeof(off), 0);
	node_info(&p, h, "held by manager and holder");
	post(&rc_drop);
	await(&rc_dropped);
	node_info(&p, h, "after the holder's BC_RELEASE");
	post(&rc_drop);
	await(&rc_dropped);
	node_info(&p, h, "after the holder's BC_DECREFS");
	bc32(&p, BC_RELEASE, h, "BC_RELEASE");
	node_info(&p, h, "after the manager's BC_RELEASE");
	bc32(&p, BC_DECREFS, h, "BC_DECREFS");
	node_info(&p, h, "after the manager's BC_DECREFS");
	await(&rc_end);
}

/* Death: the manager holds a server's node and asks to hear of its death;
 * the server dies in the middle of a call. */
static struct chan dth_called;

static void dth_server(void *arg)
{
	struct bp p;
	struct br c;

	(void)arg;
	bopen(&p, MAP_SIZE);
	call_with_node(&p, 1, 7, NODE_PTR, NODE_COOKIE, 0, 8);
	/* Takes the manager's call and never answers: it is killed. */
	if (wait_txn(&p, &c, 1))
		exit(1);
	post(&dth_called);
	pause();
}

static void dth_manager(void *arg)
{
	struct bp p;
	struct br c;
	struct chan *ready = arg;
	struct wb w = { .n = 0 };
	uint32_t h;
	struct txn t;

	bopen(&p, MAP_SIZE);
	manager_or_die(&p, NULL);
	post(ready);
	if (wait_txn(&p, &c, 0))
		exit(1);
	h = msg_of(&c)->obj.handle;
	bc32(&p, BC_ACQUIRE, h, "BC_ACQUIRE");
	free_buffer(&p, c.u.tr.data.ptr.buffer);
	reply(&p, 0, NULL, 0);
	complete(&p);
	put32(&w, BC_REQUEST_DEATH_NOTIFICATION);
	put32(&w, h);
	put64(&w, 0xdead);
	bc(&p, &w, "BC_REQUEST_DEATH_NOTIFICATION");
	say("calls the server, which is killed before it replies:");
	t = (struct txn){ BC_TRANSACTION, h, 9, 0, "last words?", 12, NULL, 0 };
	if (send_txn(&p, &t))
		say("BC_TRANSACTION: %s", res(-1));
	wait_reply(&p, &c, 0);
	say("reads on:");
	for (;;) {
		if (bnext(&p, &c)) {
			say("read: %s", res(-1));
			return;
		}
		if (c.cmd == BR_DEAD_BINDER) {
			say("BR_DEAD_BINDER cookie 0x%llx", (unsigned long long)c.u.cookie);
			break;
		}
		say("%s", brname(c.cmd));
	}
	say("calls the dead node:");
	call(&p, h, 10, "anyone?", 8, NULL, 0, 0);
	put32(&w, BC_DEAD_BINDER_DONE);
	put64(&w, 0xdead);
	bc(&p, &w, "BC_DEAD_BINDER_DONE");
	put32(&w, BC_CLEAR_DEATH_NOTIFICATION);
	put32(&w, h);
	put64(&w, 0xdead);
	bc(&p, &w, "BC_CLEAR_DEATH_NOTIFICATION");
	if (bnext(&p, &c) == 0)
		say("%s cookie 0x%llx", brname(c.cmd), (unsigned long long)c.u.cookie);
	/* A new notification on the dead node is sent at once. */
	put32(&w, BC_REQUEST_DEATH_NOTIFICATION);
	put32(&w, h);
	put64(&w, 0xdead3);
	bc(&p, &w, "BC_REQUEST_DEATH_NOTIFICATION on the dead node");
	if (bnext(&p, &c) == 0)
		say("%s cookie 0x%llx", brname(c.cmd), (unsigned long long)c.u.cookie);
	put32(&w, BC_DEAD_BINDER_DONE);
	put64(&w, 0xdead3);
	bc(&p, &w, "BC_DEAD_BINDER_DONE");
	bc32(&p, BC_RELEASE, h, "BC_RELEASE");
	bc32(&p, BC_DECREFS, h, "BC_DECREFS");
	node_info(&p, h, "after letting go");
}

/* Fd passing. */
struct fdmsg {
	struct binder_fd_object obj;
};

static void fd_client(void *arg)
{
	struct bp p;
	int pfd[2];
	struct fdmsg m;
	binder_size_t off = 0;
	int refuse = *(int *)arg;

	bopen(&p, MAP_SIZE);
	if (pipe(pfd))
		exit(1);
	if (write(pfd[1], "through a pipe", 15) != 15)
		exit(1);
	close(pfd[1]);
	memset(&m, 0, sizeof(m));
	m.obj.hdr.type = BINDER_TYPE_FD;
	m.obj.fd = pfd[0];
	m.obj.cookie = 0xf00d;
	say("sends the read end of a pipe:");
	call(&p, 0, 1, &m, sizeof(m), &off, sizeof(off), TF_ACCEPT_FDS);
	close(pfd[0]);
	if (refuse) {
		say("a plain call afterwards:");
		call(&p, 0, 5, "still there?", 13, NULL, 0, 0);
		return;
	}
	m.obj.fd = 999;
	say("sends fd 999, which it does not have:");
	call(&p, 0, 2, &m, sizeof(m), &off, sizeof(off), TF_ACCEPT_FDS);
	say("a call without TF_ACCEPT_FDS, answered with an fd:");
	call(&p, 0, 3, "no fds please", 14, NULL, 0, 0);
	say("a call with TF_ACCEPT_FDS, answered with an fd:");
	{
		struct br c;
		struct txn t = { BC_TRANSACTION, 0, 4, TF_ACCEPT_FDS, "fds welcome", 12, NULL, 0 };
		const struct binder_fd_object *o;
		char buf[32] = "";
		int n;

		send_txn(&p, &t);
		if (wait_reply(&p, &c, 1) != BR_REPLY)
			return;
		o = (const void *)(uintptr_t)c.u.tr.data.ptr.buffer;
		n = read(o->fd, buf, sizeof(buf) - 1);
		say("  read through the received fd: %d bytes '%s'", n, n > 0 ? buf : "");
		say("  close-on-exec: %s", yes(fcntl(o->fd, F_GETFD) & FD_CLOEXEC));
		close(o->fd);
		free_buffer(&p, c.u.tr.data.ptr.buffer);
	}
}

static void fd_manager(void *arg)
{
	struct bp p;
	struct br c;
	struct chan *ready = arg;
	struct flat_binder_object ext = { .hdr.type = BINDER_TYPE_BINDER,
					  .flags = FLAT_BINDER_FLAG_ACCEPTS_FDS };
	const struct binder_fd_object *o;
	char buf[32] = "";
	int n, pfd[2];
	struct fdmsg m;
	binder_size_t off = 0;

	bopen(&p, MAP_SIZE);
	manager_or_die(&p, &ext);
	post(ready);
	if (wait_txn(&p, &c, 1))
		exit(1);
	o = (const void *)(uintptr_t)c.u.tr.data.ptr.buffer;
	say("  object type FD: %s, cookie 0x%llx", yes(o->hdr.type == BINDER_TYPE_FD),
	    (unsigned long long)o->cookie);
	n = read(o->fd, buf, sizeof(buf) - 1);
	say("  read through the received fd: %d bytes '%s'", n, n > 0 ? buf : "");
	say("  close-on-exec: %s", yes(fcntl(o->fd, F_GETFD) & FD_CLOEXEC));
	close(o->fd);
	free_buffer(&p, c.u.tr.data.ptr.buffer);
	reply(&p, 0, NULL, 0);
	complete(&p);
	/* The call with a bad fd never arrives; then two calls answered with
	 * an fd. */
	if (pipe(pfd))
		exit(1);
	if (write(pfd[1], "back again", 11) != 11)
		exit(1);
	close(pfd[1]);
	memset(&m, 0, sizeof(m));
	m.obj.hdr.type = BINDER_TYPE_FD;
	m.obj.fd = pfd[0];
	for (int i = 0; i < 2; i++) {
		struct txn t = { BC_REPLY, 0, 0, 0, &m, sizeof(m), &off, sizeof(off) };

		if (wait_txn(&p, &c, 1))
			exit(1);
		free_buffer(&p, c.u.tr.data.ptr.buffer);
		if (send_txn(&p, &t))
			say("BC_REPLY: %s", res(-1));
		read_one(&p);
	}
	close(pfd[0]);
}

/* fd_client's argument: whether the manager refuses fds. */
static int fd_refuse[] = { 0, 1 };

/* A manager made with plain SET_CONTEXT_MGR does not accept fds. */
static void s_fd_refused(void)
{
	start_manager(1, NULL, 0);
	spawn("client", fd_client, &fd_refuse[1]);
	reap();
}

/* One-way calls arrive in order, at most half the buffer at a time. */
static struct chan ow_sent;

static void ow_client(void *arg)
{
	struct bp p;
	char msg[16];
	static char half[32768];
	struct txn t;

	(void)arg;
	bopen(&p, MAP_SIZE);
	for (int i = 1; i <= 5; i++) {
		snprintf(msg, sizeof(msg), "one-way %d", i);
		t = (struct txn){ BC_TRANSACTION, 0, i, TF_ONE_WAY, msg, strlen(msg) + 1, NULL, 0 };
		if (send_txn(&p, &t))
			say("BC_TRANSACTION: %s", res(-1));
		read_one(&p);
	}
	memset(half, 'h', sizeof(half));
	/* The manager maps 64 KiB: one-way calls get 32 KiB, 5 * 16 of
	 * which the first five take. */
	t = (struct txn){ BC_TRANSACTION, 0, 6, TF_ONE_WAY, half, sizeof(half) - 5 * 16, NULL, 0 };
	say("one-way call of the rest of the one-way half:");
	send_txn(&p, &t);
	read_one(&p);
	t = (struct txn){ BC_TRANSACTION, 0, 7, TF_ONE_WAY, "x", 2, NULL, 0 };
	say("one more one-way call:");
	send_txn(&p, &t);
	read_one(&p);
	/* A two-way call still fits in the other half. Queued before the
	 * manager reads anything: it overtakes the one-way calls still
	 * waiting for the first one's buffer to be freed. */
	say("a two-way call of 16 KiB:");
	t = (struct txn){ BC_TRANSACTION, 0, 8, 0, half, 16384, NULL, 0 };
	send_txn(&p, &t);
	post(&ow_sent);
	wait_reply(&p, &(struct br){ 0 }, 0);
}

static void ow_manager(void *arg)
{
	struct bp p;
	struct br c;
	struct chan *ready = arg;

	bopen(&p, 64 * 1024);
	manager_or_die(&p, NULL);
	post(ready);
	await(&ow_sent);
	for (int i = 0; i < 7; i++) {
		if (wait_txn(&p, &c, 0))
			exit(1);
		say("BR_TRANSACTION code %u flags 0x%x %llu bytes sender_pid %s", c.u.tr.code,
		    c.u.tr.flags, (unsigned long long)c.u.tr.data_size, who(c.u.tr.sender_pid));
		free_buffer(&p, c.u.tr.data.ptr.buffer);
		if (!(c.u.tr.flags & TF_ONE_WAY)) {
			reply(&p, 0, NULL, 0);
			complete(&p);
		}
	}
}

/* Hostile WRITE_READ arguments. */
static char *guarded_page(void)
{
	char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED || mprotect(m + 4096, 4096, PROT_NONE))
		exit(1);
	return m; /* 4096 usable bytes, then a page that faults */
}

static void bwr_case(struct bp *p, const char *what, struct binder_write_read *bwr)
{
	int ret = ioctl(p->fd, BINDER_WRITE_READ, bwr);

	say("%s: %s, write_consumed %llu, read_consumed %llu", what, res(ret),
	    (unsigned long long)bwr->write_consumed, (unsigned long long)bwr->read_consumed);
}

static void s_bad_write_read(void)
{
	struct bp p;
	char *g = guarded_page();
	char *hole = g + 4096;
	uint32_t cmds[2] = { BC_ENTER_LOOPER, BC_EXIT_LOOPER };
	struct binder_write_read bwr;
	int fd;

	bopen(&p, MAP_SIZE);
	say("BINDER_WRITE_READ from NULL: %s", res(ioctl(p.fd, BINDER_WRITE_READ, NULL)));
	say("BINDER_WRITE_READ from an unmapped page: %s",
	    res(ioctl(p.fd, BINDER_WRITE_READ, hole)));
	bwr = (struct binder_write_read){ .write_buffer = (uintptr_t)hole, .write_size = 4 };
	bwr_case(&p, "write_buffer unmapped", &bwr);
	bwr = (struct binder_write_read){ .write_buffer = 0, .write_size = 8 };
	bwr_case(&p, "write_buffer NULL", &bwr);
	/* A command at the end of a page, and write_size running past it. */
	memcpy(hole - 4, &cmds[0], 4);
	bwr = (struct binder_write_read){ .write_buffer = (uintptr_t)(hole - 4),
					  .write_size = 1 << 20 };
	bwr_case(&p, "write_size past the mapped memory", &bwr);
	bwr = (struct binder_write_read){ .write_buffer = (uintptr_t)(hole - 4),
					  .write_size = ~0ULL };
	bwr_case(&p, "write_size ~0", &bwr);
	/* write_consumed at or past write_size: nothing to do. */
	bwr = (struct binder_write_read){ .write_buffer = (uintptr_t)cmds, .write_size = 8,
					  .write_consumed = 8 };
	bwr_case(&p, "write_consumed == write_size", &bwr);
	bwr = (struct binder_write_read){ .write_buffer = (uintptr_t)cmds, .write_size = 8,
					  .write_consumed = 4 };
	bwr_case(&p, "write_consumed 4 of 8", &bwr);
	/* Reads into bad memory; the fd is non-blocking so nothing waits. */
	fd = open(device, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	{
		struct bp q = { .fd = fd };

		bwr = (struct binder_write_read){ .read_buffer = (uintptr_t)hole, .read_size = 64 };
		bwr_case(&q, "read_buffer unmapped", &bwr);
		bwr = (struct binder_write_read){ .read_buffer = 0, .read_size = 64 };
		bwr_case(&q, "read_buffer NULL", &bwr);
		bwr = (struct binder_write_read){ .read_buffer = (uintptr_t)(hole - 4),
						  .read_size = 1 << 20 };
		bwr_case(&q, "read_size past the mapped memory, no work", &bwr);
	}
	close(fd);
	say("BINDER_VERSION afterwards: %s",
	    res(ioctl(p.fd, BINDER_VERSION, &(struct binder_version){ 0 })));
}

/* A read buffer too small for the transaction waiting: only BR_NOOP. */
static void small_read_client(void *arg)
{
	struct bp p;

	(void)arg;
	bopen(&p, MAP_SIZE);
	call(&p, 0, 0x77, "read me", 8, NULL, 0, 0);
}

static void small_read_manager(void *arg)
{
	struct bp p;
	struct br c;
	struct chan *ready = arg;
	struct binder_write_read bwr;
	uint8_t small[16];

	bopen(&p, MAP_SIZE);
	manager_or_die(&p, NULL);
	post(ready);
	/* Wait until the call is there (poll), then read with 16 bytes. */
	bwr = (struct binder_write_read){ .read_buffer = (uintptr_t)small, .read_size = sizeof(small) };
	bwr_case(&p, "read with a 16-byte buffer", &bwr);
	say("  first word BR_NOOP: %s", yes(*(uint32_t *)small == BR_NOOP));
	if (wait_txn(&p, &c, 1))
		exit(1);
	free_buffer(&p, c.u.tr.data.ptr.buffer);
	reply(&p, 0x78, "read", 5);
	complete(&p);
}

/* Truncated and unknown commands, and commands about things that are not
 * there. */
static void s_bad_commands(void)
{
	struct bp p;
	char *g = guarded_page();
	char *hole = g + 4096;
	struct binder_write_read bwr;
	struct br c;
	struct wb w = { .n = 0 };
	uint32_t cmd;

	bopen(&p, MAP_SIZE);
	cmd = 0x12345678;
	say("unknown command: %s", errname(-bwrite(&p, &cmd, 4)));
	put32(&w, BC_ENTER_LOOPER);
	put32(&w, _IO('c', 99));
	bwr = (struct binder_write_read){ .write_buffer = (uintptr_t)w.b, .write_size = w.n };
	bwr_case(&p, "BC_ENTER_LOOPER then an unknown BC number", &bwr);
	w.n = 0;
	/* Commands whose argument runs into the unmapped page. */
	cmd = BC_TRANSACTION;
	memcpy(hole - 4 - 16, &cmd, 4);
	bwr = (struct binder_write_read){ .write_buffer = (uintptr_t)(hole - 20), .write_size = 20 };
	bwr_case(&p, "BC_TRANSACTION cut short by an unmapped page", &bwr);
	cmd = BC_INCREFS;
	memcpy(hole - 4, &cmd, 4);
	bwr = (struct binder_write_read){ .write_buffer = (uintptr_t)(hole - 4), .write_size = 8 };
	bwr_case(&p, "BC_INCREFS cut short", &bwr);
	cmd = BC_FREE_BUFFER;
	memcpy(hole - 4, &cmd, 4);
	bwr_case(&p, "BC_FREE_BUFFER cut short", &bwr);
	cmd = BC_REQUEST_DEATH_NOTIFICATION;
	memcpy(hole - 8, &cmd, 4);
	memcpy(hole - 4, &(uint32_t){ 1 }, 4);
	bwr = (struct binder_write_read){ .write_buffer = (uintptr_t)(hole - 8), .write_size = 16 };
	bwr_case(&p, "BC_REQUEST_DEATH_NOTIFICATION cut short", &bwr);
	/* Well-formed commands about things that do not exist: ignored. */
	put32(&w, BC_FREE_BUFFER);
	put64(&w, (uintptr_t)p.map + 64);
	bc(&p, &w, "BC_FREE_BUFFER of a buffer never given");
	say("BC_FREE_BUFFER of a buffer never given: done");
	bc32(&p, BC_ACQUIRE, 42, "BC_ACQUIRE of handle 42");
	bc32(&p, BC_RELEASE, 42, "BC_RELEASE of handle 42");
	bc32(&p, BC_DECREFS, 0, "BC_DECREFS of handle 0");
	put32(&w, BC_INCREFS_DONE);
	put64(&w, 0x1111);
	put64(&w, 0x2222);
	bc(&p, &w, "BC_INCREFS_DONE of no node");
	put32(&w, BC_ACQUIRE_DONE);
	put64(&w, 0x1111);
	put64(&w, 0x2222);
	bc(&p, &w, "BC_ACQUIRE_DONE of no node");
	put32(&w, BC_REQUEST_DEATH_NOTIFICATION);
	put32(&w, 42);
	put64(&w, 0x1);
	bc(&p, &w, "BC_REQUEST_DEATH_NOTIFICATION for handle 42");
	put32(&w, BC_CLEAR_DEATH_NOTIFICATION);
	put32(&w, 42);
	put64(&w, 0x1);
	bc(&p, &w, "BC_CLEAR_DEATH_NOTIFICATION for handle 42");
	put32(&w, BC_DEAD_BINDER_DONE);
	put64(&w, 0x1);
	bc(&p, &w, "BC_DEAD_BINDER_DONE of no death");
	say("well-formed commands about nothing: done");
	/* A reply with nothing to reply to fails this thread's next read. */
	say("BC_REPLY with no transaction:");
	reply(&p, 1, "unasked", 8);
	wait_reply(&p, &c, 0);
	say("BINDER_VERSION afterwards: %s",
	    res(ioctl(p.fd, BINDER_VERSION, &(struct binder_version){ 0 })));
}

/* Calls that must fail: a handle that does not exist, too much data,
 * offsets outside the data or misaligned, overlapping objects. */
static void bad_calls_client(void *arg)
{
	struct bp p;
	struct {
		struct flat_binder_object a;
		struct flat_binder_object b;
	} two;
	binder_size_t offs[2];
	static char big[256 * 1024];
	char *g = guarded_page();

	(void)arg;
	bopen(&p, MAP_SIZE);
	memset(&two, 0, sizeof(two));
	two.a.hdr.type = BINDER_TYPE_BINDER;
	two.a.binder = 0x100;
	two.a.cookie = 0x100;
	two.b.hdr.type = BINDER_TYPE_BINDER;
	two.b.binder = 0x200;
	two.b.cookie = 0x200;

	say("call to handle 7, which does not exist:");
	call(&p, 7, 1, "nobody", 7, NULL, 0, 0);
	say("call larger than the manager's buffer (256 KiB into 128 KiB):");
	call(&p, 0, 1, big, sizeof(big), NULL, 0, 0);
	say("data_size 2^63:");
	call(&p, 0, 1, big, 1ULL << 63, NULL, 0, 0);
	say("data pointer unmapped:");
	call(&p, 0, 1, g + 4096, 16, NULL, 0, 0);
	say("data running into an unmapped page:");
	call(&p, 0, 1, g + 4096 - 8, 16, NULL, 0, 0);
	offs[0] = 0;
	say("offsets pointer unmapped:");
	call(&p, 0, 1, &two, sizeof(two), (const void *)(g + 4096), 8, 0);
	say("offsets_size not a multiple of 8:");
	call(&p, 0, 1, &two, sizeof(two), offs, 4, 0);
	offs[0] = sizeof(two);
	say("offset at the end of the data:");
	call(&p, 0, 1, &two, sizeof(two), offs, 8, 0);
	offs[0] = sizeof(two) - 8;
	say("object running past the end of the data:");
	call(&p, 0, 1, &two, sizeof(two), offs, 8, 0);
	offs[0] = 1ULL << 40;
	say("offset far outside the data:");
	call(&p, 0, 1, &two, sizeof(two), offs, 8, 0);
	offs[0] = 2;
	say("misaligned offset (2):");
	call(&p, 0, 1, &two, sizeof(two), offs, 8, 0);
	offs[0] = 0;
	offs[1] = 8;
	say("overlapping objects (offsets 0 and 8):");
	call(&p, 0, 1, &two, sizeof(two), offs, 16, 0);
	offs[0] = sizeof(two.a);
	offs[1] = 0;
	say("objects in decreasing order:");
	call(&p, 0, 1, &two, sizeof(two), offs, 16, 0);
	offs[0] = 0;
	two.a.hdr.type = 0x12345678;
	say("object of an unknown type:");
	call(&p, 0, 1, &two, sizeof(two), offs, 8, 0);
	two.a.hdr.type = BINDER_TYPE_HANDLE;
	two.a.handle = 77;
	say("handle object for a handle it does not have:");
	call(&p, 0, 1, &two, sizeof(two), offs, 8, 0);
	two.a.hdr.type = BINDER_TYPE_BINDER;
	two.a.binder = 0x100;
	two.b.binder = 0x100;
	two.b.cookie = 0x999;
	offs[1] = sizeof(two.a);
	say("one node sent with two different cookies:");
	call(&p, 0, 1, &two, sizeof(two), offs, 16, 0);
	say("a good call after all that:");
	call(&p, 0, 2, "fine", 5, NULL, 0, 0);
}

static void s_bad_calls(void)
{
	start_manager(1, NULL, 0);
	spawn("client", bad_calls_client, NULL);
	reap();
}

/* A nested call: while the manager handles the client's call, it calls
 * the node the client sent; the driver hands that call to the client's
 * thread that is waiting for its reply (the transaction stack). */
static void nested_client(void *arg)
{
	struct bp p;
	struct br c;
	struct objmsg m = { 9, { .hdr.type = BINDER_TYPE_BINDER, .binder = 0xc0de,
				 .cookie = 0xc0de }, 10 };
	binder_size_t off = offsetof(struct objmsg, obj);
	struct txn t = { BC_TRANSACTION, 0, 1, 0, &m, sizeof(m), &off, sizeof(off) };

	(void)arg;
	bopen(&p, MAP_SIZE);
	say("calls the manager with its node:");
	if (send_txn(&p, &t))
		say("BC_TRANSACTION: %s", res(-1));
	for (;;) {
		uint32_t got = wait_reply(&p, &c, 0);

		if (got != BR_TRANSACTION)
			break;
		show_txn(&p, "  (nested) BR_TRANSACTION", &c.u.tr);
		say("  target ptr 0x%llx", (unsigned long long)c.u.tr.target.ptr);
		free_buffer(&p, c.u.tr.data.ptr.buffer);
		reply(&p, 0x42, "nested reply", 13);
	}
}

static void nested_manager(void *arg)
{
	struct bp p;
	struct br c;
	struct chan *ready = arg;
	uint32_t h;

	bopen(&p, MAP_SIZE);
	manager_or_die(&p, NULL);
	post(ready);
	if (wait_txn(&p, &c, 1))
		exit(1);
	h = msg_of(&c)->obj.handle;
	bc32(&p, BC_ACQUIRE, h, "BC_ACQUIRE");
	free_buffer(&p, c.u.tr.data.ptr.buffer);
	say("calls the client's node while handling its call:");
	call(&p, h, 2, "are you there?", 15, NULL, 0, 0);
	bc32(&p, BC_RELEASE, h, "BC_RELEASE");
	say("replies to the first call:");
	reply(&p, 0x11, "outer reply", 12);
	complete(&p);
}

/* poll: readable when work is waiting for this thread, not before. */
static struct chan poll_sent;

static void poll_client(void *arg)
{
	struct bp p;
	struct br c;
	struct txn t = { BC_TRANSACTION, 0, 3, 0, "poll me", 8, NULL, 0 };

	(void)arg;
	bopen(&p, MAP_SIZE);
	if (send_txn(&p, &t))
		say("BC_TRANSACTION: %s", res(-1));
	post(&poll_sent);
	wait_reply(&p, &c, 0);
}

static void poll_manager(void *arg)
{
	struct bp p;
	struct br c;
	struct chan *ready = arg;
	struct pollfd pfd;
	int n;

	bopen(&p, MAP_SIZE);
	manager_or_die(&p, NULL);
	pfd = (struct pollfd){ .fd = p.fd, .events = POLLIN | POLLOUT };
	n = poll(&pfd, 1, 0);
	say("poll with nothing waiting: %d, revents 0x%x", n, pfd.revents);
	post(ready);
	await(&poll_sent);
	pfd.revents = 0;
	n = poll(&pfd, 1, 1000);
	say("poll with a call waiting: %d, revents 0x%x", n, pfd.revents);
	if (wait_txn(&p, &c, 1))
		exit(1);
	free_buffer(&p, c.u.tr.data.ptr.buffer);
	pfd.revents = 0;
	n = poll(&pfd, 1, 0);
	say("poll while handling it: %d, revents 0x%x", n, pfd.revents);
	reply(&p, 4, "polled", 7);
	complete(&p);
	pfd.revents = 0;
	n = poll(&pfd, 1, 0);
	say("poll after the reply: %d, revents 0x%x", n, pfd.revents);
}

/* A caller killed while the manager handles its call: the reply has
 * nobody to go to. A second manager thread waits for the caller's death
 * notice, which the driver sends once it has released the caller. */
static struct chan cd_called, cd_dead;
static struct bp cd_p;

static void *cd_watch(void *arg)
{
	struct bp p = cd_p;
	struct br c;
	uint32_t cmd = BC_ENTER_LOOPER;

	(void)arg;
	bwrite(&p, &cmd, 4);
	for (;;) {
		if (bnext(&p, &c)) {
			say("read: %s", res(-1));
			break;
		}
		if (c.cmd == BR_DEAD_BINDER) {
			struct wb w = { .n = 0 };

			say("(second thread) BR_DEAD_BINDER cookie 0x%llx",
			    (unsigned long long)c.u.cookie);
			put32(&w, BC_DEAD_BINDER_DONE);
			put64(&w, c.u.cookie);
			bc(&p, &w, "BC_DEAD_BINDER_DONE");
			break;
		}
		say("(second thread) %s", brname(c.cmd));
	}
	post(&cd_dead);
	return NULL;
}

static void cd_client(void *arg)
{
	struct bp p;

	(void)arg;
	bopen(&p, MAP_SIZE);
	say("calls the manager and is killed while it waits:");
	call_with_node(&p, 1, 11, 0xd1e, 0xd1e, 0, 12);
	say("got a reply after all");
}

static void cd_manager(void *arg)
{
	struct br c;
	struct chan *ready = arg;
	struct wb w = { .n = 0 };
	pthread_t watcher;
	uint32_t h;

	bopen(&cd_p, MAP_SIZE);
	manager_or_die(&cd_p, NULL);
	post(ready);
	if (wait_txn(&cd_p, &c, 1))
		exit(1);
	h = msg_of(&c)->obj.handle;
	put32(&w, BC_ACQUIRE);
	put32(&w, h);
	put32(&w, BC_REQUEST_DEATH_NOTIFICATION);
	put32(&w, h);
	put64(&w, 0xca11);
	bc(&cd_p, &w, "BC_ACQUIRE + BC_REQUEST_DEATH_NOTIFICATION");
	pthread_create(&watcher, NULL, cd_watch, NULL);
	post(&cd_called);
	await(&cd_dead);
	free_buffer(&cd_p, c.u.tr.data.ptr.buffer);
	say("replies to the dead caller:");
	reply(&cd_p, 1, "too late", 9);
	read_one(&cd_p);
	pthread_join(watcher, NULL);
}

/* A process that has unmapped its buffer area is gone for binder (C's "no
 * vma"): a call to it fails with BR_DEAD_REPLY. A page of a mapping that no
 * buffer has used is not there: reading it raises SIGBUS. */
static struct chan um_done;

static void um_manager(void *arg)
{
	struct bp p;

	bopen(&p, MAP_SIZE);
	manager_or_die(&p, NULL);
	say("munmap of the buffer area: %s", res(munmap(p.map, p.size)));
	post(arg);
	await(&um_done);
}

static void um_client(void *arg)
{
	struct bp p;
	volatile char *last;

	(void)arg;
	bopen(&p, MAP_SIZE);
	say("call to the manager, which has unmapped its buffer area:");
	call(&p, 0, 1, "anyone?", 8, NULL, 0, 0);
	post(&um_done);
	say("read of the last page of this process's mapping, which no buffer used:");
	last = p.map + p.size - 1;
	say("read %d", *last);
}

/* Pages of freed buffers go back to the kernel when it asks (C's
 * binder_shrinker, Rust's kernel::shrinker): a call whose buffer spans
 * several pages, both buffers freed, then drop_caches (2: the shrinkers,
 * as `echo 2 > /proc/sys/vm/drop_caches` does); a page wholly
 * inside the freed buffer is gone (SIGBUS) until another call takes the same
 * place, whose data reads back. */
#define RCL_SIZE (4 * 4096 + 100)
#define RCL_PAGE 4096
static struct chan rcl_freed, rcl_probed;
static sigjmp_buf rcl_jmp;

static void rcl_on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(rcl_jmp, 1);
}

/* 1 if reading the byte at `addr` raises SIGBUS. A forked child would not
 * do: the mapping is VM_DONTCOPY. */
static int rcl_faults(const volatile char *addr)
{
	struct sigaction sa = { .sa_handler = rcl_on_sigbus }, old;
	int bus = 1;

	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(rcl_jmp, 1) == 0) {
		(void)*addr;
		bus = 0;
	}
	sigaction(SIGBUS, &old, NULL);
	return bus;
}

static void rcl_fill(uint8_t *d, size_t n, int round)
{
	for (size_t i = 0; i < n; i++)
		d[i] = (uint8_t)(i * 7 + round * 13 + i / RCL_PAGE);
}

/* Prints how many of the pages wholly inside [off, off + n) of the mapping
 * fault. */
static void rcl_probe(struct bp *p, size_t off, size_t n, const char *when)
{
	size_t first = (off + RCL_PAGE - 1) / RCL_PAGE, end = (off + n) / RCL_PAGE;
	int bus = 0;

	for (size_t i = first; i < end; i++)
		bus += rcl_faults(p->map + i * RCL_PAGE);
	say("%s: %d of the %d pages wholly inside the first buffer fault (SIGBUS)", when, bus,
	    (int)(end - first));
}

static void rcl_drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	int ok = fd >= 0 && write(fd, "2", 1) == 1;

	say("drop_caches: %s", ok ? "ok" : res(-1));
	if (fd >= 0)
		close(fd);
}

static void rcl_manager(void *arg)
{
	static uint8_t want[RCL_SIZE];
	struct bp p;
	struct br c;
	size_t off = 0;

	bopen(&p, MAP_SIZE);
	manager_or_die(&p, NULL);
	post(arg);
	for (int round = 1; round <= 2; round++) {
		const uint8_t *d;

		if (wait_txn(&p, &c, 0))
			exit(1);
		d = (const uint8_t *)(uintptr_t)c.u.tr.data.ptr.buffer;
		rcl_fill(want, sizeof(want), round);
		say("call %d: %llu bytes at offset %zu of the mapping, data as sent: %s", round,
		    (unsigned long long)c.u.tr.data_size, (size_t)((const char *)d - p.map),
		    yes(c.u.tr.data_size == RCL_SIZE && !memcmp(d, want, RCL_SIZE)));
		if (round == 1)
			off = (const char *)d - p.map;
		else
			rcl_probe(&p, off, RCL_SIZE, "in the second call");
		free_buffer(&p, c.u.tr.data.ptr.buffer);
		reply(&p, round, "done", 5);
		complete(&p);
		if (round == 1) {
			await(&rcl_freed);
			rcl_probe(&p, off, RCL_SIZE, "both buffers freed");
			rcl_drop_caches();
			rcl_probe(&p, off, RCL_SIZE, "after drop_caches");
			post(&rcl_probed);
		}
	}
}

static void rcl_client(void *arg)
{
	static uint8_t data[RCL_SIZE];
	struct bp p;

	(void)arg;
	bopen(&p, MAP_SIZE);
	for (int round = 1; round <= 2; round++) {
		rcl_fill(data, sizeof(data), round);
		say("call %d of %d bytes (its reply's buffer freed at once):", round, RCL_SIZE);
		call(&p, 0, round, data, RCL_SIZE, NULL, 0, 0);
		if (round == 1) {
			post(&rcl_freed);
			await(&rcl_probed);
		}
	}
}

/* close() of any descriptor of the device, here a dup, is C's binder_flush:
 * every thread of the process returns from the read it waits in (or is
 * about to), with only BR_NOOP. The reader is known to the driver before
 * the close (its BC_ENTER_LOOPER), so the close finds it whether or not
 * it is asleep yet; it prints nothing itself, so the order never shows. */
struct flush_read {
	struct bp *p;
	struct chan entered;
	int ret;
	unsigned long long consumed;
	uint32_t first;
};

static void *flush_reader(void *arg)
{
	struct flush_read *r = arg;
	uint32_t buf[16] = { 0 };
	uint32_t enter = BC_ENTER_LOOPER;
	struct binder_write_read bwr = { 0 };

	bwr.write_buffer = (uintptr_t)&enter;
	bwr.write_size = sizeof(enter);
	if (ioctl(r->p->fd, BINDER_WRITE_READ, &bwr) < 0)
		r->ret = -errno;
	post(&r->entered);
	if (r->ret)
		return NULL;
	memset(&bwr, 0, sizeof(bwr));
	bwr.read_buffer = (uintptr_t)buf;
	bwr.read_size = sizeof(buf);
	r->ret = ioctl(r->p->fd, BINDER_WRITE_READ, &bwr) < 0 ? -errno : 0;
	r->consumed = bwr.read_consumed;
	r->first = buf[0];
	return NULL;
}

static void s_flush(void)
{
	struct bp p;
	struct flush_read r = { .p = &p };
	pthread_t t;

	bopen(&p, MAP_SIZE);
	chan_init(&r.entered);
	pthread_create(&t, NULL, flush_reader, &r);
	await(&r.entered);
	usleep(100000);
	say("close of a dup of the descriptor while a thread reads: %s", res(close(dup(p.fd))));
	pthread_join(t, NULL);
	say("the reader's read: %s, %llu bytes, first %s", r.ret ? errname(-r.ret) : "ok",
	    r.consumed, r.consumed >= 4 ? brname(r.first) : "-");
}

/* ------------------------------------------------------------------ */

/* The shape most scenarios have, which run() plays: the channels made
 * (before any fork, so that every process shares them), a context manager
 * started and ready, then the others in order; if `kill_on` is set, the
 * last of them is killed once it is posted; every process is reaped. */
struct cast {
	struct chan *chans[4];
	void (*manager)(void *);
	struct {
		const char *name;
		void (*fn)(void *);
		void *arg;
	} others[2];
	struct chan *kill_on;
};

struct scenario {
	const char *name;
	void (*fn)(void); /* the whole scenario, or NULL for `cast` */
	struct cast cast;
	/* Seconds: about ten times what the slowest takes on the debug kernel
	 * under TCG, so that a driver that leaves a process waiting (a lab's
	 * skeleton) costs little of the guest's time limit. */
	int timeout;
};

static const struct scenario scenarios[] = {
	{ "version", s_version, {}, 10 },
	{ "mmap", s_mmap, {}, 10 },
	{ "mmap-limit", s_mmap_limit, {}, 15 },
	{ "context-manager", s_context_manager, {}, 10 },
	{ "call-reply", s_call_reply, {}, 10 },
	{ "objects", NULL,
	  { { &obj_go, &obj_done }, obj_manager, { { "server", obj_server } } }, 10 },
	{ "refcounts", NULL,
	  { { &rc_sent, &rc_drop, &rc_dropped, &rc_end }, rc_manager_main,
	    { { "owner", rc_owner }, { "holder", rc_holder_main } } }, 10 },
	{ "death", NULL,
	  { { &dth_called }, dth_manager, { { "server", dth_server } }, &dth_called }, 10 },
	{ "fd-passing", NULL,
	  { {}, fd_manager, { { "client", fd_client, &fd_refuse[0] } } }, 10 },
	{ "fd-refused", s_fd_refused, {}, 10 },
	{ "oneway", NULL, { { &ow_sent }, ow_manager, { { "client", ow_client } } }, 10 },
	{ "bad-write-read", s_bad_write_read, {}, 10 },
	{ "small-read", NULL,
	  { {}, small_read_manager, { { "client", small_read_client } } }, 10 },
	{ "bad-commands", s_bad_commands, {}, 10 },
	{ "bad-calls", s_bad_calls, {}, 10 },
	{ "nested", NULL, { {}, nested_manager, { { "client", nested_client } } }, 10 },
	{ "poll", NULL, { { &poll_sent }, poll_manager, { { "client", poll_client } } }, 10 },
	{ "caller-dies", NULL,
	  { { &cd_called, &cd_dead }, cd_manager, { { "client", cd_client } }, &cd_called }, 10 },
	{ "unmapped", NULL, { { &um_done }, um_manager, { { "client", um_client } } }, 10 },
	{ "flush", s_flush, {}, 10 },
	{ "reclaim", NULL,
	  { { &rcl_freed, &rcl_probed }, rcl_manager, { { "client", rcl_client } } }, 20 },
};

#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))

static void play(const struct cast *c)
{
	int last = 0;

	for (int i = 0; i < 4 && c->chans[i]; i++)
		chan_init(c->chans[i]);
	start(c->manager);
	for (int i = 0; i < 2 && c->others[i].fn; i++)
		last = spawn(c->others[i].name, c->others[i].fn, c->others[i].arg);
	if (c->kill_on) {
		await(c->kill_on);
		kill_role(last);
	}
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Runs one scenario in a process group of its own; prints its output.
 * Returns 0 when it finished in time and every process exited 0. */
static int run(const struct scenario *s)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	pid_t leader;
	int st, timed_out = 0, bad = 0;

	memset(roles, 0, sizeof(struct role) * ROLES);
	snprintf(roles[0].name, sizeof(roles[0].name), "main");
	fflush(NULL);
	leader = fork();
	if (leader == 0) {
		setpgid(0, 0);
		me = 0;
		nroles = 1;
		memset(kids, 0, sizeof(kids));
		memset(killed, 0, sizeof(killed));
		roles[0].pid = getpid();
		if (s->fn)
			s->fn();
		else
			play(&s->cast);
		reap();
		_exit(0);
	}
	setpgid(leader, leader);
	sigaction(SIGALRM, &sa, NULL);
	alarm(s->timeout);
	while (waitpid(leader, &st, 0) < 0) {
		if (errno != EINTR)
			break;
		timed_out = 1;
		kill(-leader, SIGKILL);
	}
	alarm(0);
	/* Whatever the leader's processes left behind. */
	kill(-leader, SIGKILL);
	while (waitpid(-leader, NULL, 0) > 0)
		;
	printf("== %s\n", s->name);
	for (int i = 0; i < ROLES; i++)
		fwrite(roles[i].text, 1, roles[i].len, stdout);
	if (timed_out) {
		printf("TIMEOUT: %s did not finish within %d s\n", s->name, s->timeout);
		bad = 1;
	} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("FAILED: %s ended abnormally\n", s->name);
		bad = 1;
	}
	fflush(stdout);
	return bad;
}

/* ------------------------------------------------------------------ */
/* Benchmarks (`make bench-binder`): numbers, not snapshots.          */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* One BINDER_WRITE_READ: writes `w`, then reads into p->rbuf. */
static int wr(struct bp *p, struct wb *w)
{
	struct binder_write_read bwr = { 0 };

	bwr.write_buffer = (uintptr_t)w->b;
	bwr.write_size = w->n;
	bwr.read_buffer = (uintptr_t)p->rbuf;
	bwr.read_size = sizeof(p->rbuf);
	w->n = 0;
	if (ioctl(p->fd, BINDER_WRITE_READ, &bwr) < 0)
		return -errno;
	p->rlen = bwr.read_consumed;
	p->rpos = 0;
	return 0;
}

/* The next command of the last read, 0 when they are used up. */
static uint32_t take(struct bp *p, struct br *c)
{
	while (p->rpos < p->rlen) {
		uint32_t size;

		memcpy(&c->cmd, p->rbuf + p->rpos, 4);
		size = _IOC_SIZE(c->cmd);
		memcpy(&c->u, p->rbuf + p->rpos + 4, size);
		p->rpos += 4 + size;
		if (c->cmd != BR_NOOP)
			return c->cmd;
	}
	return 0;
}

static void put_txn(struct wb *w, uint32_t cmd, uint32_t code, uint32_t flags, const void *data,
		    size_t size)
{
	struct binder_transaction_data tr;

	memset(&tr, 0, sizeof(tr));
	tr.code = code;
	tr.flags = flags;
	tr.data_size = size;
	tr.data.ptr.buffer = (uintptr_t)data;
	put32(w, cmd);
	put(w, &tr, sizeof(tr));
}

/* A server thread: frees each buffer and replies (empty) to two-way
 * calls, in one ioctl with the next read. Counts one-way calls in
 * `*oneway` and stops after `stop_after` of them (0: never), leaving how
 * often it slept in `*sleeps` (its voluntary context switches). */
struct server {
	struct bp *p;
	volatile uint64_t *oneway;
	uint64_t stop_after;
	volatile uint64_t *last_ns;
	volatile uint64_t *sleeps;
};

static void *serve(void *arg)
{
	struct server *sv = arg;
	struct bp p = *sv->p;
	struct wb w = { .n = 0 };
	struct br c;

	put32(&w, BC_ENTER_LOOPER);
	for (;;) {
		if (wr(&p, &w))
			return NULL;
		while (take(&p, &c)) {
			if (c.cmd != BR_TRANSACTION)
				continue;
			put32(&w, BC_FREE_BUFFER);
			put64(&w, c.u.tr.data.ptr.buffer);
			if (c.u.tr.flags & TF_ONE_WAY) {
				uint64_t n = __atomic_add_fetch(sv->oneway, 1, __ATOMIC_SEQ_CST);

				if (sv->stop_after && n == sv->stop_after) {
					struct rusage ru;

					*sv->last_ns = now_ns();
					if (!getrusage(RUSAGE_THREAD, &ru))
						*sv->sleeps = ru.ru_nvcsw;
					bwrite(&p, w.b, w.n);
					return NULL;
				}
			} else {
				put_txn(&w, BC_REPLY, 0, 0, NULL, 0);
			}
		}
	}
}

/* The shared state of a benchmark: the server's counters, the clients'
 * results. */
struct bench_shm {
	uint64_t oneway;
	uint64_t last_ns;
	uint64_t start_ns;
	uint64_t end_ns[16];
	uint64_t failed;
	uint64_t pin; /* run every process on CPU 0 */
	uint64_t retries; /* one-way calls sent again (the buffer was full) */
	uint64_t sleeps; /* the one-way server's sleeps */
	uint64_t samples[];
};

static struct bench_shm *shm;

/* Latency is measured with client and server on one CPU: a wake-up on
 * the other one waits for the emulated CPU's next timer tick (about 4 ms
 * under TCG), which would hide the driver's own cost. */
static void pin_if_asked(void)
{
	cpu_set_t set;

	if (!shm->pin)
		return;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void bench_manager(void *arg)
{
	struct chan *ready = arg;
	struct bp p;
	pthread_t threads[16];
	struct server sv;
	int nthreads = (int)shm->end_ns[15];

	pin_if_asked();
	bopen(&p, 1 << 20);
	manager_or_die(&p, NULL);
	sv = (struct server){ &p, &shm->oneway, shm->samples[0], &shm->last_ns, &shm->sleeps };
	for (int i = 1; i < nthreads; i++)
		pthread_create(&threads[i], NULL, serve, &sv);
	post(ready);
	serve(&sv);
	exit(0);
}

/* `count` calls of `size` bytes, each round trip timed. */
static void bench_client(void *arg)
{
	long n = (long)arg;
	int idx = (int)(n >> 32), count = (int)(n & 0xffffffff);
	size_t size = shm->end_ns[14];
	struct bp p;
	struct wb w = { .n = 0 };
	struct br c;
	char *data = calloc(1, size + 1);
	binder_uintptr_t reply = 0;
	int warmup = count / 10 + 1;

	pin_if_asked();
	bopen(&p, 1 << 20);
	for (int i = -warmup; i < count; i++) {
		uint64_t t0 = now_ns();
		int done = 0;

		if (reply) {
			put32(&w, BC_FREE_BUFFER);
			put64(&w, reply);
		}
		put_txn(&w, BC_TRANSACTION, 1, 0, data, size);
		while (!done) {
			if (wr(&p, &w)) {
				shm->failed++;
				exit(1);
			}
			while (take(&p, &c)) {
				if (c.cmd == BR_REPLY) {
					reply = c.u.tr.data.ptr.buffer;
					done = 1;
				} else if (c.cmd != BR_TRANSACTION_COMPLETE) {
					__atomic_add_fetch(&shm->failed, 1, __ATOMIC_SEQ_CST);
					done = 1;
				}
			}
		}
		if (i >= 0 && idx == 0)
			shm->samples[i] = now_ns() - t0;
		if (i == -1 && idx == 0)
			shm->start_ns = now_ns();
	}
	shm->end_ns[idx] = now_ns();
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct bench_shm *bench_setup(size_t samples)
{
	struct bench_shm *m = mmap(NULL, sizeof(*m) + samples * 8, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		exit(1);
	return m;
}

static void start_bench_manager(int threads, uint64_t oneway_stop)
{
	static struct chan ready;

	shm->end_ns[15] = threads;
	shm->samples[0] = oneway_stop;
	char x;

	chan_init(&ready);
	spawn("manager", bench_manager, &ready);
	/* Only the manager holds the write end: if it dies before it is
	 * ready (cannot become the context manager), the read sees EOF. */
	close(ready.fd[1]);
	if (read(ready.fd[0], &x, 1) != 1) {
		fwrite(roles[1].text, 1, roles[1].len, stderr);
		fprintf(stderr, "bindertest: the benchmark's manager did not start\n");
		printf("bindertest: the benchmark's manager did not start\n");
		exit(1);
	}
	close(ready.fd[0]);
	shm->samples[0] = 0;
}

/* Round trips of `size` bytes: min, median and 99th percentile in ns. */
static int bench_latency(size_t size, int count)
{
	int mgr, client;

	shm = bench_setup(count + 1);
	shm->end_ns[14] = size;
	shm->pin = 1;
	start_bench_manager(1, 0);
	mgr = nroles - 1;
	client = spawn("client", bench_client, (void *)(long)count);
	waitpid(kids[client], NULL, 0);
	kids[client] = 0;
	kill_role(mgr);
	qsort(shm->samples, count, 8, cmp_u64);
	printf("latency %zu %llu %llu %llu\n", size, (unsigned long long)shm->samples[0],
	       (unsigned long long)shm->samples[count / 2],
	       (unsigned long long)shm->samples[(long)count * 99 / 100]);
	return shm->failed != 0;
}

/* `pairs` clients, each with a server thread, `count` calls of 64 bytes
 * each: calls per second. */
static int bench_throughput(int pairs, int count)
{
	uint64_t end = 0;
	int mgr;

	shm = bench_setup(count + 1);
	shm->end_ns[14] = 64;
	start_bench_manager(pairs, 0);
	mgr = nroles - 1;
	for (int i = 0; i < pairs; i++)
		spawn("client", bench_client, (void *)(((long)i << 32) | count));
	for (int i = mgr + 1; i < nroles; i++) {
		waitpid(kids[i], NULL, 0);
		kids[i] = 0;
	}
	kill_role(mgr);
	for (int i = 0; i < pairs; i++)
		if (shm->end_ns[i] > end)
			end = shm->end_ns[i];
	printf("throughput %d %.0f\n", pairs,
	       (double)pairs * count * 1e9 / (double)(end - shm->start_ns));
	return shm->failed != 0;
}

/* `count` one-way calls of 64 bytes as fast as they go: calls per second
 * from the first send to the server's last receipt. */
static void oneway_client(void *arg)
{
	int count = (int)(long)arg;
	struct bp p;
	struct wb w = { .n = 0 };
	struct br c;
	char data[64] = "flood";

	bopen(&p, 1 << 20);
	shm->start_ns = now_ns();
	for (int i = 0; i < count; i++) {
		put_txn(&w, BC_TRANSACTION, 2, TF_ONE_WAY, data, sizeof(data));
		if (wr(&p, &w))
			exit(1);
		while (take(&p, &c)) {
			if (c.cmd == BR_TRANSACTION_COMPLETE)
				continue;
			/* The one-way half of the server's buffer is full
			 * (BR_FAILED_REPLY): wait for the server to free some
			 * and send this call again, so that all `count`
			 * arrive and the server's count ends the run. */
			if (c.cmd != BR_FAILED_REPLY)
				__atomic_add_fetch(&shm->failed, 1, __ATOMIC_SEQ_CST);
			shm->retries++;
			usleep(100);
			i--;
		}
	}
}

static int bench_oneway(int count)
{
	int mgr;

	shm = bench_setup(1);
	start_bench_manager(1, count);
	mgr = nroles - 1;
	spawn("client", oneway_client, (void *)(long)count);
	waitpid(kids[mgr], NULL, 0);
	kids[mgr] = 0;
	reap();
	printf("oneway %d %.0f retries %llu sleeps %llu\n", count,
	       (double)count * 1e9 / (double)(shm->last_ns - shm->start_ns),
	       (unsigned long long)shm->retries, (unsigned long long)shm->sleeps);
	return shm->failed != 0;
}

/* A benchmark that hangs (a lost wake-up in the driver) must end the
 * guest step, not the guest's time limit: after this long the whole
 * process group is killed, with a message naming the benchmark. */
#define BENCH_TIMEOUT 300

static const char *bench_name;

static void bench_timeout(int sig)
{
	char msg[128];
	int n = snprintf(msg, sizeof(msg), "bindertest: %s did not finish within %d s\n",
			 bench_name, BENCH_TIMEOUT);

	(void)sig;
	if (write(2, msg, n) < 0 || write(1, msg, n) < 0)
		_exit(3);
	kill(0, SIGKILL);
}

static int bench(int argc, char **argv)
{
	int ret;

	bench_name = argv[2];
	setpgid(0, 0);
	signal(SIGALRM, bench_timeout);
	alarm(BENCH_TIMEOUT);
	roles[0].pid = getpid();
	nroles = 1;
	if (argc == 5 && !strcmp(argv[2], "bench-latency"))
		ret = bench_latency(strtoul(argv[3], NULL, 0), atoi(argv[4]));
	else if (argc == 5 && !strcmp(argv[2], "bench-throughput"))
		ret = bench_throughput(atoi(argv[3]), atoi(argv[4]));
	else if (argc == 4 && !strcmp(argv[2], "bench-oneway"))
		ret = bench_oneway(atoi(argv[3]));
	else {
		fprintf(stderr, "usage: bindertest DEVICE bench-latency SIZE COUNT | "
				"bench-throughput PAIRS COUNT | bench-oneway COUNT\n");
		return 2;
	}
	fwrite(roles[0].text, 1, roles[0].len, stderr);
	if (ret)
		fprintf(stderr, "bindertest: some calls failed\n");
	return ret;
}

int main(int argc, char **argv)
{
	int failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (size_t i = 0; i < NSCEN; i++)
			printf("%s\n", scenarios[i].name);
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: bindertest DEVICE [SCENARIO...] | --list\n");
		return 2;
	}
	device = argv[1];
	roles = mmap(NULL, sizeof(struct role) * ROLES, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (roles == MAP_FAILED)
		return 1;
	if (argc > 2 && !strncmp(argv[2], "bench-", 6))
		return bench(argc, argv);
	if (argc == 2) {
		for (size_t i = 0; i < NSCEN; i++)
			failed |= run(&scenarios[i]);
		return failed;
	}
	for (int a = 2; a < argc; a++) {
		size_t i;

		for (i = 0; i < NSCEN; i++)
			if (!strcmp(argv[a], scenarios[i].name))
				break;
		if (i == NSCEN) {
			fprintf(stderr, "bindertest: no scenario %s (--list names them)\n", argv[a]);
			return 2;
		}
		failed |= run(&scenarios[i]);
	}
	return failed;
}
