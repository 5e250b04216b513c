#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int api(int x); /* binds to the default version, api@@VERS_3 */

int main(void) {
    printf("api(10)=%d\n", api(10));
    for (int v = 1; v <= 3; v++) {
        char ver[16];
        snprintf(ver, sizeof ver, "VERS_%d", v);
        int (*f)(int) = (int (*)(int))dlvsym(RTLD_DEFAULT, "api", ver);
        printf("api@%s(10)=%d\n", ver, f ? f(10) : -1);
    }
    printf("compat_v1 exported: %d\n", dlsym(RTLD_DEFAULT, "compat_v1") != 0);
    return 0;
}
