// SPDX-License-Identifier: GPL-2.0
/*
 * nvmetest: integrity runs and benchmarks for a block device, the same on
 * Debian's C nvme driver and on the Rust one (rnvme). Built statically on
 * the host (the guest has no libc) and shipped to /lab/nvmetest.
 *
 *   nvmetest hash DEV [--expect FILE]   O_DIRECT read of the whole device,
 *                                       its SHA-256 (`sha256 HEX`); with
 *                                       --expect, must equal FILE's
 *   nvmetest check DEV                  every sector a pattern sector in
 *                                       its place; counts per generation
 *   nvmetest write DEV --seed S --ops N [--gen G] [--max-kib K]
 *                                       N writes drawn from seed S: random
 *                                       LBAs, sizes of one sector, one page,
 *                                       two pages, a PRP list and the
 *                                       largest transfer (K KiB, default
 *                                       512), buffers at varying offsets in
 *                                       their page, from threads pinned on
 *                                       every CPU; then fsync. Every written
 *                                       sector becomes the pattern sector
 *                                       of generation G (default 1)
 *   nvmetest verify DEV --seed S --ops N [--gen G] [--max-kib K]
 *                                       every sector of that plan must be
 *                                       of generation G, every other one of
 *                                       an older generation
 *   nvmetest write-at DEV --lba S --sectors N --offset B [--gen G]
 *                                       one write of N sectors at LBA S
 *                                       from a buffer B bytes into its page
 *                                       (on 2 MiB pages where the kernel
 *                                       has them): it says how many pages
 *                                       the data spans and how the write
 *                                       ended, the exit status too
 *   nvmetest inflight DEV --seconds T [--ioctl-after]
 *                                       reads from four threads until T
 *                                       seconds pass or I/O fails (a driver
 *                                       unbound under it): says how it
 *                                       ended; then NVME_IOCTL_ID's answer
 *   nvmetest bench DEV randread|seqread --bs BYTES --qd N --seconds T
 *                                       O_DIRECT reads through Linux AIO at
 *                                       queue depth N: IOPS and MB/s
 *   nvmetest bind DRIVER [DEV]          binds QEMU's NVMe controller
 *                                       (1b36:0010) to DRIVER through
 *                                       driver_override, unbinding it
 *                                       first; waits for DEV to open
 *   nvmetest unbind                     unbinds it from its driver
 *   nvmetest wait DEV [--seconds T]     waits up to T (30) s for DEV to open
 *   nvmetest limits DEV                 the queue's sizes and limits as
 *                                       ioctls and sysfs give them
 *   nvmetest discard DEV --at S --sectors N
 *                                       BLKDISCARD of N sectors from S, a
 *                                       punched hole (write zeroes without
 *                                       fallback) and BLKZEROOUT there,
 *                                       each checked, then the sectors'
 *                                       old contents written back
 *   nvmetest ioctl DEV                  NVME_IOCTL_ID, and Identify through
 *                                       NVME_IOCTL_ADMIN_CMD: allowed, and
 *                                       refused as both drivers refuse it
 *   nvmetest hostile DEV                NVME_IOCTL_ADMIN_CMD with what rnvme
 *                                       refuses (lengths, opcodes, metadata,
 *                                       addresses): each errno; and a short
 *                                       length, which rnvme respects
 *
 * The pattern (see vm/src/disk.rs, which writes the host's images): every
 * 512-byte sector holds "NVMEPAT1", its LBA, the image's seed and its
 * generation, then 60 words of splitmix64 seeded from them. The seed of
 * the image is read from the device's first sector. Output has no device
 * names, times or addresses except where a line says so (bench), so that
 * both drivers print the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SECTOR 512
#define PAGE 4096
#define CHUNK (1 << 20)
#define MAGIC "NVMEPAT1"

static const char *errname(int e)
{
	switch (e) {
	case EIO: return "EIO";
	case ENODEV: return "ENODEV";
	case ENXIO: return "ENXIO";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ENOMEM: return "ENOMEM";
	case ENOSPC: return "ENOSPC";
	case EAGAIN: return "EAGAIN";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case ENOTTY: return "ENOTTY";
	case EOVERFLOW: return "EOVERFLOW";
	default: return "E?";
	}
}

static void usage(void);

static void die(const char *what)
{
	printf("%s: %s\n", what, errname(errno));
	exit(1);
}

/* ---- SHA-256 (FIPS 180-4) ---- */

struct sha256 {
	uint32_t h[8];
	uint8_t buf[64];
	uint64_t len;
	size_t fill;
};

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(struct sha256 *s, const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = s->h[0]; b = s->h[1]; c = s->h[2]; d = s->h[3];
	e = s->h[4]; f = s->h[5]; g = s->h[6]; h = s->h[7];
	for (i = 0; i < 64; i++) {
		uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
			      ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
			      ((a & b) ^ (a & c) ^ (b & c));

		h = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
	s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

static void sha256_init(struct sha256 *s)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, iv, sizeof(iv));
	s->len = 0;
	s->fill = 0;
}

static void sha256_update(struct sha256 *s, const uint8_t *p, size_t n)
{
	s->len += n;
	if (s->fill) {
		while (n && s->fill < 64) {
			s->buf[s->fill++] = *p++;
			n--;
		}
		if (s->fill < 64)
			return;
		sha256_block(s, s->buf);
		s->fill = 0;
	}
	for (; n >= 64; n -= 64, p += 64)
		sha256_block(s, p);
	memcpy(s->buf, p, n);
	s->fill = n;
}

