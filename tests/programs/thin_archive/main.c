#include <stdio.h>
int t1(int);
int main(void) {
    printf("t1(4)=%d\n", t1(4));
    return 0;
}
