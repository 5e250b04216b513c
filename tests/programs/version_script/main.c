#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int api_one(int x);
int api_two(int x);
extern int api_data;

int main(void) {
    printf("api_one=%d api_two=%d api_data=%d\n", api_one(1), api_two(2), api_data);
    /* Local by the script: not visible to the dynamic linker. */
    printf("internal_helper visible: %d\n", dlsym(RTLD_DEFAULT, "internal_helper") != 0);
    printf("api_two@LIBV_2.0: %d\n", dlvsym(RTLD_DEFAULT, "api_two", "LIBV_2.0") != 0);
    printf("api_one@LIBV_1.0: %d\n", dlvsym(RTLD_DEFAULT, "api_one", "LIBV_1.0") != 0);
    printf("api_one@LIBV_2.0: %d\n", dlvsym(RTLD_DEFAULT, "api_one", "LIBV_2.0") != 0);
    return 0;
}
