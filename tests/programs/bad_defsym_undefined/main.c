#include <stdio.h>

extern char alias[];

int main(void) {
    printf("%p\n", (void *)alias);
    return 0;
}
