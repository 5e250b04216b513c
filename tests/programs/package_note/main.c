#include <stdio.h>
int main(void) { puts("stamped with packaging metadata"); return 0; }
