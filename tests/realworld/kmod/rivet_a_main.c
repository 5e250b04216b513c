// SPDX-License-Identifier: GPL-2.0
/* rivet_a's init: a module parameter (the loader writes it through __param), a counter in .bss and a call through
 * every entry of the other object's table. */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/printk.h>
#include "rivet_a.h"

static int seed = 1;
module_param(seed, int, 0444);
static int calls;

static int __init rivet_a_init(void)
{
	int i, sum = 0;

	for (i = 0; i < rivet_nops; i++, calls++)
		sum += rivet_ops[i].fn(seed, 3);
	pr_info("RIVET-MOD-A: seed=%d sum=%d calls=%d second=%s\n", seed, sum, calls, rivet_ops[1].name);
	return 0;
}
module_init(rivet_a_init);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rivet's -r test: two objects, an exported function");
