/* SHF_LINK_ORDER: clang puts each function's patchable-entry record in its own __patchable_function_entries
   section linked to the function's section; --gc-sections keeps the records of live functions only. */
#include <stdio.h>
int unused_a(int x) { return x * 3; }
int used_b(int x) { return x + 2; }
int unused_c(int x) { return x - 7; }
int main(void) { printf("b=%d\n", used_b(1)); return 0; }
