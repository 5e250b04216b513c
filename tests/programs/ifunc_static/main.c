#include <elf.h>
#include <stdio.h>
#include <string.h>

/* A position-dependent executable gives an ifunc one canonical address (its PLT entry) everywhere. In a PIE,
   GNU ld itself is not consistent about it (pointers from data resolve to the implementation), so equality is only
   printed for ET_EXEC. */
extern const Elf64_Ehdr __ehdr_start;

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
    if (__ehdr_start.e_type == ET_EXEC)
        printf("pointers equal: %d %d %d\n", add_one_from_data == add_one, const_ptr == add_one,
               add_one_addr_other_tu() == add_one);
    memcpy_ptr(buf, "ifunc copy", 11);
    printf("glibc ifuncs: %s %zu %s\n", buf, strlen(buf), strchr(buf, 'c'));
    if (__ehdr_start.e_type == ET_EXEC)
        printf("memcpy pointer equal: %d\n", memcpy_ptr == memcpy);
    return add_one(1) == 2 ? 0 : 1;
}
