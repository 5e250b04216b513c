#include <string.h>

static int lib_impl_a(int x) { return x + 1000; }
static int lib_impl_b(int x) { return 1000 + x; }
static int (*resolve_lib_ifunc(void))(int) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse2") ? lib_impl_b : lib_impl_a;
}
int lib_ifunc(int x) __attribute__((ifunc("resolve_lib_ifunc")));

void *lib_ifunc_addr(void) { return (void *)&lib_ifunc; }
void *lib_memcpy_addr(void) { return (void *)&memcpy; }
