#include <stdio.h>
#include <string.h>

int add_one(int x);
extern int (*add_one_from_data)(int);
int (*add_one_addr_other_tu(void))(int);
int (*const const_ptr)(int) = add_one;
static void *(*memcpy_ptr)(void *, const void *, size_t) = memcpy;

int main(void) {
    char buf[32];
    printf("direct call: %d\n", add_one(41));
    printf("via data pointer: %d\n", add_one_from_data(1));
    printf("via const pointer: %d\n", const_ptr(2));
    printf("pointers equal: %d %d %d\n", add_one_from_data == add_one, const_ptr == add_one,
           add_one_addr_other_tu() == add_one);
    memcpy_ptr(buf, "ifunc copy", 11);
    printf("glibc ifuncs: %s %zu %s\n", buf, strlen(buf), strchr(buf, 'c'));
    printf("memcpy pointer equal: %d\n", memcpy_ptr == memcpy);
    return add_one(1) == 2 ? 0 : 1;
}
