#include <stdio.h>
#include "items.h"

extern const struct item __start_rivet_items[];
extern const struct item __stop_rivet_items[];

ITEM(main_one, 1)
ITEM(main_two, 2)

int main(void) {
    int n = 0, sum = 0;
    for (const struct item *it = __start_rivet_items; it < __stop_rivet_items; it++, n++) {
        printf("%s=%d\n", it->name, it->value);
        sum += it->value;
    }
    printf("items=%d sum=%d\n", n, sum);
    return n == 5 ? 0 : 1;
}
