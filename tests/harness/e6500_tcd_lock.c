/* Drives examples/e6500_tcd_lock.inv under qemu-user (or natively). */
#include <stdio.h>
#include "e6500_tcd_lock.h"

int main(void)
{
	unsigned char lock = 0;
	long r = tcd_lock(&lock, 5);
	printf("take %ld %u\n", r, lock);
	long token = tcd_lock(&lock, 5);
	printf("held %ld %u\n", token, lock);
	tcd_unlock(&lock, token);
	printf("nested-unlock %u\n", lock);
	tcd_unlock(&lock, r);
	printf("release %u\n", lock);

	/* The kernel's struct tlb_core_data: lock, esel_next, esel_max,
	 * esel_first. */
	unsigned char tcd[4] = { 0, 2, 4, 1 };
	unsigned int mas0[2] = { 0, 0 };
	r = tcd_next_esel(tcd, mas0, 1);
	printf("esel %ld %x %x %u %u\n", r, mas0[0], mas0[1], tcd[1], tcd[0]);
	r = tcd_next_esel(tcd, mas0, 7);
	printf("esel %ld %x %x %u %u\n", r, mas0[0], mas0[1], tcd[1], tcd[0]);
	return 0;
}