static void sha256_hex(struct sha256 *s, char out[65])
{
	uint64_t bits = s->len * 8;
	uint8_t pad = 0x80, len[8];
	int i;

	sha256_update(s, &pad, 1);
	pad = 0;
	while (s->fill != 56)
		sha256_update(s, &pad, 1);
	for (i = 0; i < 8; i++)
		len[i] = bits >> (56 - 8 * i);
	sha256_update(s, len, 8);
	for (i = 0; i < 8; i++)
		sprintf(out + 8 * i, "%08x", s->h[i]);
}

/* ---- The pattern ---- */

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void pattern_sector(uint64_t seed, uint64_t lba, uint32_t gen, uint8_t *out)
{
	uint64_t state = seed ^ lba * 0xd1b54a32d192ed03ULL ^
			 (uint64_t)gen * 0x8cb92ba72f3d8dd7ULL;

	memcpy(out, MAGIC, 8);
	put64(out + 8, lba);
	put64(out + 16, seed);
	for (int i = 0; i < 4; i++)
		out[24 + i] = gen >> (8 * i);
	memset(out + 28, 0, 4);
	for (int i = 32; i < SECTOR; i += 8)
		put64(out + i, splitmix64(&state));
}

/* The generation of a valid pattern sector `lba` of `seed`, or -1. */
static int64_t sector_gen(uint64_t seed, uint64_t lba, const uint8_t *p)
{
	uint8_t want[SECTOR];
	uint32_t gen;

	if (memcmp(p, MAGIC, 8) || get64(p + 8) != lba || get64(p + 16) != seed)
		return -1;
	gen = p[24] | p[25] << 8 | p[26] << 16 | (uint32_t)p[27] << 24;
	pattern_sector(seed, lba, gen, want);
	return memcmp(want, p, SECTOR) ? -1 : (int64_t)gen;
}

/* ---- The device ---- */

struct dev {
	int fd;
	uint64_t sectors;	/* 512-byte sectors */
	unsigned lbs;		/* logical block size */
};

static struct dev open_dev(const char *path, int flags)
{
	struct dev d;
	uint64_t bytes;
	int lbs;

	struct stat st;

	d.fd = open(path, flags | O_DIRECT);
	if (d.fd < 0)
		die("open");
	if (fstat(d.fd, &st))
		die("fstat");
	if (S_ISREG(st.st_mode)) {
		/* An image file: the host's tests of this program. */
		bytes = st.st_size;
		lbs = SECTOR;
	} else if (ioctl(d.fd, BLKGETSIZE64, &bytes) || ioctl(d.fd, BLKSSZGET, &lbs)) {
		die("ioctl");
	}
	d.sectors = bytes / SECTOR;
	d.lbs = lbs;
	return d;
}

static void *aligned(size_t n)
{
	void *p;

	if (posix_memalign(&p, PAGE, n))
		die("posix_memalign");
	memset(p, 0, n);
	return p;
}

/*
 * A buffer on 2 MiB pages where the kernel has them: a large write is then
 * a few physically contiguous segments, and one request can carry more
 * pages than a PRP list page holds (a chained list).
 */
static void *huge(size_t n)
{
	void *p;

	if (n < (1 << 20))
		return aligned(n);
	n = (n + (2 << 20) - 1) & ~(size_t)((2 << 20) - 1);
	if (posix_memalign(&p, 2 << 20, n))
		die("posix_memalign");
	madvise(p, n, MADV_HUGEPAGE);
	memset(p, 0, n);
	return p;
}

/* Reads the whole device in 1 MiB pieces: calls `each` on every piece. */
static void read_all(struct dev *d, void (*each)(void *ctx, uint64_t lba, const uint8_t *p, size_t n),
		     void *ctx)
{
	uint8_t *buf = aligned(CHUNK);
	uint64_t at = 0, end = d->sectors * SECTOR;

	while (at < end) {
		size_t want = end - at < CHUNK ? end - at : CHUNK;
		ssize_t n = pread(d->fd, buf, want, at);

		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			die("read");
		}
		each(ctx, at / SECTOR, buf, n);
		at += n;
	}
	free(buf);
}

static uint64_t image_seed(struct dev *d)
{
	uint8_t *buf = aligned(PAGE);

	if (pread(d->fd, buf, d->lbs, 0) != (ssize_t)d->lbs)
		die("read");
	if (memcmp(buf, MAGIC, 8)) {
		printf("sector 0 is not a pattern sector: no seed\n");
		exit(1);
	}
	uint64_t seed = get64(buf + 16);

	free(buf);
	return seed;
}

/* ---- hash, check ---- */

static void hash_piece(void *ctx, uint64_t lba, const uint8_t *p, size_t n)
{
	(void)lba;
	sha256_update(ctx, p, n);
}

struct scan {
	struct sha256 sha;
	uint64_t seed;
	uint64_t gens[256];	/* generations 0..254; 255: newer */
	uint64_t bad;
	const uint8_t *planned;	/* verify: bitmap of planned sectors */
	int64_t gen;		/* verify: the plan's generation */
	uint64_t wrong;		/* verify: sectors not as planned */
};

