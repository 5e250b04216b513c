#include "shared.h"

int table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
long big_table[1000];
static int file_static = 10;

void add_to_counter(int n) { global_counter += n; }

int table_sum(void) {
    int s = 0;
    for (int i = 0; i < 8; i++)
        s += table[i];
    return s;
}

int util_next(void) {
    big_table[999] = 1000L * ++file_static;
    return file_static;
}
