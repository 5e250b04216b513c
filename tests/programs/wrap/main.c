#include <stdio.h>
int compute(int x);
extern int wrapped_calls;
int main(void) {
    int a = compute(1), b = compute(20);
    printf("compute(1)=%d compute(20)=%d wrapped_calls=%d\n", a, b, wrapped_calls);
    return 0;
}
