// SPDX-License-Identifier: GPL-2.0
/* A table of function pointers (absolute relocations in read-only data), a lookup by name (string constants)
 * and an exported function, in the second object of rivet_a. */
#include <linux/module.h>
#include <linux/string.h>
#include "rivet_a.h"

static int op_add(int x, int y) { return x + y; }
static int op_mul(int x, int y) { return x * y; }
static int op_sub(int x, int y) { return x - y; }

const struct rivet_op rivet_ops[] = { { "add", op_add }, { "mul", op_mul }, { "sub", op_sub } };
const int rivet_nops = ARRAY_SIZE(rivet_ops);

int rivet_apply(const char *name, int x, int y)
{
	int i;

	for (i = 0; i < rivet_nops; i++)
		if (!strcmp(rivet_ops[i].name, name))
			return rivet_ops[i].fn(x, y);
	return -1;
}
EXPORT_SYMBOL_GPL(rivet_apply);
