#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec { const char *name; int (*fn)(int); const int *val; };

static int f_inc(int x) { return x + 1; }
static int f_neg(int x) { return -x; }
static const int seven = 7, eight = 8;
int counter_array[10] = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90};

/* R_X86_64_64 (RELATIVE in PIEs) against code and data */
static const struct rec recs[] = {{"inc", f_inc, &seven}, {"neg", f_neg, &eight}};
/* pointers into the middle of objects (addends) */
int *const middle = &counter_array[5];
const char *const tail = "abcdefgh" + 3;
/* pointers to libc: symbolic relocations against a shared library's symbols in dynamic links */
void *(*const alloc_fn)(size_t) = malloc;
size_t (*const len_fn)(const char *) = strlen;
/* a 32-bit PC-relative table, as jump tables and switch tables use */
extern const int32_t rel_table[3];
__asm__(".section .rodata\n"
        ".p2align 2\n"
        ".globl rel_table\n"
        "rel_table:\n"
        "  .long counter_array - rel_table\n"
        "  .long counter_array + 8 - rel_table\n"
        "  .long counter_array + 36 - rel_table\n"
        ".text\n");
/* link-time constant difference between two symbols */
static const ptrdiff_t diff = (char *)&counter_array[7] - (char *)&counter_array[2];

static int classify(int x) {
    switch (x) {
    case 0: return 11;
    case 1: return 22;
    case 2: return 33;
    case 3: return 44;
    case 4: return 55;
    case 5: return 66;
    case 6: return 77;
    default: return -1;
    }
}

int main(int argc, char **argv) {
    (void)argv;
    for (int i = 0; i < 2; i++)
        printf("%s(%d)=%d\n", recs[i].name, *recs[i].val, recs[i].fn(*recs[i].val));
    printf("middle=%d tail=%s diff=%td\n", *middle, tail, diff);
    char *m = alloc_fn(16);
    strcpy(m, "allocated");
    printf("%s %zu\n", m, len_fn(m));
    free(m);
    for (int i = 0; i < 3; i++)
        printf("rel_table[%d] -> %d\n", i, *(const int *)((const char *)rel_table + rel_table[i]));
    volatile int sel = argc + 2;
    for (int i = 0; i < 8; i++)
        printf("classify(%d)=%d ", i, classify((sel + i) % 8));
    printf("\n");
    return 0;
}
