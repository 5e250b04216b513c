#include <stdio.h>

int used_fn(int);

int main(void) {
    printf("used_fn(5)=%d\n", used_fn(5));
    return 0;
}
