/* Native x86-64 harness for examples/vtd_iotlb.inv. Plain memory stands in
 * for the registers, so nothing clears IVT: every call ends in the poll's
 * timeout (-ETIMEDOUT), after writing the registers, which is what is
 * checked here. tests/strategies.rs covers the successful poll with
 * scripted register reads in the emulator. */
#include <stdint.h>
#include <stdio.h>
#include "vtd_iotlb.h"

static volatile uint64_t regs[2];
static int fails;
#define CHECK(c, ...) do { if (c) printf("ok " __VA_ARGS__); else { fails++; printf("FAIL " __VA_ARGS__); } printf("\n"); } while (0)

int main(void)
{
	long r = iotlb_flush_page((void *)regs, 0x1234, 0x7f0000200000ull, 9, 0);
	CHECK(r == -110, "no IOMMU: timeout (%ld)", r);
	CHECK(regs[0] == (0x7f0000200000ull | 9), "IVA = addr | am (%#llx)", (unsigned long long)regs[0]);
	CHECK(regs[1] == ((1ull << 63) | (3ull << 60) | (0x1234ull << 32)), "IOTLB = IVT | page | did (%#llx)",
	      (unsigned long long)regs[1]);
	CHECK(regs[1] == (IOTLB_IOTLB_IVT_PREP(1) | IOTLB_IOTLB_IIRG_PREP(3) | IOTLB_IOTLB_DID_PREP(0x1234)),
	      "IOTLB matches the header's field macros");
	r = iotlb_flush_domain((void *)regs, 0x10007, 0);
	CHECK(r == -110 && regs[1] == ((1ull << 63) | (2ull << 60) | (7ull << 32)), "domain flush, did masked to 16 bits (%#llx)",
	      (unsigned long long)regs[1]);
	/* cap_write_drain (CAP bit 54) sets DW (bit 48); no other CAP bit shows. */
	r = iotlb_flush_domain((void *)regs, 7, ~0ull);
	CHECK(r == -110 && regs[1] == ((1ull << 63) | (2ull << 60) | (7ull << 32) | (1ull << 48)),
	      "write drain from cap (%#llx)", (unsigned long long)regs[1]);
	return fails != 0;
}
