/* Many relative relocations: runs of adjacent pointers (more than one 63-word bitmap), sparse pointers with gaps
   larger than a bitmap, pointers in .data.rel.ro, .data and .init_array, and an unaligned one. */
#include <stdio.h>
#include <string.h>

const char *lib_word(int i);
const char *lib_odd_text(void);
int lib_sum(void);
long *exe_hidden_via_got(void);

static int cells[200];
static int *run[150] = {
#define P4(n) &cells[n], &cells[n + 1], &cells[n + 2], &cells[n + 3]
    P4(0), P4(4), P4(8), P4(12), P4(16), P4(20), P4(24), P4(28), P4(32), P4(36), P4(40), P4(44), P4(48),
    P4(52), P4(56), P4(60), P4(64), P4(68), P4(72), P4(76), P4(80), P4(84), P4(88), P4(92), P4(96), P4(100),
    P4(104), P4(108), P4(112), P4(116), P4(120), P4(124), P4(128), P4(132), P4(136), P4(140), P4(144),
};
struct sparse { int *p; char pad[1000]; };
static struct sparse spread[5] = {{&cells[1]}, {&cells[2]}, {0}, {&cells[4]}, {&cells[5]}};
static const char *const rodata_names[] = {"one", "two", "three"};
struct __attribute__((packed)) odd { char c; int *p; };
struct odd odd_ptr = {'y', &cells[7]};
static int (*const fns[])(const char *) = {puts};
static int ctor_ran;
__attribute__((constructor)) static void ctor(void) { ctor_ran = 1; }

int main(void) {
    for (int i = 0; i < 200; i++) cells[i] = i;
    long s = 0;
    for (int i = 0; i < 148; i++) s += *run[i];
    for (int i = 0; i < 5; i++) s += spread[i].p ? *spread[i].p : 100;
    printf("sum %ld, names %s %s, odd %d, ctor %d\n", s, rodata_names[0], rodata_names[2], **(int *volatile *)&odd_ptr.p, ctor_ran);
    printf("got %ld\n", *exe_hidden_via_got());
#ifndef NO_LIB
    printf("lib: %s %s [%s] sum %d\n", lib_word(1), lib_word(7), lib_odd_text(), lib_sum());
#endif
    fns[0]("through a function pointer");
    return 0;
}
