#include <stdio.h>
int a_entry(int);
int main(void) {
    printf("a_entry(1)=%d\n", a_entry(1));
    return 0;
}
