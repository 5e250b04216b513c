#include <stdio.h>
int forced_symbol = 42;
__attribute__((constructor)) static void forced_ctor(void) { puts("forced member constructor ran"); }
