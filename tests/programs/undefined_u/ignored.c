#include <stdio.h>
int ignored_symbol = 1;
__attribute__((constructor)) static void ignored_ctor(void) { puts("ignored member constructor ran"); }
