#include <stdio.h>
void note(const char *s);
__attribute__((constructor(101))) static void other_c101(void) { note("other101"); }
__attribute__((constructor(65535))) static void other_c65535(void) { note("other65535"); }
__attribute__((constructor)) static void other_cdef(void) { note("other-default"); }
__attribute__((constructor(150))) static void other_c150(void) { note("other150"); }
__attribute__((destructor(101))) static void other_d101(void) { puts("dtor other101"); }
__attribute__((destructor)) static void other_ddef(void) { puts("dtor other-default"); }
static void other_raw(void) { note("other-raw-init"); }
__attribute__((section(".init_array.00500"), used)) static void (*other_raw_ptr)(void) = other_raw;
