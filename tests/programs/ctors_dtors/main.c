#include <stdio.h>

/* Constructors and destructors of the old scheme (.ctors, .dtors, with priorities counting down) next to the arrays
   (.init_array, .fini_array): the C library runs only the arrays, so the linker must move the old sections into
   them, in GNU ld's order. */
static void ctor_plain(void) { puts("ctors"); }
static void init_plain(void) { puts("init_array"); }
static void ctor_prio(void) { puts("ctors.65435 (priority 100)"); }
static void init_prio(void) { puts("init_array.00101"); }
static void dtor_plain(void) { puts("dtors"); }
static void fini_plain(void) { puts("fini_array"); }
static void dtor_prio(void) { puts("dtors.65435 (priority 100)"); }

__attribute__((section(".ctors"), used)) static void (*p1)(void) = ctor_plain;
__attribute__((section(".init_array"), used)) static void (*p2)(void) = init_plain;
__attribute__((section(".ctors.65435"), used)) static void (*p3)(void) = ctor_prio;
__attribute__((section(".init_array.00101"), used)) static void (*p4)(void) = init_prio;
__attribute__((section(".dtors"), used)) static void (*p5)(void) = dtor_plain;
__attribute__((section(".fini_array"), used)) static void (*p6)(void) = fini_plain;
__attribute__((section(".dtors.65435"), used)) static void (*p7)(void) = dtor_prio;

int main(void) {
    puts("main");
    return 0;
}
