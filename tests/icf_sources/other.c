/* The same code in another file. */
__attribute__((noinline)) int twin_1(int x) { return x * 7 + 3; }
__attribute__((noinline)) int twin_2(int x) { return (x ^ 5) * 11; }
__attribute__((noinline)) int addr_f(int x) { return x * 13 - 1; }
__attribute__((noinline)) int addr_g(int x) { return x * 13 - 1; }
int (*volatile pf)(int) = addr_f;
int (*volatile pg)(int) = addr_g;
int same_addr(void) { return pf == pg; }
/* A read-only table equal to c2.c's, read the same way. */
static const int table_c[16] = {1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987};
__attribute__((noinline)) int sum_c(int i) { return table_c[i] + table_c[i + 3]; }