static void scan_piece(void *ctx, uint64_t lba, const uint8_t *p, size_t n)
{
	struct scan *s = ctx;

	sha256_update(&s->sha, p, n);
	for (size_t off = 0; off < n; off += SECTOR, lba++) {
		int64_t gen = sector_gen(s->seed, lba, p + off);

		if (gen < 0) {
			if (s->bad++ < 8)
				printf("  LBA %llu: not the pattern sector of its place\n",
				       (unsigned long long)lba);
			continue;
		}
		s->gens[gen < 255 ? gen : 255]++;
		if (!s->planned)
			continue;
		int planned = s->planned[lba / 8] >> (lba % 8) & 1;

		if ((planned && gen != s->gen) || (!planned && gen >= s->gen)) {
			if (s->wrong++ < 8)
				printf("  LBA %llu: generation %lld, the plan says %s%lld\n",
				       (unsigned long long)lba, (long long)gen,
				       planned ? "" : "older than ", (long long)s->gen);
		}
	}
}

static int report_scan(struct scan *s, uint64_t sectors)
{
	char hex[65];

	printf("%llu sectors, seed %llu\n", (unsigned long long)sectors,
	       (unsigned long long)s->seed);
	for (int g = 0; g < 256; g++)
		if (s->gens[g])
			printf("generation %d%s: %llu sectors\n", g, g == 255 ? "+" : "",
			       (unsigned long long)s->gens[g]);
	if (s->bad)
		printf("%llu sectors are not pattern sectors of their place\n",
		       (unsigned long long)s->bad);
	else
		printf("every sector is a pattern sector in its place\n");
	sha256_hex(&s->sha, hex);
	printf("sha256 %s\n", hex);
	return s->bad ? 1 : 0;
}

static int cmd_hash(const char *path, const char *expect)
{
	struct dev d = open_dev(path, O_RDONLY);
	struct sha256 sha;
	char hex[65];

	sha256_init(&sha);
	read_all(&d, hash_piece, &sha);
	sha256_hex(&sha, hex);
	printf("%llu bytes\nsha256 %s\n", (unsigned long long)d.sectors * SECTOR, hex);
	if (expect) {
		char want[80] = "";
		FILE *f = fopen(expect, "r");

		if (!f || fscanf(f, "%79s", want) != 1)
			die("read --expect");
		fclose(f);
		if (strcmp(want, hex)) {
			printf("differs from the host's image: %s\n", want);
			return 1;
		}
		printf("equals the host's image\n");
	}
	return 0;
}

static int cmd_check(const char *path)
{
	struct dev d = open_dev(path, O_RDONLY);
	struct scan s = { .seed = image_seed(&d) };

	sha256_init(&s.sha);
	read_all(&d, scan_piece, &s);
	return report_scan(&s, d.sectors);
}

/* ---- The write plan ---- */

enum size_class { ONE_SECTOR, ONE_PAGE, TWO_PAGES, PRP_LIST, LARGEST, CLASSES };

static const char *const class_name[CLASSES] = {
	"one sector", "one page", "two pages", "a PRP list", "the largest",
};

struct op {
	uint64_t lba;		/* 512-byte sectors */
	uint32_t sectors;
	uint32_t offset;	/* the buffer's offset in its page */
	enum size_class class;
};

struct plan {
	struct op *ops;
	int n;
	uint32_t gen;
	uint64_t seed;		/* the image's */
};

/*
 * The plan of `n` writes from `seed` on a device of `sectors`: the same
 * for both drivers (it depends on nothing they report but the size and
 * the logical block size).
 */
static struct plan make_plan(uint64_t seed, int n, uint64_t sectors, unsigned lbs,
			     unsigned max_kib)
{
	struct plan p = { .n = n };
	uint64_t state = seed;
	uint32_t unit = lbs / SECTOR, max = max_kib * 1024 / SECTOR;

	p.ops = calloc(n, sizeof(*p.ops));
	if (!p.ops)
		die("calloc");
	for (int i = 0; i < n; i++) {
		struct op *o = &p.ops[i];
		uint64_t r = splitmix64(&state);

		o->class = r % CLASSES;
		switch (o->class) {
		case ONE_SECTOR: o->sectors = 1; break;
		case ONE_PAGE: o->sectors = PAGE / SECTOR; break;
		case TWO_PAGES: o->sectors = 2 * PAGE / SECTOR; break;
		case PRP_LIST: o->sectors = 17 + (r >> 8) % (max - 17); break;
		default: o->sectors = max; break;
		}
		/* Whole logical blocks; misaligned in its page unless 4K blocks. */
		o->sectors = (o->sectors + unit - 1) / unit * unit;
		o->offset = unit == 1 ? (r >> 40) % (PAGE / SECTOR) * SECTOR : 0;
		if (o->class == ONE_PAGE || o->class == TWO_PAGES)
			o->offset = 0; /* exactly one and two PRP entries */
		o->lba = splitmix64(&state) % ((sectors - o->sectors) / unit + 1) * unit;
	}
	return p;
}

struct writer {
	struct plan *plan;
	int fd;
	int index, threads;
	int cpu;
	int err;
	int failed;		/* the op that failed */
};

static void *write_ops(void *arg)
{
	struct writer *w = arg;
	cpu_set_t set;
	uint8_t *buf = NULL;
	size_t have = 0;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (int i = w->index; i < w->plan->n; i += w->threads) {
		struct op *o = &w->plan->ops[i];
		size_t len = (size_t)o->sectors * SECTOR;

		if (have < len + PAGE) {
			free(buf);
			have = len + PAGE;
			buf = huge(have);
		}
		for (uint32_t s = 0; s < o->sectors; s++)
			pattern_sector(w->plan->seed, o->lba + s, w->plan->gen,
				       buf + o->offset + (size_t)s * SECTOR);
		if (pwrite(w->fd, buf + o->offset, len, o->lba * SECTOR) != (ssize_t)len) {
			w->err = errno ? errno : EIO;
			w->failed = i;
			break;
		}
	}
	free(buf);
	return NULL;
}

