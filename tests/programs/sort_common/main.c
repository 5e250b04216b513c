#include <stdint.h>
#include <stdio.h>

/* Tentative definitions of different alignments, compiled with -fcommon: common symbols. */
char c1;
double d1;
short s1;
char c2;
long double ld1;
int i1;

int main(void) {
    /* With --sort-common the largest alignments come first, so no padding is needed between them. */
    uintptr_t a[] = {(uintptr_t)&ld1, (uintptr_t)&d1, (uintptr_t)&i1, (uintptr_t)&s1, (uintptr_t)&c1};
    int sorted = 1;
    for (int k = 1; k < 5; k++)
        sorted &= a[k - 1] < a[k];
    /* Within an alignment class the order is the linker's own. */
    sorted &= (uintptr_t)&s1 < (uintptr_t)&c2;
    printf("largest alignment first: %d\n", sorted);
    c1 = 1;
    printf("%d %g %d %d %Lg %d\n", c1, d1, s1, c2, ld1, i1);
    return 0;
}
