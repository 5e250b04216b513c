#include <stdio.h>

int main(void) {
    puts("never linked");
    return 0;
}
