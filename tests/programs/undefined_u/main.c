#include <stdio.h>
int main(void) {
    puts("main ran");
    return 0;
}
