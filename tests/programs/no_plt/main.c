#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int np_lib(int x);
__attribute__((noinline)) int local_fn(int x) { return x + 3; }

int main(void) {
    char *s = malloc(32);
    strcpy(s, "no plt here");
    printf("%s len=%zu np_lib=%d local=%d\n", s, strlen(s), np_lib(0x0f), local_fn(4));
    int (*p)(int) = np_lib;
    printf("pointer call=%d same=%d\n", p(1), p == np_lib);
    free(s);
    return 0;
}
