/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A fake command-queue IOMMU for tests/queues_x86.rs, natively on x86-64:
 * the device registers are plain memory (`mmio`), the ring and the
 * completion word are plain memory, and a consumer thread plays the
 * IOMMU. It watches the tail register, takes each new 16-byte entry at
 * the head, checks it word for word against the next command the test
 * expects (built by a C transcription of the kernel's own encoder for the
 * same arguments), performs a completion store (VT-d invalidation wait
 * with SW, AMD COMPLETION_WAIT with S) after a scripted delay, and moves
 * the head register. Every access to the fake registers, the ring and the
 * completion word goes through __atomic builtins, so the compiler cannot
 * cache them; acquire on the tail read orders the entry reads after it
 * (the generated code's plain stores on x86-64 are TSO-ordered).
 *
 * Each example's harness defines:
 *   int dev_is_completion(const uint64_t w[2], uint64_t *addr, uint64_t *value,
 *                         unsigned *width);
 *   void dev_describe(const uint64_t w[2], char *buf, size_t n);
 */
#ifndef QX_CONSUMER_H
#define QX_CONSUMER_H

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define QX_MAXCMD 4096

struct qx_dev {
	uint8_t *mmio;
	unsigned head_off, tail_off;
	uint64_t *ring;
	unsigned log2n;
	/* What the consumer expects, in order (filled by the test thread). */
	uint64_t exp[QX_MAXCMD][2];
	int nexp;            /* atomic: published count */
	int ngot;            /* atomic: consumed count */
	int fails;           /* atomic */
	int stop;            /* atomic */
	int paused;          /* atomic: take nothing */
	long start_delay_us; /* before taking the first entry */
	int hold;            /* take nothing before the tail moves (then the delay) */
	long entry_delay_us; /* before taking each entry */
	long done_delay_us;  /* before a completion store */
	/* Observations. */
	int tail_moves;      /* distinct tail values seen */
	unsigned max_pending; /* most entries published and not yet taken */
	int completions;
	int bad_tail;
	int verbose;
	int running;         /* atomic: the thread has started */
	pthread_t thread;
};

static int qx_fails;
#define CHECK(c, ...)                                                 \
	do {                                                          \
		if (c) {                                              \
			printf("ok ");                                \
		} else {                                              \
			qx_fails++;                                   \
			printf("FAIL ");                              \
		}                                                     \
		printf(__VA_ARGS__);                                  \
		printf("\n");                                         \
	} while (0)

int dev_is_completion(const uint64_t w[2], uint64_t *addr, uint64_t *value, unsigned *width);
void dev_describe(const uint64_t w[2], char *buf, size_t n);

static uint32_t qx_reg_load(struct qx_dev *d, unsigned off)
{
	return __atomic_load_n((uint32_t *)(d->mmio + off), __ATOMIC_ACQUIRE);
}

static void qx_reg_store(struct qx_dev *d, unsigned off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(d->mmio + off), v, __ATOMIC_RELEASE);
}

