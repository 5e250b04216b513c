#include <elf.h>
#include <stdio.h>
#include <string.h>

/* Only a position-dependent executable gives its own ifunc one canonical address everywhere; in a PIE GNU ld
   resolves pointers in data to the implementation, so that equality is only printed for ET_EXEC. */
extern const Elf64_Ehdr __ehdr_start;

int lib_ifunc(int x);
void *lib_ifunc_addr(void);
void *lib_memcpy_addr(void);

static int impl_double(int x) { return 2 * x; }
static int impl_twice(int x) { return x + x; }
static int (*resolve_exe_ifunc(void))(int) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse2") ? impl_twice : impl_double;
}
int exe_ifunc(int x) __attribute__((ifunc("resolve_exe_ifunc")));

int (*data_ptr)(int) = exe_ifunc;
int (*lib_ifunc_in_data)(int) = lib_ifunc;
void *memcpy_in_data = (void *)&memcpy;

int main(void) {
    char buf[32];
    int (*code_ptr)(int) = exe_ifunc;
    printf("exe ifunc: direct=%d data=%d code=%d\n", exe_ifunc(4), data_ptr(5), code_ptr(6));
    if (__ehdr_start.e_type == ET_EXEC)
        printf("exe ifunc pointers equal: %d\n", data_ptr == code_ptr);
    printf("lib ifunc: direct=%d data=%d\n", lib_ifunc(1), lib_ifunc_in_data(2));
    printf("lib ifunc address equal exe/lib: %d %d\n", (void *)&lib_ifunc == lib_ifunc_addr(),
           (void *)lib_ifunc_in_data == lib_ifunc_addr());
    printf("memcpy address equal exe/lib: %d %d\n", (void *)&memcpy == lib_memcpy_addr(),
           memcpy_in_data == lib_memcpy_addr());
    memcpy(buf, "dynamic ifunc", 14);
    printf("%s %zu\n", buf, strlen(buf));
    return 0;
}
