#include <stdio.h>

int main(void) {
    puts("hello from rivet");
    printf("%s %d\n", "two plus two is", 2 + 2);
    return 0;
}