static double qx_now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* A busy delay (a sleep could oversleep by a scheduler tick). */
static void qx_delay(struct qx_dev *d, long us)
{
	double end = qx_now_us() + (double)us;
	while (us > 0 && qx_now_us() < end && !__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

/* A tail value seen: count the move, check it, note how full the ring is
 * (against the head this consumer has not moved yet). */
static void qx_watch_tail(struct qx_dev *d, uint32_t head, uint32_t *last_tail)
{
	uint32_t mask = (16u << d->log2n) - 1;
	uint32_t tail = qx_reg_load(d, d->tail_off);
	if (tail == *last_tail)
		return;
	d->tail_moves++;
	*last_tail = tail;
	if ((tail & 15) || tail > mask) {
		d->bad_tail++;
		__atomic_fetch_add(&d->fails, 1, __ATOMIC_ACQ_REL);
		printf("  consumer: tail %#x is not an entry offset of a %u-byte ring\n", tail, mask + 1);
	}
	uint32_t pending = ((tail - head) & mask) / 16;
	if (pending > d->max_pending)
		d->max_pending = pending;
}

static void *qx_consumer(void *arg)
{
	struct qx_dev *d = arg;
	uint32_t mask = (16u << d->log2n) - 1;
	uint32_t head = qx_reg_load(d, d->head_off);
	uint32_t last_tail = qx_reg_load(d, d->tail_off);
	int first = 1;

	__atomic_store_n(&d->running, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE)) {
		qx_watch_tail(d, head, &last_tail);
		if (last_tail == head || __atomic_load_n(&d->paused, __ATOMIC_ACQUIRE) || d->bad_tail) {
			__builtin_ia32_pause();
			continue;
		}
		if (first) {
			/* Late, but watching the tail meanwhile; with `hold`, the
			 * delay starts when the tail first moves (at most 1 s). */
			double end = qx_now_us() + (d->hold ? 1e6 : (double)d->start_delay_us);
			while (qx_now_us() < end && !__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE)) {
				qx_watch_tail(d, head, &last_tail);
				if (d->hold && d->tail_moves > 0) {
					d->hold = 0;
					end = qx_now_us() + (double)d->start_delay_us;
				}
				__builtin_ia32_pause();
			}
			first = 0;
		}
		qx_delay(d, d->entry_delay_us);
		uint64_t w[2];
		w[0] = __atomic_load_n(&d->ring[head / 8], __ATOMIC_ACQUIRE);
		w[1] = __atomic_load_n(&d->ring[head / 8 + 1], __ATOMIC_ACQUIRE);
		int k = __atomic_load_n(&d->ngot, __ATOMIC_ACQUIRE);
		int n = __atomic_load_n(&d->nexp, __ATOMIC_ACQUIRE);
		char got[200], want[200];
		dev_describe(w, got, sizeof(got));
		if (k >= n) {
			__atomic_fetch_add(&d->fails, 1, __ATOMIC_ACQ_REL);
			printf("  consumer: unexpected command %d at %#x: %s\n", k, head, got);
		} else if (w[0] != d->exp[k][0] || w[1] != d->exp[k][1]) {
			__atomic_fetch_add(&d->fails, 1, __ATOMIC_ACQ_REL);
			dev_describe(d->exp[k], want, sizeof(want));
			printf("  consumer: command %d at %#x is %016" PRIx64 " %016" PRIx64 " (%s)\n"
			       "            the kernel's is  %016" PRIx64 " %016" PRIx64 " (%s)\n",
			       k, head, w[1], w[0], got, d->exp[k][1], d->exp[k][0], want);
		} else if (d->verbose) {
			printf("  saw %d at %#x: %s\n", k, head, got);
		}
		uint64_t addr, value;
		unsigned width;
		/* Like the device: a completion store once everything before
		 * it is done, to the address the command names. A wrong command
		 * stores nothing (the caller then times out). */
		if (dev_is_completion(w, &addr, &value, &width) && k < n && w[0] == d->exp[k][0] &&
		    w[1] == d->exp[k][1]) {
			qx_delay(d, d->done_delay_us);
			if (width == 32)
				__atomic_store_n((uint32_t *)(uintptr_t)addr, (uint32_t)value, __ATOMIC_RELEASE);
			else
				__atomic_store_n((uint64_t *)(uintptr_t)addr, value, __ATOMIC_RELEASE);
			d->completions++;
		}
		head = (head + 16) & mask;
		__atomic_store_n(&d->ngot, k + 1, __ATOMIC_RELEASE);
		qx_reg_store(d, d->head_off, head);
	}
	return NULL;
}

/* A fresh ring of 2^log2n entries (filled with a pattern no command has),
 * head and tail at byte offset `at`, nothing expected. */
static void qx_reset(struct qx_dev *d, unsigned log2n, uint32_t at)
{
	size_t bytes = (size_t)16 << log2n;
	free(d->ring);
	d->ring = aligned_alloc(4096, bytes < 4096 ? 4096 : bytes);
	memset(d->ring, 0xa5, bytes);
	d->log2n = log2n;
	qx_reg_store(d, d->head_off, at);
	qx_reg_store(d, d->tail_off, at);
	d->nexp = d->ngot = d->fails = d->stop = d->paused = d->running = 0;
	d->start_delay_us = d->entry_delay_us = d->done_delay_us = 0;
	d->hold = 0;
	d->tail_moves = d->completions = d->bad_tail = 0;
	d->max_pending = 0;
}

static void qx_expect(struct qx_dev *d, const uint64_t w[2])
{
	int n = d->nexp;
	if (n >= QX_MAXCMD) {
		printf("FAIL too many expected commands\n");
		exit(2);
	}
	d->exp[n][0] = w[0];
	d->exp[n][1] = w[1];
	__atomic_store_n(&d->nexp, n + 1, __ATOMIC_RELEASE);
}

/* An entry another caller published before this test's call: written to
 * the ring at the tail, the tail moved past it, and expected. */
static void qx_prefill(struct qx_dev *d, const uint64_t w[2])
{
	uint32_t mask = (16u << d->log2n) - 1;
	uint32_t tail = qx_reg_load(d, d->tail_off);
	d->ring[tail / 8] = w[0];
	d->ring[tail / 8 + 1] = w[1];
	qx_expect(d, w);
	qx_reg_store(d, d->tail_off, (tail + 16) & mask);
}

static void qx_start(struct qx_dev *d)
{
	if (pthread_create(&d->thread, NULL, qx_consumer, d) != 0) {
		printf("FAIL pthread_create\n");
		exit(2);
	}
	/* The calls are timed: not the thread's start-up. */
	while (!__atomic_load_n(&d->running, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

/* Wait (at most 5 s) until the consumer took everything expected, then
 * stop it. Returns 1 when it did. */
static int qx_finish(struct qx_dev *d)
{
	double end = qx_now_us() + 5e6;
	int drained = 0;
	while (qx_now_us() < end) {
		if (__atomic_load_n(&d->ngot, __ATOMIC_ACQUIRE) >= __atomic_load_n(&d->nexp, __ATOMIC_ACQUIRE) &&
		    qx_reg_load(d, d->head_off) == qx_reg_load(d, d->tail_off)) {
			drained = 1;
			break;
		}
		__builtin_ia32_pause();
	}
	__atomic_store_n(&d->stop, 1, __ATOMIC_RELEASE);
	pthread_join(d->thread, NULL);
	return drained;
}

#endif
