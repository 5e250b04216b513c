#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int exe_callback(int x) { return x + 40; }

int main(void) {
    void *bad = dlopen("libundef.so", RTLD_NOW);
    const char *err = bad ? "" : dlerror();
    printf("libundef.so with RTLD_NOW: %s\n", bad ? "loaded" : (strstr(err, "nowhere_defined") ? "undefined symbol nowhere_defined" : err));
    void *lazy = dlopen("libundef.so", RTLD_LAZY);
    int (*ok)(int) = lazy ? (int (*)(int))dlsym(lazy, "lib_ok") : 0;
    printf("libundef.so lazily: lib_ok(2)=%d\n", ok ? ok(2) : -1);
    void *good = dlopen("libgood.so", RTLD_NOW);
    int (*entry)(int) = good ? (int (*)(int))dlsym(good, "good_entry") : 0;
    printf("libgood.so: good_entry(1)=%d\n", entry ? entry(1) : -1);
    return 0;
}
