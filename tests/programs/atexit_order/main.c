#include <stdio.h>
#include <stdlib.h>

static void first(void) { puts("atexit registered first, runs last"); }
static void second(void) { puts("atexit registered second"); }
static void third(void) { puts("atexit registered third, runs first"); }
__attribute__((destructor)) static void dtor(void) { puts("destructor"); }

int main(void) {
    atexit(first);
    atexit(second);
    atexit(third);
    puts("main calls exit(42)");
    exit(42);
}
