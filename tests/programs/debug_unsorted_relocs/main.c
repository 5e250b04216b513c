#include <stdio.h>

int main(void) {
    puts("unsorted relocations in a large non-allocated section");
    return 0;
}
