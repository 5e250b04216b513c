// SPDX-License-Identifier: GPL-2.0
/* rivet_b: calls rivet_a's exported function (a relocation against an undefined symbol the loader resolves), and
 * has an exit function, run when the module is removed. */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/printk.h>
#include "rivet_a.h"

static const char *const names[] = { "mul", "add", "none" };

static int __init rivet_b_init(void)
{
	pr_info("RIVET-MOD-B: %d %d %d\n", rivet_apply(names[0], 6, 7), rivet_apply(names[1], 40, 2),
		rivet_apply(names[2], 1, 1));
	return 0;
}

static void __exit rivet_b_exit(void)
{
	pr_info("RIVET-MOD-B: exit\n");
}
module_init(rivet_b_init);
module_exit(rivet_b_exit);
MODULE_LICENSE("GPL");
