// SPDX-License-Identifier: GPL-2.0-only
/*
 * tlb_stress: a user-space program that corrupts or faults where a TLB
 * flush was missed or went to the wrong CPUs (tests/kernel_mm.rs, run in
 * the arm64 kernel whose flushes shootdown generated; docs/kernel-proof.md).
 *
 * One worker per online CPU, pinned. Each owns slots (a few pages at fixed
 * addresses) and keeps changing their mappings: mremap of a freshly filled
 * page over them, mprotect read-only and back, MADV_DONTNEED (then the
 * pages read as zeros) and refill, munmap and mmap again. Every worker also
 * probes random slots of every worker, reading (and, where allowed,
 * writing) them, and checks what it finds against what the owner published
 * *after* its system call returned. A slot's state is published under a
 * sequence count (odd while the owner works on it); a probe whose count
 * changed is discarded, so what is left is exact:
 *
 *   pattern g   reads give the page's pattern of generation g, writes work
 *   read-only g reads give pattern g, a write faults
 *   zero        reads give 0
 *   unmapped    a read faults
 *
 * A CPU that kept a stale translation breaks one of these (an old
 * generation, a successful write, old data instead of zeros, no fault).
 * The main thread forks now and then: the child checks that pages it
 * shares copy-on-write with the still-writing workers do not change under
 * it, and the workers check that none of their writes to those pages got
 * lost.
 *
 *   tlb_stress [-t SECONDS] [-s SMALL_SLOTS_PER_CPU] [-p PROBES_PER_OP]
 *              [-o ONE_PAGE_SLOTS_PER_CPU] [-f FAULTING_PROBES_ONE_IN] [-w]
 *              [-x HANDSHAKE_ROUNDS]
 *
 * Four options for the riscv64 test (scripts/kernel-riscv-test.sh), whose
 * emulator (QEMU 7.2) flushes a hart's whole TLB on any sfence.vma and on
 * every change of sstatus.SUM, i.e. on every user access of the kernel,
 * such as the signal frame of a probe's SIGSEGV:
 *   -o N  the first N small slots of each CPU are one page long instead of
 *         two (default none): a range flush that lost its last page is
 *         wrong there only when it flushes nothing, i.e. for one page;
 *   -f N  of the probes whose right outcome is a fault (a read of an
 *         unmapped slot, a write to a read-only one) only one in N is made
 *         (default 1: all), so that the signals do not flush the prober's
 *         TLB (and any stale entry in it) several times per operation;
 *   -w    the owner checks its own view right after two of its system
 *         calls: a write to a slot it made read-only (it wrote the slot
 *         just before) must fault, and so must a read of its scratch pages
 *         after mremap moved them away. This sees a flush that did nothing
 *         on the owner's own CPU before another CPU's flush (under QEMU:
 *         any flush) can hide it;
 *   -x N  after the stress, N handshake rounds, each between two threads
 *         pinned to two CPUs: the observer reads a page (its TLB now maps
 *         it), the owner then unmaps it (MADV_DONTNEED, or mremap away)
 *         while the observer spins on a flag, and the observer reads the
 *         page again: it must read zero, or fault. Nothing but the flush
 *         the owner's system call sends to the observer's CPU can remove
 *         the observer's translation in between.
 *
 * Prints one line per CPU, then "tlb-stress: verdict PASS|FAIL ...";
 * exit 0 on PASS, 1 on FAIL, 2 on a setup error. Each violation is printed
 * as "tlb-stress: violation ..." the moment it is seen (the first 8 per
 * thread), because under a broken flush the program's own memory is not
 * to be trusted either: counts and violations travel through pipes, and
 * an alarm ends a hang.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * riscv64: Linux 6.1's vDSO clock_gettime read address 4 in a forked
 * child now and then under QEMU (SIGSEGV with the pc in the vDSO, in
 * every flush mode, the kernel's own code included): the system call does
 * not go through the vDSO.
 */
