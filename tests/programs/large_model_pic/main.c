#include <stdio.h>
int lib_read(void);
int lib_static_read(void);
int main(void) { printf("%d %d\n", lib_read(), lib_static_read()); return 0; }