static int cmd_write(const char *path, struct plan *p)
{
	struct dev d = open_dev(path, O_RDWR);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = cpus < 2 ? 2 : cpus;
	pthread_t tid[64];
	struct writer w[64];
	uint64_t count[CLASSES] = { 0 }, sectors = 0;

	if (threads > 64)
		threads = 64;
	for (int t = 0; t < threads; t++) {
		w[t] = (struct writer){ p, d.fd, t, threads, t % (cpus > 0 ? cpus : 1), 0, 0 };
		if (pthread_create(&tid[t], NULL, write_ops, &w[t]))
			die("pthread_create");
	}
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	for (int t = 0; t < threads; t++) {
		if (w[t].err) {
			struct op *o = &p->ops[w[t].failed];

			printf("write %d (%s: %u sectors at LBA %llu, buffer at %u in its page): %s\n",
			       w[t].failed, class_name[o->class], o->sectors,
			       (unsigned long long)o->lba, o->offset, errname(w[t].err));
			return 1;
		}
	}
	if (fsync(d.fd))
		die("fsync");
	for (int i = 0; i < p->n; i++) {
		count[p->ops[i].class]++;
		sectors += p->ops[i].sectors;
	}
	printf("%d writes of generation %u from %d threads, %llu sectors, then fsync\n",
	       p->n, p->gen, threads, (unsigned long long)sectors);
	for (int c = 0; c < CLASSES; c++)
		printf("  %s: %llu\n", class_name[c], (unsigned long long)count[c]);
	return 0;
}

static int cmd_verify(const char *path, struct plan *p)
{
	struct dev d = open_dev(path, O_RDONLY);
	struct scan s = { .seed = p->seed, .gen = p->gen };
	uint8_t *planned = calloc(d.sectors / 8 + 1, 1);
	uint64_t marked = 0;

	if (!planned)
		die("calloc");
	for (int i = 0; i < p->n; i++)
		for (uint32_t k = 0; k < p->ops[i].sectors; k++) {
			uint64_t lba = p->ops[i].lba + k;

			marked += !(planned[lba / 8] >> (lba % 8) & 1);
			planned[lba / 8] |= 1 << (lba % 8);
		}
	s.planned = planned;
	sha256_init(&s.sha);
	read_all(&d, scan_piece, &s);
	printf("the plan of %d writes covers %llu sectors\n", p->n, (unsigned long long)marked);
	int bad = report_scan(&s, d.sectors);

	if (s.wrong)
		printf("%llu sectors are not what the plan says\n", (unsigned long long)s.wrong);
	else
		printf("every sector is what the plan says\n");
	return bad || s.wrong;
}

/*
 * One write of `sectors` at `lba` from a buffer `offset` bytes into its
 * page: the exact transfer a step wants (a write plan draws its sizes and
 * offsets). Its sectors become the pattern sectors of generation `gen`.
 */
static int cmd_write_at(const char *path, uint64_t lba, uint64_t sectors, uint64_t offset,
			uint32_t gen)
{
	struct dev d = open_dev(path, O_RDWR);
	uint64_t seed = image_seed(&d);
	size_t len = sectors * SECTOR;
	uint64_t pages = (offset + len + PAGE - 1) / PAGE;
	uint8_t *buf;

	if (!sectors || offset >= PAGE || lba + sectors > d.sectors ||
	    (lba | sectors) % (d.lbs / SECTOR))
		usage();
	buf = huge(len + PAGE);
	for (uint64_t s = 0; s < sectors; s++)
		pattern_sector(seed, lba + s, gen, buf + offset + s * SECTOR);
	printf("write of %llu sectors at LBA %llu, buffer at %llu in its page (%llu pages): ",
	       (unsigned long long)sectors, (unsigned long long)lba,
	       (unsigned long long)offset, (unsigned long long)pages);
	if (pwrite(d.fd, buf + offset, len, lba * SECTOR) != (ssize_t)len) {
		printf("%s\n", errname(errno ? errno : EIO));
		return 1;
	}
	if (fsync(d.fd))
		die("fsync");
	printf("written\n");
	return 0;
}

/* ---- inflight ---- */

