#include <stdint.h>
#include <stdio.h>

static char big_bss[64 << 20];
int global_bss[1 << 18];
_Alignas(4096) static char page_aligned_bss[8192];
int init_data[1 << 18] = {1, 2, 3, [(1 << 18) - 1] = 99};
_Alignas(65536) static char huge_aligned[100] = "very aligned";

/* The compiler knows the declared alignment and would fold an alignment test to true: hide the address from it. */
static uintptr_t opaque(const void *p) {
    uintptr_t a = (uintptr_t)p;
    __asm__("" : "+r"(a));
    return a;
}

int main(void) {
    long sum = 0;
    for (long i = 0; i < (long)sizeof big_bss; i += 4096)
        sum += big_bss[i];
    big_bss[sizeof big_bss - 1] = 3;
    global_bss[(1 << 18) - 1] = 4;
    page_aligned_bss[8191] = 5;
    printf("bss all zero: %d\n", sum == 0);
    printf("ends: %d %d %d\n", big_bss[sizeof big_bss - 1], global_bss[(1 << 18) - 1], page_aligned_bss[8191]);
    printf("init_data: %d %d %d\n", init_data[0], init_data[2], init_data[(1 << 18) - 1]);
    printf("alignment: %d %d\n", opaque(page_aligned_bss) % 4096 == 0, opaque(huge_aligned) % 65536 == 0);
    printf("%s\n", huge_aligned);
    return 0;
}
