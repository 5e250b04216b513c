#include <stdio.h>
#include "registry.h"

struct plugin *registry;

void register_plugin(struct plugin *p) {
    p->next = registry;
    registry = p;
}

int main(void) {
    int n = 0;
    for (struct plugin *p = registry; p; p = p->next, n++)
        printf("plugin %s -> %d\n", p->name, p->fn(n));
    return n == 3 ? 0 : 1;
}
