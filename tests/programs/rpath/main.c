#include <stdio.h>
const char *where(void);
int main(void) {
    puts(where());
    return 0;
}
