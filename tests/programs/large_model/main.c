#include <stdio.h>

/* -mcmodel=large: data and functions reached through 64-bit GOT offsets (GOTOFF64, GOT64 under -fPIC), the GOT
   base (GOTPC64) and PLT offsets (PLTOFF64). */
int global_value = 7;
static int static_value = 5;
extern int other_value;
int other_fn(int x);
int throws_and_catches(int x);

static int add(int x) { return x + global_value + static_value; }
int (*fn_ptr)(int) = add;

int main(void) {
    printf("%d %d %d %d %d\n", add(1), fn_ptr(2), other_fn(3), other_value, throws_and_catches(4));
    return 0;
}
