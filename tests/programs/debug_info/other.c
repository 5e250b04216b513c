#include <stdio.h>

struct pair { int first; long second; };

__attribute__((noinline)) int helper_in_other_file(int x, const char *tag) {
    struct pair p = {x, x * 100L};
    printf("helper called %s\n", tag);
    return p.first + (int)(p.second / 50);
}
