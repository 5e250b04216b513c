#include <stdio.h>
void lazy_member_fn(void) { puts("lazy member linked"); }
