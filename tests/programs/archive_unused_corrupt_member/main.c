#include <stdio.h>
int good(void);
int main(void) { printf("%d\n", good()); return 0; }
