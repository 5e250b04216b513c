#include <stdio.h>
int vfn(int);
int other_fn(void);
int main(void) {
    printf("vfn(10)=%d (default version VERS_2 gives 12) other=%d\n", vfn(10), other_fn());
    return vfn(10) == 12 ? 0 : 1;
}
