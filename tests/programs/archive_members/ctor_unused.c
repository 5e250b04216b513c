#include <stdio.h>
int ctor_unused_marker = 1;
__attribute__((constructor)) static void ctor_unused(void) { puts("ctor_unused ran: member must not be linked"); }
