#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int exported_fn(int x) { return x * 3; }
int exported_data = 1234;
const char exported_name[] = "visible";

int main(void) {
    void *self = dlopen(NULL, RTLD_NOW);
    int (*f)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "exported_fn");
    int *d = (int *)dlsym(self, "exported_data");
    const char *n = (const char *)dlsym(self, "exported_name");
    printf("fn found=%d same=%d call=%d\n", f != 0, f == exported_fn, f ? f(5) : -1);
    printf("data found=%d same=%d value=%d\n", d != 0, d == &exported_data, d ? *d : -1);
    printf("name=%s\n", n ? n : "(missing)");
    printf("missing symbol: %d\n", dlsym(self, "no_such_symbol_anywhere") == 0);
    return f && d && n ? 0 : 1;
}
