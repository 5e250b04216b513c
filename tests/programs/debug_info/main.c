#include <stdio.h>

int helper_in_other_file(int x, const char *tag);

__attribute__((noinline)) int static_helper(int v) {
    int doubled = v * 2;
    return doubled + 1;
}

int main(void) {
    int a = static_helper(20);
    int b = helper_in_other_file(a, "from main");
    printf("a=%d b=%d\n", a, b);
    return 0;
}
