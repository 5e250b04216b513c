/* Pointers that need relative relocations in a shared object: tables in .data.rel.ro and .data, a GOT slot
   (hidden symbol through an unrelaxed GOTPCREL), an unaligned pointer, and a constructor in .init_array. */
#include <stddef.h>
__attribute__((visibility("hidden"))) int lib_hidden[4] = {1, 2, 3, 4};
static const char *const lib_words[] = {"alpha", "beta", "gamma", "delta", "epsilon"};
static int lib_counter;
static int *lib_ptrs[70];                       /* filled at run time, but lib_ptr_init holds link-time pointers */
static int *lib_ptr_init[3] = {&lib_hidden[0], &lib_counter, &lib_hidden[3]};
struct __attribute__((packed)) odd { char c; const char *p; };
__attribute__((visibility("hidden"))) struct odd lib_odd = {'x', "unaligned pointer"};
static int lib_ctor_ran;
__attribute__((constructor)) static void lib_ctor(void) { lib_ctor_ran = 1; }

int *lib_hidden_via_got(void) {
    int *p;
    __asm__("movq lib_hidden@GOTPCREL(%%rip), %0" : "=r"(p));
    return p;
}
const char *lib_word(int i) { return lib_words[i % 5]; }
const char *lib_odd_text(void) { return *(const char *volatile *)&lib_odd.p; }
int lib_sum(void) {
    for (int i = 0; i < 70; i++) lib_ptrs[i] = &lib_hidden[i % 4];
    int s = lib_ctor_ran * 1000;
    for (int i = 0; i < 70; i++) s += *lib_ptrs[i];
    for (int i = 0; i < 3; i++) s += *lib_ptr_init[i] * 10;
    return s + *lib_hidden_via_got();
}
