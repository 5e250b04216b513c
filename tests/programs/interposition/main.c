#include <stdio.h>
int lib_run(int x);
int hook_fn(int x) { return x * 100; }
int exe_only_fn(int x) { return x * 10; }
int exe_data = 5;
int main(void) {
    printf("lib_run(2)=%d (exe's hook_fn gives 200+20+5)\n", lib_run(2));
    return lib_run(2) == 225 ? 0 : 1;
}
