#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int lib_run(int x);
int hook(int x) { return x * 10; }   /* preempts the library's hook */
int other(int x) { return x * 100; } /* does not: the library binds its own */
int exe_listed(int x) { return x; }   /* exported by this executable's --dynamic-list */
int exe_unlisted(int x) { return -x; }

int main(void) {
    printf("lib_run(5)=%d\n", lib_run(5));
    printf("exe_listed exported: %d\n", dlsym(RTLD_DEFAULT, "exe_listed") != 0);
    printf("exe_unlisted exported: %d\n", dlsym(RTLD_DEFAULT, "exe_unlisted") != 0);
    return exe_unlisted(0);
}
