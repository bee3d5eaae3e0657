// SPDX-License-Identifier: GPL-2.0
/*
 * Oracle for tests/builtins.rs: the kernel's own C definitions of the bit
 * operations the spec language's built-ins are named after, copied from
 * Linux 6.1 (BITS_PER_LONG == 64), compiled by the host gcc and run
 * natively. Reads "x y n" lines (hex) on stdin and prints, per line, the
 * values tests/builtins/builtins.inv stores, in its order.
 *
 * Where the kernel's C is undefined, the value printed is the one the spec
 * language documents (src/ir/expr.rs `Func`, `BinOp::apply`), and the
 * place says so.
 */
#include <stdint.h>
#include <stdio.h>

typedef uint64_t u64;
typedef uint64_t __u64;
#define BITS_PER_LONG 64
#ifndef __always_inline /* glibc's <sys/cdefs.h> has one */
#define __always_inline inline __attribute__((always_inline))
#endif

/* include/asm-generic/bitops/__ffs.h; undefined for 0. */
static __always_inline unsigned long __ffs(unsigned long word)
{
	int num = 0;

#if BITS_PER_LONG == 64
	if ((word & 0xffffffff) == 0) {
		num += 32;
		word >>= 32;
	}
#endif
	if ((word & 0xffff) == 0) {
		num += 16;
		word >>= 16;
	}
	if ((word & 0xff) == 0) {
		num += 8;
		word >>= 8;
	}
	if ((word & 0xf) == 0) {
		num += 4;
		word >>= 4;
	}
	if ((word & 0x3) == 0) {
		num += 2;
		word >>= 2;
	}
	if ((word & 0x1) == 0)
		num += 1;
	return num;
}

/* include/asm-generic/bitops/__fls.h; undefined for 0. */
static __always_inline unsigned long __fls(unsigned long word)
{
	int num = BITS_PER_LONG - 1;

#if BITS_PER_LONG == 64
	if (!(word & (~0ul << 32))) {
		num -= 32;
		word <<= 32;
	}
#endif
	if (!(word & (~0ul << (BITS_PER_LONG-16)))) {
		num -= 16;
		word <<= 16;
	}
	if (!(word & (~0ul << (BITS_PER_LONG-8)))) {
		num -= 8;
		word <<= 8;
	}
	if (!(word & (~0ul << (BITS_PER_LONG-4)))) {
		num -= 4;
		word <<= 4;
	}
	if (!(word & (~0ul << (BITS_PER_LONG-2)))) {
		num -= 2;
		word <<= 2;
	}
	if (!(word & (~0ul << (BITS_PER_LONG-1))))
		num -= 1;
	return num;
}

/* include/linux/bitops.h (64-bit) */
static inline unsigned long __ffs64(u64 word)
{
	return __ffs((unsigned long)word);
}

/* include/asm-generic/bitops/fls64.h (BITS_PER_LONG == 64) */
static __always_inline int fls64(__u64 x)
{
	if (x == 0)
		return 0;
	return __fls(x) + 1;
}

/* include/linux/bitops.h (64-bit long) */
static inline unsigned int fls_long(unsigned long l)
{
	return fls64(l);
}

/* include/linux/log2.h: what ilog2() is at run time. */
static inline __attribute__((const))
int __ilog2_u64(u64 n)
{
	return fls64(n) - 1;
}

/*
 * include/linux/log2.h __roundup_pow_of_two() is `1UL << fls_long(n - 1)`:
 * undefined in C for n == 0 and n > 2^63 (a shift by 64; the kernel
 * documents n == 0 as undefined). There the spec language defines 0.
 */
static inline __attribute__((const))
unsigned long __roundup_pow_of_two(unsigned long n)
{
	unsigned int s = fls_long(n - 1);

	return s >= BITS_PER_LONG ? 0 : 1UL << s;
}

/*
 * lib/hweight.c, verbatim. Built without CONFIG_ARCH_HAS_FAST_MULTIPLIER,
 * so this is the shift-and-add variant, not the multiplying one the
 * lowerings transcribe (src/isa/hweight.rs).
 */
unsigned long __sw_hweight64(__u64 w)
{
#if BITS_PER_LONG == 32
	return __sw_hweight32((unsigned int)(w >> 32)) +
	       __sw_hweight32((unsigned int)w);
#elif BITS_PER_LONG == 64
#ifdef CONFIG_ARCH_HAS_FAST_MULTIPLIER
	w -= (w >> 1) & 0x5555555555555555ul;
	w =  (w & 0x3333333333333333ul) + ((w >> 2) & 0x3333333333333333ul);
	w =  (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0ful;
	return (w * 0x0101010101010101ul) >> 56;
#else
	__u64 res = w - ((w >> 1) & 0x5555555555555555ul);
	res = (res & 0x3333333333333333ul) + ((res >> 2) & 0x3333333333333333ul);
	res = (res + (res >> 4)) & 0x0F0F0F0F0F0F0F0Ful;
	res = res + (res >> 8);
	res = res + (res >> 16);
	return (res + (res >> 32)) & 0x00000000000000FFul;
#endif
#endif
}

/*
 * The built-ins on top of those, as src/ir/expr.rs documents them.
 * ffs: libc/kernel ffs() extended to 64 bits, 0 for 0.
 */
static u64 ffs64(u64 x) { return x ? __ffs64(x) + 1 : 0; }
/* ctz: __ffs64(); undefined in the kernel for 0, 64 in the language. */
static u64 ctz64(u64 x) { return x ? __ffs64(x) : 64; }
/* clz: 64 - fls64(), which fls64(0) = 0 makes 64 for 0. */
static u64 clz64(u64 x) { return 64 - fls64(x); }
/* The kernel's min()/max() on two u64 values, without the type checks. */
static u64 min64(u64 x, u64 y) { return x < y ? x : y; }
static u64 max64(u64 x, u64 y) { return x > y ? x : y; }
/* C leaves shifts by 64 or more undefined; the language defines 0. */
static u64 shl(u64 x, u64 n) { return n >= 64 ? 0 : x << n; }
static u64 shr(u64 x, u64 n) { return n >= 64 ? 0 : x >> n; }

int main(void)
{
	unsigned long long x, y, n;

	while (scanf("%llx %llx %llx", &x, &y, &n) == 3) {
		/* vtd's mask (cache_tag_flush_range's shape, simplified) */
		u64 all = x == 0 && y == ~0ull, m = 52;

		if (!all)
			m = (u64)(int64_t)__ilog2_u64(__roundup_pow_of_two(y - x + 1));
		u64 v[] = {
			ffs64(x),
			fls64(x),
			ctz64(x),
			clz64(x),
			(u64)(int64_t)__ilog2_u64(x),
			__roundup_pow_of_two(x),
			__sw_hweight64(x),
			min64(x, y),
			max64(x, y),
			shl(x, n),
			shr(x, n),
			shl(y, x),
			shr(y, x),
			x < y,
			x <= y,
			x > y,
			x >= y,
			x == y,
			x != y,
			ffs64(y) + fls64(n) + __sw_hweight64(x ^ y),
			/* select(c, a, b) is C's c ? a : b */
			x < y ? x ^ n : y + n,
			(x & 1) ? n : (x == y ? y : x - y),
			(all || m > (n & 0x3f)) ? m : (shl(0x1000, m) | m),
			shl(1, n) ^ shl(1, x),
		};
		for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++)
			printf("%s%llx", i ? " " : "", (unsigned long long)v[i]);
		printf("\n");
	}
	return 0;
}
