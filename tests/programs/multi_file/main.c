#include <stdio.h>
#include "shared.h"

int global_counter = 5;
static int file_static = 100;
const char *const names[] = {"alpha", "beta", "gamma"};

static int bump(void) { return ++file_static; }

int main(void) {
    for (int i = 0; i < 3; i++)
        add_to_counter(i + 1);
    printf("counter=%d\n", global_counter);
    printf("table sum=%d\n", table_sum());
    for (int i = 0; i < NOPS; i++)
        printf("op[%d](7,3)=%d\n", i, ops[i](7, 3));
    printf("static in main: %d %d\n", bump(), bump());
    printf("static in util: %d %d\n", util_next(), util_next());
    printf("names: %s %s %s\n", names[0], names[1], names[2]);
    printf("message: %s\n", message);
    printf("big[999]=%ld\n", big_table[999]);
    return global_counter == 11 ? 0 : 1;
}
