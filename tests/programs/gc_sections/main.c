#include <stdio.h>

int used_fn(int);
int used_via_pointer(int);
extern int used_data[4];
extern int kept_counter;

int (*fp)(int) = used_via_pointer;

int main(void) {
    printf("used_fn=%d pointer=%d data=%d ctor=%d\n", used_fn(3), fp(4), used_data[2], kept_counter);
    return 0;
}
