#include <stdio.h>
int get_value(void);
int lib_get(void);
int main(void) { printf("%d %d\n", get_value(), lib_get()); return 0; }