struct reader {
	int fd;
	uint64_t sectors;
	unsigned lbs;
	double until;
	int index;
	int err;
	uint64_t ops;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *read_ops(void *arg)
{
	struct reader *r = arg;
	uint64_t state = r->index + 1;
	uint8_t *buf = aligned(128 * 1024);
	uint32_t unit = r->lbs / SECTOR;

	while (now() < r->until) {
		uint64_t x = splitmix64(&state);
		uint32_t len = (1 + x % 32) * PAGE;
		uint64_t lba = (x >> 16) % ((r->sectors - len / SECTOR) / unit + 1) * unit;

		if (pread(r->fd, buf, len, lba * SECTOR) != (ssize_t)len) {
			r->err = errno ? errno : EIO;
			break;
		}
		r->ops++;
	}
	free(buf);
	return NULL;
}

#define NVME_IOCTL_ID _IO('N', 0x40)

static int cmd_inflight(const char *path, double seconds, int ioctl_after)
{
	struct dev d = open_dev(path, O_RDONLY);
	struct reader r[4];
	pthread_t tid[4];
	int errs[4], n = 0;

	for (int t = 0; t < 4; t++) {
		r[t] = (struct reader){ d.fd, d.sectors, d.lbs, now() + seconds, t, 0, 0 };
		if (pthread_create(&tid[t], NULL, read_ops, &r[t]))
			die("pthread_create");
	}
	for (int t = 0; t < 4; t++)
		pthread_join(tid[t], NULL);
	for (int t = 0; t < 4; t++) {
		int seen = 0;

		for (int k = 0; k < n; k++)
			seen |= errs[k] == r[t].err;
		if (r[t].err && !seen)
			errs[n++] = r[t].err;
	}
	if (!n) {
		printf("inflight: reads ran for %g s without an error\n", seconds);
		return 0;
	}
	/* In name order: which thread failed first does not matter. */
	for (int i = 0; i < n; i++)
		for (int k = i + 1; k < n; k++)
			if (strcmp(errname(errs[k]), errname(errs[i])) < 0) {
				int e = errs[i];

				errs[i] = errs[k];
				errs[k] = e;
			}
	printf("inflight: reads failed with");
	for (int k = 0; k < n; k++)
		printf(" %s", errname(errs[k]));
	printf("\n");
	/* The disk is gone, its file still open: the driver's ioctl must not run. */
	if (ioctl_after) {
		int ret = ioctl(d.fd, NVME_IOCTL_ID);

		printf("then NVME_IOCTL_ID: %s\n", ret < 0 ? errname(errno) : "not refused");
	}
	close(d.fd);
	return 0;
}

/* ---- bench: Linux AIO ---- */

static int cmd_bench(const char *path, int seq, long bs, int qd, double seconds)
{
	struct dev d = open_dev(path, O_RDONLY);
	aio_context_t ctx = 0;
	struct iocb *cbs = calloc(qd, sizeof(*cbs));
	struct iocb **ptrs = calloc(qd, sizeof(*ptrs));
	struct io_event *events = calloc(qd, sizeof(*events));
	uint8_t *bufs = aligned((size_t)bs * qd);
	uint64_t blocks = d.sectors * SECTOR / bs, next = 0, state = 42, done = 0;
	double start, end;

	if (!cbs || !ptrs || !events || bs < (long)d.lbs || bs % d.lbs || !blocks)
		die("bench arguments");
	if (syscall(SYS_io_setup, qd, &ctx))
		die("io_setup");
	for (int i = 0; i < qd; i++) {
		cbs[i].aio_fildes = d.fd;
		cbs[i].aio_lio_opcode = IOCB_CMD_PREAD;
		cbs[i].aio_buf = (uint64_t)(uintptr_t)(bufs + (size_t)i * bs);
		cbs[i].aio_nbytes = bs;
		cbs[i].aio_data = i;
	}
#define NEXT_OFFSET() (seq ? (next++ % blocks) * bs : splitmix64(&state) % blocks * bs)
	for (int i = 0; i < qd; i++) {
		cbs[i].aio_offset = NEXT_OFFSET();
		ptrs[i] = &cbs[i];
	}
	start = now();
	end = start + seconds;
	if (syscall(SYS_io_submit, ctx, qd, ptrs) != qd)
		die("io_submit");
	int inflight = qd;

	while (inflight) {
		long got = syscall(SYS_io_getevents, ctx, 1, qd, events, NULL);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			die("io_getevents");
		}
		int again = 0, stop = now() >= end;

		for (long k = 0; k < got; k++) {
			struct iocb *cb = &cbs[events[k].data];

			if (events[k].res != bs) {
				errno = events[k].res < 0 ? -events[k].res : EIO;
				die("read");
			}
			done++;
			inflight--;
			if (!stop) {
				cb->aio_offset = NEXT_OFFSET();
				ptrs[again++] = cb;
			}
		}
		if (again) {
			if (syscall(SYS_io_submit, ctx, again, ptrs) != again)
				die("io_submit");
			inflight += again;
		}
	}
	double took = now() - start;

	syscall(SYS_io_destroy, ctx);
	printf("%s bs=%ld qd=%d: %.0f IOPS, %.2f MB/s (%llu reads in %.2f s)\n",
	       seq ? "seqread" : "randread", bs, qd, done / took, done * bs / took / 1e6,
	       (unsigned long long)done, took);
	return 0;
}

/* ---- bind ---- */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The BDF of QEMU's NVMe controller (1b36:0010), in `bdf`. */
static void find_bdf(char bdf[64])
{
	static const char *const dir = "/sys/bus/pci/devices";
	char path[256], id[32];

	for (int bus = 0; bus < 256; bus++)
		for (int slot = 0; slot < 32; slot++) {
			FILE *f;
			int ok;

			snprintf(bdf, 64, "0000:%02x:%02x.0", bus, slot);
			snprintf(path, sizeof(path), "%s/%s/vendor", dir, bdf);
			f = fopen(path, "r");
			if (!f)
				continue;
			ok = fscanf(f, "%31s", id) == 1 && !strcmp(id, "0x1b36");
			fclose(f);
			snprintf(path, sizeof(path), "%s/%s/device", dir, bdf);
			f = fopen(path, "r");
			if (!f)
				continue;
			ok = ok && fscanf(f, "%31s", id) == 1 && !strcmp(id, "0x0010");
			fclose(f);
			if (ok)
				return;
		}
	printf("no PCI device 1b36:0010\n");
	exit(1);
}

