#include <stdio.h>
unsigned lib_sum(void);
/* The executable preempts a few of the library's definitions, in different numbering chunks. */
int v1000 = 5, v2999 = 6;
int f2500(int x) { return x + 1000; }
int f3999(int x) { return x - 7; }
extern int v2000, v3500;
int f1001(int);
int f3998(int);
int main(void) {
    printf("sum %u\n", lib_sum());
    printf("direct %d %d %d %d\n", f1001(v2000), f3998(v3500), f2500(1), v1000 + v2999);
    return 0;
}