#if defined(__riscv)
#define clock_gettime(clk, ts) syscall(SYS_clock_gettime, (clk), (ts))
#endif

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* The page size, from sysconf: 4K on arm64, 64K on the POWER kernel. */
static unsigned long page_size = 4096;
#define PAGE page_size
#define MAX_PAGE 65536UL
#define WORDS (PAGE / 8)
#define PAT_WORDS 448		/* pattern; the words above are scribbles */
#define MAX_CPUS 64
#define MAX_SMALL 32
#define SMALL_PAGES 2		/* a range, so a lost last page shows */
#define BULK_PAGES 520		/* past the 501-page threshold of the spec */
#define COW_PAGES 16
#define MAX_VIOL 8

enum state { ST_PATTERN, ST_RO, ST_ZERO, ST_UNMAPPED };
static const char *const state_name[] = { "pattern", "read-only", "zero", "unmapped" };

enum op { OP_REPLACE, OP_RO, OP_RW, OP_DONTNEED, OP_FILL, OP_UNMAP, OP_MAP, OP_N };
static const char *const op_name[] = { "mremap", "mprotect-ro", "mprotect-rw",
				       "dontneed", "fill", "munmap", "mmap" };

struct slot {
	_Atomic unsigned long seq;	/* odd while the owner changes it */
	_Atomic unsigned long word;	/* state | gen << 8 | last op << 4 */
	char *addr;
	unsigned long npages;
	int owner;
	int id;
	char pad[64 - 2 * sizeof(long) - sizeof(char *) - sizeof(long) - 2 * sizeof(int)];
};

/* Set up before the workers start, then only read. */
struct worker {
	pthread_t th;
	int cpu;
	struct slot *slots;	/* nslots, the last one the bulk slot */
	char *scratch;		/* where mremap's source pages are filled */
};

/*
 * What a worker changes, on its own stack: with a broken flush, pages that
 * several CPUs write (the globals after a fork, say) read differently on
 * different CPUs, and the counts must not suffer from what they measure.
 */
struct wstate {
	struct worker *w;
	int cpu;
	uint64_t rng;
	unsigned long ops[OP_N], bulk_ops, probes, skipped, faults, cow_writes;
	unsigned long cow_last[COW_PAGES];
};

static int ncpu, nsmall = 8, none, fault_every = 1, ro_owner, hs_rounds, nslots, probes_per_op = 32;
static double seconds = 10;
static struct worker workers[MAX_CPUS];
static char *cow;
static _Atomic int stop;
/* Set once the scratch areas are unmapped (see main). */
static _Atomic int go;
/*
 * Violations and the workers' counts reach the main thread through pipes,
 * i.e. through the kernel, not through memory a stale translation could
 * show differently to different CPUs; each violation is also written to
 * stdout at once, from the detecting thread's stack.
 */
static int viol_pipe[2], stats_pipe[2];
static struct timespec t_start;
static __thread int my_viol;

static __thread sigjmp_buf probe_jmp;
static __thread volatile int probing;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t_start.tv_sec) + (t.tv_nsec - t_start.tv_nsec) / 1e9;
}

/* printf without stdio's shared buffers: formatted on the stack. */
static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		_exit(3);
}

static void die(const char *fmt, ...)
{
	char buf[256];
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("tlb-stress: setup error: %s (%s)", buf, strerror(e));
	_exit(2);
}

static void violation(const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	if (my_viol++ < MAX_VIOL) {
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		say("tlb-stress: violation %s", buf);
	}
	if (write(viol_pipe[1], "v", 1) != 1)
		_exit(3);
	atomic_store(&stop, 1);
}

