#include <stdio.h>
int lib_run(int x);
int lib_ptr_run(int x);
void *lib_hook_addr(void);
int *lib_data_addr(void);
int prot_fn(int x);

int hook_fn(int x) { return x * 100; }
int exe_only_fn(int x) { return x * 10; }
int hook_data = 1000;

int main(void) {
    printf("lib_run(2)=%d\n", lib_run(2));
    printf("lib_ptr_run(3)=%d\n", lib_ptr_run(3));
    printf("same function address: %d\n", lib_hook_addr() == (void *)&hook_fn);
    printf("same data address: %d\n", lib_data_addr() == &hook_data);
    printf("protected: %d\n", prot_fn(1));
    return 0;
}
