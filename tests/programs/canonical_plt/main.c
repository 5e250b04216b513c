#include <stdio.h>
#include <string.h>

int lib_fn(int x);
void *lib_fn_addr(void);
void *lib_puts_addr(void);
void *lib_strlen_addr(void);
int lib_call(int (*f)(int), int x);

static int local_fn(int x) { return x - 1; }

/* Addresses in initialised data: absolute relocations against functions of shared objects. */
void *data_ptrs[] = {(void *)&lib_fn, (void *)&puts, (void *)&strlen};
int (*fp_lib)(int) = lib_fn;

int main(void) {
    int ok = 1;
    ok &= (void *)&lib_fn == lib_fn_addr();
    printf("lib_fn address same in exe and .so: %d\n", (void *)&lib_fn == lib_fn_addr());
    printf("puts address same in exe and .so: %d\n", (void *)&puts == lib_puts_addr());
    printf("strlen address same in exe and .so: %d\n", (void *)&strlen == lib_strlen_addr());
    printf("data pointers: %d %d %d\n", data_ptrs[0] == lib_fn_addr(), data_ptrs[1] == lib_puts_addr(),
           data_ptrs[2] == lib_strlen_addr());
    ok &= data_ptrs[0] == lib_fn_addr() && data_ptrs[1] == lib_puts_addr();
    printf("calls: %d %d %d\n", lib_fn(20), fp_lib(10), lib_call(local_fn, 5));
    printf("lib calls back through exe pointer: %d\n", lib_call(lib_fn, 3));
    size_t (*my_strlen)(const char *) = strlen;
    printf("strlen via pointer: %zu\n", my_strlen("canonical"));
    return ok ? 0 : 1;
}
