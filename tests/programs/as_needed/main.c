#include <stdio.h>
int used_fn(int);
int main(void) {
    printf("used_fn(1)=%d\n", used_fn(1));
    return 0;
}
