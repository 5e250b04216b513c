#include <stdio.h>

const char *which(void);
extern int value;

int main(void) {
    printf("%s %d\n", which(), value);
    return 0;
}
