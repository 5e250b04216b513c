/* Identical but for their names. */
__attribute__((noinline)) int leaf_a(int x) { return x * 7 + 3; }
__attribute__((noinline)) int leaf_b(int x) { return x * 7 + 3; }
/* Identical but for the (identical) callee: folded only at the fixed point. */
__attribute__((noinline)) int via_a(int x) { return leaf_a(x) + leaf_a(x + 1); }
__attribute__((noinline)) int via_b(int x) { return leaf_b(x) + leaf_b(x + 1); }
/* Read-only tables, and readers identical but for the table. */
static const int table_a[16] = {1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987};
static const int table_b[16] = {1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987};
__attribute__((noinline)) int sum_a(int i) { return table_a[i] + table_a[i + 3]; }
__attribute__((noinline)) int sum_b(int i) { return table_b[i] + table_b[i + 3]; }
