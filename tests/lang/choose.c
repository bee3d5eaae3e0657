/* The C mirror of choose.inv's `choose`, compiled by the host gcc: the
 * oracle for what the generated code must write. Prints one line per
 * input: the register writes in program order. Shifts of 64 or more give
 * 0 in the spec language; C leaves them undefined, so they are spelled out. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t shl(uint64_t a, uint64_t n) { return n >= 64 ? 0 : a << n; }
static uint64_t shr(uint64_t a, uint64_t n) { return n >= 64 ? 0 : a >> n; }
static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }

int main(int argc, char **argv)
{
	for (int i = 1; i + 2 < argc; i += 3) {
		uint64_t n = strtoull(argv[i], 0, 0), lim = strtoull(argv[i + 1], 0, 0),
			 flag = strtoull(argv[i + 2], 0, 0);
		printf("%llx %llx %llx:", (unsigned long long)n, (unsigned long long)lim,
		       (unsigned long long)flag);
		if (n > lim || flag != 0) {
			printf(" b=%llx", 1ULL);
		} else if (n >= 16 && n <= 32) {
			printf(" a=%llx b=%llx", (unsigned long long)n, 2ULL);
		} else if (!(n & 1)) {
			printf(" a=%llx", (unsigned long long)shl(n, lim & 63));
			printf(" b=%llx", (unsigned long long)((uint64_t)(n < lim) + (uint64_t)(n == 4) * 4 +
							  (uint64_t)(lim >= 3 && n != 0) * 8));
		} else {
			printf(" a=%llx", (unsigned long long)shr(lim, n));
			printf(" b=%llx", (unsigned long long)(((n - lim * 3) ^ (7 & 5)) | 8));
		}
		printf(" st=%llx\n", (unsigned long long)((umin(n, lim) + umax(n, flag)) & 0xffffffffULL));
	}
	return 0;
}
