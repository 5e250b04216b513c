#include <stdio.h>

int main(void) {
    puts("linked with -z keywords that set dynamic flags and the stack size, and one GNU ld only warns about");
    return 0;
}
