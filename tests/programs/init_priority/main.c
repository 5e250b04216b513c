#include <stdio.h>

static char trace[256];
static int pos;
void note(const char *s) {
    while (*s && pos < (int)sizeof trace - 1)
        trace[pos++] = *s++;
    trace[pos++] = ' ';
}

__attribute__((constructor(102))) static void main_c102(void) { note("main102"); }
__attribute__((constructor(101))) static void main_c101(void) { note("main101"); }
__attribute__((constructor)) static void main_cdef(void) { note("main-default"); }
__attribute__((constructor(300))) static void main_c300(void) { note("main300"); }
__attribute__((destructor(101))) static void main_d101(void) { puts("dtor main101"); }
__attribute__((destructor)) static void main_ddef(void) { puts("dtor main-default"); }
__attribute__((destructor(200))) static void main_d200(void) { puts("dtor main200"); }

static void raw_init(void) { note("raw-init"); }
static void raw_fini(void) { puts("raw fini"); }
static void preinit(int argc, char **argv, char **envp) { (void)argc; (void)argv; (void)envp; note("preinit"); }
__attribute__((section(".init_array"), used)) static void (*raw_init_ptr)(void) = raw_init;
__attribute__((section(".fini_array"), used)) static void (*raw_fini_ptr)(void) = raw_fini;
__attribute__((section(".preinit_array"), used)) static void (*preinit_ptr)(int, char **, char **) = preinit;

int main(void) {
    note("main");
    puts(trace);
    return 0;
}
