#include <stdio.h>
#include <string.h>

int lib_fn(int x) { return x * 2 + 1; }
void *lib_fn_addr(void) { return (void *)&lib_fn; }
void *lib_puts_addr(void) { return (void *)&puts; }
void *lib_strlen_addr(void) { return (void *)&strlen; }
int lib_call(int (*f)(int), int x) { return f(x); }
