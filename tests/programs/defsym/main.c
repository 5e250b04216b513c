#include <stdio.h>

int real_fn(int x) { return x * 7; }
long real_var[3] = {11, 22, 33};

int alias_fn(int x);
extern long alias_var[3];
extern long after_var;
int chain_a(int x);

int main(void) {
    printf("alias_fn(6)=%d same address: %d\n", alias_fn(6), (void *)&alias_fn == (void *)&real_fn);
    printf("alias_var[1]=%ld same address: %d\n", alias_var[1], alias_var == real_var);
    printf("after_var=%ld\n", after_var);
    printf("chain_a(2)=%d same address: %d\n", chain_a(2), (void *)&chain_a == (void *)&real_fn);
    alias_var[2] = 44;
    printf("write through alias: %ld\n", real_var[2]);
    return 0;
}