static int cmd_unbind(char bdf[64], int quiet)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver/unbind", bdf);
	if (access(path, F_OK))
		return 0; /* no driver */
	if (write_file(path, bdf))
		die("unbind");
	if (!quiet)
		printf("unbound 1b36:0010\n");
	return 0;
}

/* Waits up to `seconds` for `dev` to open (the C driver probes asynchronously). */
static int cmd_wait(const char *dev, double seconds)
{
	for (int i = 0; i < seconds * 10; i++) {
		int fd = open(dev, O_RDONLY);

		if (fd >= 0) {
			close(fd);
			printf("the disk opens\n");
			return 0;
		}
		usleep(100 * 1000);
	}
	printf("the disk did not appear in %g s\n", seconds);
	return 1;
}

static int cmd_bind(const char *driver, const char *dev)
{
	char bdf[64], path[256];

	find_bdf(bdf);
	cmd_unbind(bdf, 1);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override", bdf);
	if (write_file(path, driver))
		die("driver_override");
	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/bind", driver);
	if (write_file(path, bdf))
		die("bind");
	printf("bound 1b36:0010 to %s\n", driver);
	return dev ? cmd_wait(dev, 30) : 0;
}

/* ---- main ---- */

static const char *opt(int argc, char **argv, const char *name)
{
	for (int i = 0; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return argv[i + 1];
	return NULL;
}

static int flag(int argc, char **argv, const char *name)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

static long num(int argc, char **argv, const char *name, long dflt)
{
	const char *v = opt(argc, argv, name);

	if (!v)
		return dflt;
	char *end;
	long n = strtol(v, &end, 0);

	if (*end == 'k' || *end == 'K')
		n *= 1024, end++;
	if (*end || n < 0) {
		printf("bad %s %s\n", name, v);
		exit(2);
	}
	return n;
}

static double seconds(int argc, char **argv, double dflt)
{
	const char *v = opt(argc, argv, "--seconds");
	char *end;
	double s;

	if (!v)
		return dflt;
	s = strtod(v, &end);
	if (*end || !(s > 0)) {
		printf("bad --seconds %s\n", v);
		exit(2);
	}
	return s;
}

/* ---- Limits, discard, write zeroes and NVMe's ioctls ---- */

/* /sys/block/NAME/queue/FILE of DEV (a whole disk), as a number. */
static long long queue_attr(const char *dev, const char *file)
{
	const char *name = strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev;
	char path[256], text[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/queue/%s", name, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(text, sizeof(text), f))
		text[0] = 0;
	fclose(f);
	return atoll(text);
}

static int cmd_limits(const char *dev)
{
	static const char *const attrs[] = {
		"logical_block_size", "physical_block_size", "minimum_io_size",
		"optimal_io_size", "discard_granularity", "discard_max_hw_bytes",
		"discard_max_bytes", "max_discard_segments", "write_zeroes_max_bytes",
		"max_hw_sectors_kb",
	};
	struct dev d = open_dev(dev, O_RDONLY);
	unsigned int u;
	int i;

	if (ioctl(d.fd, BLKIOOPT, &u))
		die("BLKIOOPT");
	printf("BLKIOOPT %u\n", u);
	if (ioctl(d.fd, BLKIOMIN, &u))
		die("BLKIOMIN");
	printf("BLKIOMIN %u\n", u);
	if (ioctl(d.fd, BLKPBSZGET, &u))
		die("BLKPBSZGET");
	printf("BLKPBSZGET %u\n", u);
	if (ioctl(d.fd, BLKDISCARDZEROES, &u))
		die("BLKDISCARDZEROES");
	printf("BLKDISCARDZEROES %u\n", u);
	for (i = 0; i < (int)(sizeof(attrs) / sizeof(attrs[0])); i++)
		printf("%s %lld\n", attrs[i], queue_attr(dev, attrs[i]));
	close(d.fd);
	return 0;
}

/* What the range [at, at + n) holds: "zeroes", "unchanged" or "changed". */
static const char *range_state(int fd, uint64_t at, uint64_t n, const uint8_t *before)
{
	size_t bytes = n * SECTOR, i;
	uint8_t *p = aligned(bytes);
	const char *what = "zeroes";

	if (pread(fd, p, bytes, at * SECTOR) != (ssize_t)bytes)
		die("pread");
	for (i = 0; i < bytes && p[i] == 0; i++)
		;
	if (i < bytes)
		what = memcmp(p, before, bytes) ? "changed" : "unchanged";
	free(p);
	return what;
}

static int cmd_discard(const char *dev, uint64_t at, uint64_t n)
{
	struct dev d = open_dev(dev, O_RDWR);
	size_t bytes = n * SECTOR;
	uint8_t *before = aligned(bytes);
	uint64_t range[2] = { at * SECTOR, bytes };
	int failed = 0;

	if (!n || at + n > d.sectors || (at | n) % (d.lbs / SECTOR))
		usage();
	if (pread(d.fd, before, bytes, at * SECTOR) != (ssize_t)bytes)
		die("pread");
	/* What a discard leaves is the device's choice: print it only. */
	if (ioctl(d.fd, BLKDISCARD, range)) {
		printf("BLKDISCARD: %s\n", errname(errno));
		failed = 1;
	} else {
		printf("BLKDISCARD: 0, the range is %s\n",
		       range_state(d.fd, at, n, before));
	}
	/* A hole: REQ_OP_WRITE_ZEROES, no fallback to writing zeroes. */
	if (fallocate(d.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at * SECTOR, bytes)) {
		printf("punch hole: %s\n", errname(errno));
		failed = 1;
	} else {
		const char *what = range_state(d.fd, at, n, before);

		printf("punch hole: 0, the range is %s\n", what);
		failed |= strcmp(what, "zeroes") != 0;
	}
	if (pwrite(d.fd, before, bytes, at * SECTOR) != (ssize_t)bytes || fsync(d.fd))
		die("pwrite");
	if (ioctl(d.fd, BLKZEROOUT, range)) {
		printf("BLKZEROOUT: %s\n", errname(errno));
		failed = 1;
	} else {
		const char *what = range_state(d.fd, at, n, before);

		printf("BLKZEROOUT: 0, the range is %s\n", what);
		failed |= strcmp(what, "zeroes") != 0;
	}
	if (pwrite(d.fd, before, bytes, at * SECTOR) != (ssize_t)bytes || fsync(d.fd))
		die("pwrite");
	const char *back = range_state(d.fd, at, n, before);

	printf("old contents written back: the range is %s\n", back);
	failed |= strcmp(back, "unchanged") != 0;
	free(before);
	close(d.fd);
	return failed;
}

/* struct nvme_passthru_cmd (linux/nvme_ioctl.h), spelled out. */
struct passthru {
	uint8_t opcode, flags;
	uint16_t rsvd1;
	uint32_t nsid, cdw2, cdw3;
	uint64_t metadata, addr;
	uint32_t metadata_len, data_len;
	uint32_t cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
	uint32_t timeout_ms, result;
};

#define NVME_IOCTL_ADMIN_CMD _IOWR('N', 0x41, struct passthru)

/* An Identify of CNS `cns` for `nsid` into `buf` (`len` bytes). */
static struct passthru identify(uint32_t cns, uint32_t nsid, void *buf, uint32_t len)
{
	struct passthru c;

	memset(&c, 0, sizeof(c));
	c.opcode = 0x06;
	c.nsid = nsid;
	c.cdw10 = cns;
	c.addr = (uintptr_t)buf;
	c.data_len = len;
	return c;
}

/* The ioctl's result as "0", "status 0x..." or the errno's name. */
static const char *admin(int fd, struct passthru *c)
{
	static char text[32];
	int ret = ioctl(fd, NVME_IOCTL_ADMIN_CMD, c);

	if (ret < 0)
		return errname(errno);
	snprintf(text, sizeof(text), ret ? "status %#x" : "0", ret);
	return text;
}

static void text_field(const char *name, const uint8_t *p, int n)
{
	while (n > 0 && p[n - 1] == ' ')
		n--;
	printf(" %s '%.*s'", name, n, (const char *)p);
}

/* An unmapped page of our address space. */
static void *hole(void)
{
	void *p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || munmap(p, PAGE))
		die("mmap");
	return p;
}

static int cmd_ioctl(const char *dev)
{
	struct dev d = open_dev(dev, O_RDONLY);
	uint8_t *page = aligned(PAGE);
	struct passthru c;
	int nsid = ioctl(d.fd, NVME_IOCTL_ID);
	pid_t child;
	int status;

	if (nsid < 0)
		printf("NVME_IOCTL_ID: %s\n", errname(errno));
	else
		printf("NVME_IOCTL_ID: %d\n", nsid);
	c = identify(1, 0, page, PAGE);
	c.result = ~0u;
	printf("identify controller: %s,", admin(d.fd, &c));
	printf(" result %u,", c.result);
	text_field("model", page + 24, 40);
	text_field("serial", page + 4, 20);
	printf(" oncs %#x nn %u\n", page[520] | page[521] << 8,
	       (unsigned)(page[516] | page[517] << 8 | page[518] << 16 | (uint32_t)page[519] << 24));
	memset(page, 0, PAGE);
	c = identify(0, nsid > 0 ? nsid : 1, page, PAGE);
	printf("identify namespace: %s,", admin(d.fd, &c));
	printf(" nsze %llu flbas %u\n", (unsigned long long)get64(page), page[26]);
	c = identify(0xff, 0, page, PAGE);
	printf("identify CNS 0xff: %s\n", admin(d.fd, &c));
	c = identify(1, 0, page, PAGE);
	c.flags = 1;
	printf("flags set: %s\n", admin(d.fd, &c));
	printf("command at NULL: %s\n", admin(d.fd, NULL));
	printf("command at an unmapped page: %s\n", admin(d.fd, hole()));
	c = identify(1, 0, hole(), PAGE);
	printf("data at an unmapped page: %s\n", admin(d.fd, &c));
	/* Without CAP_SYS_ADMIN: a child that became nobody. */
	child = fork();
	if (child == 0) {
		if (setgid(65534) || setuid(65534))
			die("setuid");
		c = identify(1, 0, page, PAGE);
		printf("as nobody: %s\n", admin(d.fd, &c));
		printf("as nobody, NVME_IOCTL_ID: %d\n", ioctl(d.fd, NVME_IOCTL_ID));
		exit(0);
	}
	if (child < 0 || waitpid(child, &status, 0) != child)
		die("fork");
	close(d.fd);
	free(page);
	return 0;
}

static int cmd_hostile(const char *dev)
{
	struct dev d = open_dev(dev, O_RDONLY);
	uint8_t *page = aligned(2 * PAGE);
	struct passthru c;
	static const uint32_t lens[] = { 0, PAGE + 1, 2 * PAGE, 0x7fffffff, 0xffffffff };
	static const uint8_t opcodes[] = { 0x02, 0x09, 0x0a, 0x80, 0xc0, 0xff };
	int i;

	/*
	 * Part of the structure: the first 64 bytes only. (The C driver maps
	 * the buffer's page for the device, which writes all 4096 bytes of
	 * Identify's data into it: byte 64 is written there.)
	 */
	c = identify(1, 0, page, 64);
	printf("identify controller, 64 bytes: %s,", admin(d.fd, &c));
	printf(" byte 64 %s\n", page[64] ? "written" : "untouched");
	for (i = 0; i < (int)(sizeof(lens) / sizeof(lens[0])); i++) {
		c = identify(1, 0, page, lens[i]);
		printf("data_len %u: %s\n", lens[i], admin(d.fd, &c));
	}
	for (i = 0; i < (int)sizeof(opcodes); i++) {
		c = identify(1, 0, page, PAGE);
		c.opcode = opcodes[i];
		printf("opcode %#04x: %s\n", opcodes[i], admin(d.fd, &c));
	}
	c = identify(1, 0, page, PAGE);
	c.metadata = (uintptr_t)(page + PAGE);
	c.metadata_len = 64;
	printf("metadata: %s\n", admin(d.fd, &c));
	c = identify(1, 0, (void *)0xffff888000000000ULL, PAGE);
	printf("data at a kernel address: %s\n", admin(d.fd, &c));
	c = identify(1, 0, (void *)(~0ULL - 100), PAGE);
	printf("data that wraps the address space: %s\n", admin(d.fd, &c));
	printf("command at a kernel address: %s\n",
	       admin(d.fd, (struct passthru *)0xffff888000000000ULL));
	/* The data's page read-only: the device's answer cannot be written. */
	if (mprotect(page, PAGE, PROT_READ))
		die("mprotect");
	c = identify(1, 0, page, PAGE);
	printf("data in a read-only page: %s\n", admin(d.fd, &c));
	printf("unknown ioctl: %s\n", ioctl(d.fd, _IO('N', 0x4f)) < 0 ? errname(errno) : "0");
	close(d.fd);
	return 0;
}

static void usage(void)
{
	printf("usage: nvmetest hash|check|write|verify|write-at|inflight|bench|wait|limits|discard|ioctl|hostile DEV ... | bind DRIVER [DEV] | unbind\n");
	exit(2);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage();
	const char *cmd = argv[1];

	if (!strcmp(cmd, "unbind")) {
		char bdf[64];

		find_bdf(bdf);
		return cmd_unbind(bdf, 0);
	}
	if (argc < 3)
		usage();
	if (!strcmp(cmd, "bind"))
		return cmd_bind(argv[2], argc > 3 ? argv[3] : NULL);
	if (!strcmp(cmd, "wait"))
		return cmd_wait(argv[2], seconds(argc, argv, 30));
	const char *dev = argv[2];

	if (!strcmp(cmd, "hash"))
		return cmd_hash(dev, opt(argc, argv, "--expect"));
	if (!strcmp(cmd, "check"))
		return cmd_check(dev);
	if (!strcmp(cmd, "write") || !strcmp(cmd, "verify")) {
		long ops = num(argc, argv, "--ops", -1), max_kib = num(argc, argv, "--max-kib", 512);
		struct dev d = open_dev(dev, O_RDONLY);

		if (!opt(argc, argv, "--seed") || ops <= 0 || max_kib < 16 ||
		    (uint64_t)max_kib * 2 > d.sectors)
			usage();
		struct plan p = make_plan(num(argc, argv, "--seed", 0), ops, d.sectors, d.lbs,
					  max_kib);

		p.gen = num(argc, argv, "--gen", 1);
		p.seed = image_seed(&d);
		close(d.fd);
		return !strcmp(cmd, "write") ? cmd_write(dev, &p) : cmd_verify(dev, &p);
	}
	if (!strcmp(cmd, "write-at") && opt(argc, argv, "--lba") && opt(argc, argv, "--sectors"))
		return cmd_write_at(dev, num(argc, argv, "--lba", 0), num(argc, argv, "--sectors", 0),
				    num(argc, argv, "--offset", 0), num(argc, argv, "--gen", 1));
	if (!strcmp(cmd, "inflight"))
		return cmd_inflight(dev, seconds(argc, argv, 10), flag(argc, argv, "--ioctl-after"));
	if (!strcmp(cmd, "limits"))
		return cmd_limits(dev);
	if (!strcmp(cmd, "discard"))
		return cmd_discard(dev, num(argc, argv, "--at", 0), num(argc, argv, "--sectors", 8));
	if (!strcmp(cmd, "ioctl"))
		return cmd_ioctl(dev);
	if (!strcmp(cmd, "hostile"))
		return cmd_hostile(dev);
	if (!strcmp(cmd, "bench") && argc > 3) {
		int seq = !strcmp(argv[3], "seqread");

		if (!seq && strcmp(argv[3], "randread"))
			usage();
		return cmd_bench(dev, seq, num(argc, argv, "--bs", seq ? 131072 : 4096),
				 num(argc, argv, "--qd", 1), seconds(argc, argv, 5));
	}
	usage();
	return 2;
}
