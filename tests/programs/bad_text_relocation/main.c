#include <stdio.h>
int get_value(void);
int main(void) { printf("%d\n", get_value()); return 0; }
