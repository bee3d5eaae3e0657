/*
 * STAND-IN, NOT GENERATED: prototypes of standin_radix_tlb.S (see there).
 * @P@ / @PU@ are the variant's prefix in lower / upper case.
 */
#ifndef SHOOTDOWN_RADIX_TLB_H
#define SHOOTDOWN_RADIX_TLB_H
#include <linux/types.h>
/* tlb_single_page_flush_ceiling: pages the per-page loop covers at most */
#define @PU@FLUSH_TLB_RANGE_CEILING 33
long @P@flush_tlb_page(u64 pid, u64 va);
long @P@flush_tlb_page_local(u64 pid, u64 va);
long @P@flush_tlb_pid(u64 pid);
long @P@flush_tlb_range(u64 pid, u64 start, u64 end);
long @P@flush_tlb_all(void);
#endif