static uint64_t rnd(struct wstate *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static unsigned long pat(int slot, unsigned long page, unsigned long gen, int i)
{
	uint64_t x = ((uint64_t)slot << 48) ^ (page << 32) ^ (gen << 12) ^ (uint64_t)i;

	x *= 0x9e3779b97f4a7c15ULL;
	return x ^ (x >> 29) ^ 1;	/* never 0 */
}

#define PROBE_WORDS 4
static const int probe_idx[PROBE_WORDS] = { 0, 1, 217, PAT_WORDS - 1 };

/* Only the words probes read: a page's first write is what costs. */
static void fill(char *p, int slot, unsigned long npages, unsigned long gen)
{
	for (unsigned long pg = 0; pg < npages; pg++) {
		volatile unsigned long *w = (unsigned long *)(p + pg * PAGE);

		for (int i = 0; i < PROBE_WORDS; i++)
			w[probe_idx[i]] = pat(slot, pg, gen, probe_idx[i]);
	}
}

static void segv(int sig, siginfo_t *si, void *uc)
{
	static const char msg[] = "tlb-stress: violation SIGSEGV outside a probe at 0x";
	static const char end[] = "\ntlb-stress: verdict FAIL (SIGSEGV)\n";
	char hex[2 + 16 + 2];
	unsigned long a = (unsigned long)si->si_addr;
	int n = 0;

	(void)sig; (void)uc;
	if (probing)
		siglongjmp(probe_jmp, 1);
	/* The address and si_code (1 no mapping, 2 no permission), by hand:
	 * nothing here may take a lock. */
	for (int i = 60; i >= 0; i -= 4)
		hex[n++] = "0123456789abcdef"[(a >> i) & 15];
	hex[n++] = ' ';
	hex[n++] = '0' + (si->si_code & 7);
	if (write(1, msg, sizeof(msg) - 1) < 0 || write(1, hex, n) < 0)
		_exit(3);
#if defined(__riscv)
	/* Where it happened (glibc's REG_PC is 0): the read of address 4 that
	 * the riscv64 test sees in every mode is still unexplained. */
	{
		static const char at[] = " pc 0x";
		unsigned long pc = ((ucontext_t *)uc)->uc_mcontext.__gregs[0];

		n = 0;
		for (int i = 60; i >= 0; i -= 4)
			hex[n++] = "0123456789abcdef"[(pc >> i) & 15];
		if (write(1, at, sizeof(at) - 1) < 0 || write(1, hex, n) < 0)
			_exit(3);
	}
#endif
	if (write(1, end, sizeof(end) - 1) < 0)
		_exit(3);
	_exit(1);
}

/* The owner's side of the sequence count. */
static void begin(struct slot *s)
{
	atomic_fetch_add(&s->seq, 1);
	atomic_thread_fence(memory_order_seq_cst);
}

static void end(struct slot *s, enum state st, unsigned long gen, enum op op)
{
	atomic_store(&s->word, st | op << 4 | gen << 8);
	atomic_fetch_add(&s->seq, 1);
}

/*
 * -w: after its own mprotect(PROT_READ) returned, the owner's write to the
 * slot must fault; before it, the owner wrote every page (so that its TLB
 * holds a writable translation a lost flush would leave behind). After its
 * mremap, a read of the scratch pages it filled must fault.
 */
static void ro_touch(struct wstate *w, struct slot *s)
{
	for (unsigned long pg = 0; pg < s->npages; pg++)
		((volatile unsigned long *)(s->addr + pg * PAGE))[PAT_WORDS + w->cpu % (WORDS - PAT_WORDS)] = pg;
}

/*
 * Write *v to *p (write = 1) or read *p into *v: 1 if that faulted
 * (SIGSEGV caught), else 0.
 */
static int access_faults(volatile unsigned long *p, unsigned long *v, int write)
{
	volatile int fault = 0;

	probing = 1;
	if (sigsetjmp(probe_jmp, 0) == 0) {
		if (write)
			*p = *v;
		else
			*v = *p;
	} else {
		fault = 1;
	}
	probing = 0;
	return fault;
}

static void moved_check(struct wstate *w, struct slot *s, unsigned long gen)
{
	for (unsigned long pg = 0; pg < s->npages; pg++) {
		volatile unsigned long *p = (unsigned long *)(w->w->scratch + pg * PAGE);
		unsigned long v = 0;

		if (access_faults(p, &v, 0))
			w->faults++;
		else
			violation("owner-read-after-mremap-away cpu %d slot %d (%lu pages) page %lu gen %lu: "
				  "reads %#lx", w->cpu, s->id, s->npages, pg, gen + 1, v);
	}
}

static void ro_check(struct wstate *w, struct slot *s, unsigned long gen)
{
	for (unsigned long pg = 0; pg < s->npages; pg++) {
		volatile unsigned long *p = (unsigned long *)(s->addr + pg * PAGE);
		unsigned long v = pg;

		if (access_faults(p + PAT_WORDS + w->cpu % (WORDS - PAT_WORDS), &v, 1))
			w->faults++;
		else
			violation("owner-write-after-mprotect-ro cpu %d slot %d (%lu pages) page %lu gen %lu",
				  w->cpu, s->id, s->npages, pg, gen);
	}
}

static void owner_op(struct wstate *w, struct slot *s)
{
	unsigned long word = atomic_load(&s->word);
	enum state st = word & 15;
	unsigned long gen = word >> 8;
	unsigned long len = s->npages * PAGE;
	unsigned r = rnd(w) % 8;
	enum op op;

	switch (st) {
	case ST_PATTERN:
		op = r < 3 ? OP_REPLACE : r < 5 ? OP_RO : r < 7 ? OP_DONTNEED : OP_UNMAP;
		break;
	case ST_RO:
		op = r < 5 ? OP_RW : OP_REPLACE;
		break;
	case ST_ZERO:
		op = r < 6 ? OP_FILL : OP_REPLACE;
		break;
	default:
		op = r < 6 ? OP_MAP : OP_REPLACE;
		break;
	}
	switch (op) {
	case OP_REPLACE:
		/* The new pages are filled away from the slot, then moved in. */
		if (mmap(w->w->scratch, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != w->w->scratch)
			die("mmap scratch");
		fill(w->w->scratch, s->id, s->npages, gen + 1);
		begin(s);
		if (mremap(w->w->scratch, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, s->addr) != s->addr)
			die("mremap");
		end(s, ST_PATTERN, gen + 1, op);
		if (ro_owner)
			moved_check(w, s, gen);
		break;
	case OP_RO:
		if (ro_owner)
			ro_touch(w, s);
		begin(s);
		if (mprotect(s->addr, len, PROT_READ))
			die("mprotect");
		end(s, ST_RO, gen, op);
		if (ro_owner)
			ro_check(w, s, gen);
		break;
	case OP_RW:
		begin(s);
		if (mprotect(s->addr, len, PROT_READ | PROT_WRITE))
			die("mprotect");
		end(s, ST_PATTERN, gen, op);
		break;
	case OP_DONTNEED:
		begin(s);
		if (madvise(s->addr, len, MADV_DONTNEED))
			die("madvise");
		end(s, ST_ZERO, gen, op);
		break;
	case OP_FILL:
		/* Write faults on the zero page probes mapped: copy-on-write. */
		begin(s);
		fill(s->addr, s->id, s->npages, gen + 1);
		end(s, ST_PATTERN, gen + 1, op);
		break;
	case OP_UNMAP:
		begin(s);
		if (munmap(s->addr, len))
			die("munmap");
		end(s, ST_UNMAPPED, gen, op);
		break;
	case OP_MAP:
		begin(s);
		if (mmap(s->addr, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != s->addr)
			die("mmap slot");
		fill(s->addr, s->id, s->npages, gen + 1);
		end(s, ST_PATTERN, gen + 1, op);
		break;
	default:
		break;
	}
	w->ops[op]++;
	if (s->npages > SMALL_PAGES)
		w->bulk_ops++;
}

/*
 * A read of a page its owner unmapped worked. Whether the translation
 * lingers (a flush that never reached this CPU) or is gone at the next
 * look (a flush that reached it late) tells a lost flush from a late one:
 * read again at once, and after a trip through the kernel, while the
 * owner's count still says unmapped.
 */
static void again_after_munmap(struct slot *s, volatile unsigned long *p,
			       unsigned long s1, char *buf, size_t len)
{
	unsigned long a = 0, b = 0;
	int fa = access_faults(p, &a, 0);

	sched_yield();
	int fb = access_faults(p, &b, 0);

	atomic_thread_fence(memory_order_seq_cst);
	int moved = atomic_load_explicit(&s->seq, memory_order_relaxed) != s1;

	snprintf(buf, len, "; read again at once: %s, after sched_yield: %s%s",
		 fa ? "faults" : "reads", fb ? "faults" : "reads",
		 moved ? " (the owner has moved on since)" : "");
}

static void probe(struct wstate *w, struct slot *s)
{
	unsigned long pg = rnd(w) % s->npages;
	volatile unsigned long *p = (unsigned long *)(s->addr + pg * PAGE);
	unsigned long v[PROBE_WORDS];
	unsigned long s1, s2, word, gen;
	volatile int rfault = 0, wfault = 0, wrote = 0, try_write;
	enum state st;

	s1 = atomic_load_explicit(&s->seq, memory_order_acquire);
	if (s1 & 1) {
		w->skipped++;
		return;
	}
	word = atomic_load_explicit(&s->word, memory_order_relaxed);
	st = word & 15;
	gen = word >> 8;
	/* -f: only one in fault_every of the probes that must fault. */
	if (st == ST_UNMAPPED && fault_every > 1 && rnd(w) % fault_every)
		return;
	try_write = st == ST_PATTERN ||
		    (st == ST_RO && (fault_every <= 1 || rnd(w) % fault_every == 0));
	probing = 1;
	if (sigsetjmp(probe_jmp, 0) == 0) {
		for (int i = 0; i < PROBE_WORDS; i++)
			v[i] = p[probe_idx[i]];
	} else {
		rfault = 1;
	}
	if (!rfault && try_write) {
		wrote = 1;
		if (sigsetjmp(probe_jmp, 0) == 0)
			p[PAT_WORDS + w->cpu % (WORDS - PAT_WORDS)] = w->probes;
		else
			wfault = 1;
	}
	probing = 0;
	atomic_thread_fence(memory_order_seq_cst);
	s2 = atomic_load_explicit(&s->seq, memory_order_relaxed);
	w->probes++;
	if (s1 != s2) {
		w->skipped++;
		return;
	}
	w->faults += rfault + wfault;

	const char *bad = NULL;
	unsigned long want = 0, saw = 0;
	int bad_i = 0;

	char again[128] = "";

	if (st == ST_UNMAPPED) {
		if (!rfault) {
			bad = "read-after-munmap";
			saw = v[0];
			again_after_munmap(s, p, s1, again, sizeof(again));
		}
	} else if (rfault) {
		bad = "fault-on-mapped-page";
	} else if (st == ST_ZERO) {
		for (int i = 0; i < PROBE_WORDS && !bad; i++)
			if (v[i]) {
				bad = "nonzero-after-dontneed";
				saw = v[i];
				bad_i = i;
			}
	} else {
		for (int i = 0; i < PROBE_WORDS && !bad; i++) {
			want = pat(s->id, pg, gen, probe_idx[i]);
			if (v[i] != want) {
				bad = v[i] == 0 ? "zero-instead-of-data" : "wrong-data";
				saw = v[i];
				bad_i = i;
			}
		}
		if (!bad && st == ST_RO && wrote && !wfault) {
			bad = "write-after-mprotect-ro";
			want = 0;
		}
		if (!bad && st == ST_PATTERN && wfault) {
			bad = "fault-on-writable-page";
			want = 0;
		}
	}
	if (!bad)
		return;
	/*
	 * Whose data it is: a recent generation of some slot's page (a stale
	 * translation to a freed page that was reused) or unknown.
	 */
	char tail[96] = "";

	for (int c = 0; saw && !tail[0] && c < ncpu; c++)
		for (int k = 0; !tail[0] && k < nslots; k++) {
			struct slot *o = &workers[c].slots[k];
			unsigned long og = atomic_load(&o->word) >> 8;

			for (unsigned long opg = 0; !tail[0] && opg < o->npages; opg++)
				for (unsigned long g = og + 1; !tail[0] && g + 16 > og && g; g--)
					if (saw == pat(o->id, opg, g, probe_idx[bad_i]))
						snprintf(tail, sizeof(tail), " (data of slot %d page %lu gen %lu)",
							 o->id, opg, g);
		}
	char what[160] = "";

	if (saw || want)
		snprintf(what, sizeof(what), ": word %d want %#lx saw %#lx%s",
			 probe_idx[bad_i], want, saw, tail);
	violation("%s cpu %d slot %d (owner cpu %d, %lu pages) page %lu state %s gen %lu after %s%s%s",
		  bad, w->cpu, s->id, s->owner, s->npages, pg, state_name[st], gen,
		  op_name[(word >> 4) & 15], what, again);
}

/* Each worker's own word on every COW page: a lost write shows. */
static void cow_touch(struct wstate *w)
{
	unsigned p = rnd(w) % COW_PAGES;
	volatile unsigned long *c = (unsigned long *)(cow + p * PAGE) + w->cpu * 8;
	unsigned long v = *c;

	if (v != w->cow_last[p])
		violation("lost-write-after-fork cpu %d cow page %u: wrote %#lx, reads %#lx",
			  w->cpu, p, w->cow_last[p], v);
	*c = ++w->cow_last[p];
	w->cow_writes++;
}

static void *work(void *arg)
{
	struct wstate ws = { .w = arg, .cpu = ((struct worker *)arg)->cpu };
	struct wstate *w = &ws;
	cpu_set_t set;
	unsigned long it = 0;

	w->rng = 0x9e3779b97f4a7c15ULL * (w->cpu + 1);
	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity cpu %d", w->cpu);
	while (!atomic_load(&go))
		sched_yield();
	while (!atomic_load(&stop)) {
		/* Bulk slots cost a few hundred page faults: 1 op in 16. */
		int k = rnd(w) % 16 ? (int)(rnd(w) % nsmall) : nslots - 1;

		owner_op(w, &w->w->slots[k]);
		for (int i = 0; i < probes_per_op; i++) {
			struct worker *o = &workers[rnd(w) % ncpu];
			int j = rnd(w) % 8 ? (int)(rnd(w) % nsmall) : nslots - 1;

			probe(w, &o->slots[j]);
		}
		cow_touch(w);
		if ((++it & 7) == 0 && now() >= seconds)
			break;
	}

	unsigned long o = 0;
	char kinds[256];
	int l = 0;

	for (int k = 0; k < OP_N; k++) {
		o += w->ops[k];
		l += snprintf(kinds + l, sizeof(kinds) - l, " %s %lu", op_name[k], w->ops[k]);
	}
	say("tlb-stress: cpu %d ops %lu (%s, bulk %lu) probes %lu skipped %lu faults %lu "
	    "cow-writes %lu", w->cpu, o, kinds + 1, w->bulk_ops, w->probes, w->skipped,
	    w->faults, w->cow_writes);
	unsigned long tot[2] = { o, w->probes };

	if (write(stats_pipe[1], tot, sizeof(tot)) != sizeof(tot))
		_exit(3);
	return NULL;
}

/* In the child of a fork: pages shared copy-on-write must not change. */
static int cow_child(void)
{
	static unsigned long snap[COW_PAGES * MAX_PAGE / 8];
	struct timespec t0, t;

	memcpy(snap, cow, COW_PAGES * PAGE);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (memcmp(snap, cow, COW_PAGES * PAGE))
			return 10;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 3000000L);
	/* Now the child writes: it gets its own copies. */
	for (int p = 0; p < COW_PAGES; p++)
		((volatile unsigned long *)(cow + p * PAGE))[WORDS - 1] = 0xc0ffee00 + p;
	for (int p = 0; p < COW_PAGES; p++)
		if (((volatile unsigned long *)(cow + p * PAGE))[WORDS - 1] != 0xc0ffee00UL + p)
			return 11;
	return 0;
}

/* -x: the handshake rounds (see the top of the file). */
struct handshake {
	int round, owner, observer, moved;
	char *page, *dest;
	unsigned long want;
};
static _Atomic int hs_flag;
/* Violations printed by the observers so far: one thread per round. */
static int hs_printed;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity cpu %d", cpu);
}

/* Spin on the flag: no system call, no fault, nothing that flushes. */
static void hs_wait(int v)
{
	while (atomic_load(&hs_flag) != v)
		;
}

static void *hs_observer(void *arg)
{
	struct handshake *h = arg;
	volatile unsigned long *p = (unsigned long *)h->page;
	unsigned long v = 0;

	my_viol = hs_printed;
	pin(h->observer);
	v = *p;
	if (v != h->want)
		violation("handshake-setup round %d cpu %d: word 0 want %#lx saw %#lx",
			  h->round, h->observer, h->want, v);
	atomic_store(&hs_flag, 1);
	hs_wait(2);
	if (!h->moved) {
		v = *p;
		if (v)
			violation("handshake nonzero-after-dontneed round %d cpu %d (owner cpu %d): "
				  "word 0 want 0 saw %#lx%s", h->round, h->observer, h->owner, v,
				  v == h->want ? " (the old page)" : "");
	} else if (!access_faults(p, &v, 0)) {
		violation("handshake read-after-mremap-away round %d cpu %d (owner cpu %d): "
			  "reads %#lx%s", h->round, h->observer, h->owner, v,
			  v == h->want ? " (the moved page)" : "");
	}
	hs_printed = my_viol;
	atomic_store(&hs_flag, 3);
	return NULL;
}

/* The owner's side, in the main thread; page and dest: 1 page each. */
static void handshakes(char *page, char *dest)
{
	int n[2] = { 0, 0 };

	for (int r = 0; r < hs_rounds && ncpu > 1; r++) {
		struct handshake h = {
			.round = r, .owner = r % ncpu, .moved = r & 1,
			.page = page, .dest = dest,
		};
		pthread_t th;

		/* Every ordered pair of CPUs in turn. */
		h.observer = (h.owner + 1 + (r / ncpu) % (ncpu - 1)) % ncpu;
		h.want = pat(0xfff, 0, r + 1, 0);
		pin(h.owner);
		if (mmap(page, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != page)
			die("mmap handshake page");
		*(volatile unsigned long *)page = h.want;
		atomic_store(&hs_flag, 0);
		if (pthread_create(&th, NULL, hs_observer, &h))
			die("pthread_create");
		hs_wait(1);
		if (h.moved) {
			if (mremap(page, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, dest) != dest)
				die("mremap handshake page");
		} else if (madvise(page, PAGE, MADV_DONTNEED)) {
			die("madvise handshake page");
		}
		atomic_store(&hs_flag, 2);
		hs_wait(3);
		pthread_join(th, NULL);
		/* Back to the reservation, so that no other mapping lands there. */
		if (mmap(page, 3 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
			 MAP_NORESERVE, -1, 0) != page)
			die("mmap handshake reservation");
		n[h.moved]++;
	}
	say("tlb-stress: handshakes %d (dontneed %d, mremap %d)", n[0] + n[1], n[0], n[1]);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	unsigned long forks = 0;
	int opt;

	while ((opt = getopt(argc, argv, "t:s:p:o:f:wx:")) != -1) {
		switch (opt) {
		case 't': seconds = atof(optarg); break;
		case 's': nsmall = atoi(optarg); break;
		case 'p': probes_per_op = atoi(optarg); break;
		case 'o': none = atoi(optarg); break;
		case 'f': fault_every = atoi(optarg); break;
		case 'w': ro_owner = 1; break;
		case 'x': hs_rounds = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-t seconds] [-s slots] [-p probes] [-o one-page slots] [-f n] [-w] [-x rounds]\n", argv[0]);
			return 2;
		}
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	page_size = sysconf(_SC_PAGESIZE);
	if (page_size < 4096 || page_size > MAX_PAGE)
		die("page size %lu not supported", page_size);
	if (ncpu < 1 || ncpu > MAX_CPUS || nsmall < 1 || nsmall > MAX_SMALL ||
	    none < 0 || none > nsmall)
		die("bad cpu count %d or slot count %d (%d of one page)", ncpu, nsmall, none);
	nslots = nsmall + 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv;
	/* Not blocked in the handler, so siglongjmp needs no saved mask. */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);

	/*
	 * One reservation for all slots and scratch areas, with a guard page
	 * after each, so that nothing else the kernel maps lands in a hole a
	 * munmap leaves.
	 */
	unsigned long per_cpu = nsmall * (SMALL_PAGES + 1) + (BULK_PAGES + 1) * 2;
	char *base = mmap(NULL, ncpu * per_cpu * PAGE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (base == MAP_FAILED)
		die("mmap reservation");
	/* -x: a page, a guard page and the page mremap moves it to. */
	char *hs = NULL;

	if (hs_rounds) {
		hs = mmap(NULL, 3 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (hs == MAP_FAILED)
			die("mmap handshake reservation");
	}
	cow = mmap(NULL, COW_PAGES * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (cow == MAP_FAILED)
		die("mmap cow");
	for (int c = 0; c < ncpu; c++) {
		struct worker *w = &workers[c];
		char *a = base + c * per_cpu * PAGE;

		w->cpu = c;
		w->slots = calloc(nslots, sizeof(*w->slots));
		if (!w->slots)
			die("calloc");
		for (int k = 0; k < nslots; k++) {
			struct slot *s = &w->slots[k];

			s->npages = k < none ? 1 : k < nsmall ? SMALL_PAGES : BULK_PAGES;
			s->addr = a;
			s->owner = c;
			s->id = c * MAX_SMALL + k;
			a += (s->npages + 1) * PAGE;
			if (mmap(s->addr, s->npages * PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != s->addr)
				die("mmap slot");
			fill(s->addr, s->id, s->npages, 1);
			atomic_store(&s->word, ST_PATTERN | OP_MAP << 4 | 1UL << 8);
		}
		w->scratch = a;
	}

	if (pipe(viol_pipe) || pipe(stats_pipe))
		die("pipe");
	/* A hang (a futex word read stale, say) still ends, and says so. */
	alarm((unsigned)seconds + 60);
	say("tlb-stress: %d cpus, %d slots of %d pages and one of %d per cpu, %d probes per op, %.0f s",
	    ncpu, nsmall, SMALL_PAGES, BULK_PAGES, probes_per_op, seconds);
	if (none)
		say("tlb-stress: the first %d small slots of each cpu have 1 page", none);
	if (fault_every > 1)
		say("tlb-stress: 1 in %d of the probes that must fault", fault_every);
	if (ro_owner)
		say("tlb-stress: owners write before and after mprotect(PROT_READ)");
	if (PAGE != 4096)
		say("tlb-stress: page size %lu", PAGE);
	for (int c = 0; c < ncpu; c++)
		if (pthread_create(&workers[c].th, NULL, work, &workers[c]))
			die("pthread_create");
	/*
	 * The scratch areas become holes in the reservation only now: with
	 * 64K pages one is 33 MB, where pthread_create would put a thread's
	 * stack (and a worker's mmap of its scratch then fails).
	 */
	for (int c = 0; c < ncpu; c++)
		if (munmap(workers[c].scratch, BULK_PAGES * PAGE))
			die("munmap scratch");
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	atomic_store(&go, 1);

	/* Fork every 50 ms while the workers write to the COW pages. */
	while (!atomic_load(&stop) && now() < seconds) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			die("fork");
		if (pid == 0)
			_exit(cow_child());
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid");
		forks++;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			violation("fork-child cow pages %s (status %#x)",
				  WIFEXITED(status) && WEXITSTATUS(status) == 10 ?
				  "changed under the child after fork" :
				  WIFEXITED(status) && WEXITSTATUS(status) == 11 ?
				  "lost the child's own writes" : "child died", status);
		usleep(50000);
	}
	for (int c = 0; c < ncpu; c++)
		pthread_join(workers[c].th, NULL);

	double secs = now();
	unsigned long ops = 0, probes = 0, tot[2];
	int n = 0;
	char v;

	for (int c = 0; c < ncpu; c++) {
		if (read(stats_pipe[0], tot, sizeof(tot)) != sizeof(tot))
			die("stats pipe");
		ops += tot[0];
		probes += tot[1];
	}
	if (hs_rounds)
		handshakes(hs, hs + 2 * PAGE);
	close(viol_pipe[1]);
	while (read(viol_pipe[0], &v, 1) == 1)
		n++;
	say("tlb-stress: verdict %s cpus %d seconds %.1f ops %lu probes %lu forks %lu violations %d",
	    n ? "FAIL" : "PASS", ncpu, secs, ops, probes, forks, n);
	return n ? 1 : 0;
}
