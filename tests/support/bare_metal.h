/*
 * What the bare-metal QEMU oracle images (smmuv3_qemu/harness.c,
 * vtd_qemu/harness.c) share, included once by each harness after it has
 * defined u64 and its putc_ (PL011 or COM1):
 * - console output: strings, hex and decimal numbers, ` key=0xvalue`
 *   fields and ` FAIL:what` verdicts, which the tests read back
 *   (tests/smmuv3_qemu.rs, tests/vtd_qemu.rs);
 * - the command line's mode word;
 * - the memset/memcpy gcc may call even with -ffreestanding.
 */
#ifndef SD_BARE_METAL_H
#define SD_BARE_METAL_H

static void puts_(const char *s)
{
	while (*s)
		putc_(*s++);
}
static void puthex(u64 v)
{
	int i, started = 0;
	puts_("0x");
	for (i = 60; i >= 0; i -= 4) {
		int d = (v >> i) & 0xf;
		if (d || started || i == 0) {
			putc_("0123456789abcdef"[d]);
			started = 1;
		}
	}
}
static void putdec(long v)
{
	char buf[24];
	int n = 0;
	u64 u = v < 0 ? -(u64)v : (u64)v;
	if (v < 0)
		putc_('-');
	do {
		buf[n++] = '0' + u % 10;
		u /= 10;
	} while (u);
	while (n)
		putc_(buf[--n]);
}
static void kv(const char *k, u64 v)
{
	putc_(' ');
	puts_(k);
	putc_('=');
	puthex(v);
}


/* Checks that failed so far; the image's exit status says whether any did. */
static int failures;

static void fail(const char *what)
{
	puts_(" FAIL:");
	puts_(what);
	failures++;
}

/* Is the last word of the command line `s` (after the image name, if the
 * loader passes one) `want`? */
static int last_word_is(const char *s, const char *want)
{
	const char *w = s;
	int i;
	for (i = 0; s[i]; i++)
		if (s[i] == ' ')
			w = s + i + 1;
	for (i = 0; want[i]; i++)
		if (w[i] != want[i])
			return 0;
	return w[i] == 0;
}

void *memset(void *d, int c, unsigned long n)
{
	unsigned char *p = d;
	while (n--)
		*p++ = (unsigned char)c;
	return d;
}
void *memcpy(void *d, const void *s, unsigned long n)
{
	unsigned char *p = d;
	const unsigned char *q = s;
	while (n--)
		*p++ = *q++;
	return d;
}

#endif
