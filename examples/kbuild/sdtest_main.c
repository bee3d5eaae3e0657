// SPDX-License-Identifier: GPL-2.0
/*
 * Example user of shootdown-generated code: the sequences from
 * examples/npu2_atsd.inv, assembled from the generated .S, exported for
 * a driver that owns the NPU ATSD register mappings.
 */
#include <linux/module.h>
#include <linux/io.h>

#include "npu2_atsd.h"
#include "errata.h"

EXPORT_SYMBOL_GPL(sdtest_invalidate_va);
EXPORT_SYMBOL_GPL(sdtest_invalidate_pid);
EXPORT_SYMBOL_GPL(sdtest_invalidate_range);
EXPORT_SYMBOL_GPL(sdtest_errata_kick);

static int __init sdtest_init(void)
{
	/* --prefix sdtest_ (Kbuild) prefixes the header's names too. */
	u64 launch = sdtest_npu_launch_prs_prep(1) | sdtest_npu_launch_pid_prep(42);

	BUILD_BUG_ON(SDTEST_NPU_LAUNCH_PID_MASK != GENMASK_ULL(39, 25));
	pr_info("sdtest: ATSD launch word %#llx, up to %d NPUs\n",
		launch, SDTEST_NPU_INSTANCES_MAX);
	return 0;
}

static void __exit sdtest_exit(void)
{
}

module_init(sdtest_init);
module_exit(sdtest_exit);
MODULE_DESCRIPTION("shootdown-generated NPU2 ATSD sequences");
MODULE_LICENSE("GPL");
