/* One translation unit with thousands of functions and types, so that its .debug_info (and .debug_line,
 * .debug_loclists) exceed (at -O0 and -O2) the size from which the linker writes a non-allocated section in parallel parts. */
#include <stdio.h>

#define F(n)                                                                                                      \
    struct s##n {                                                                                                 \
        int a##n;                                                                                                 \
        long b##n;                                                                                                \
        double c##n;                                                                                              \
        char d##n[3];                                                                                             \
    };                                                                                                            \
    __attribute__((noinline)) long f##n(long x) {                                                                 \
        struct s##n v = {(int)x, x * 3 + 1, (double)x / 2, {1, 2, 3}};                                           \
        return v.a##n + v.b##n + (long)v.c##n + v.d##n[1];                                                        \
    }
#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
#define F100(n) F10(n##0) F10(n##1) F10(n##2) F10(n##3) F10(n##4) F10(n##5) F10(n##6) F10(n##7) F10(n##8) F10(n##9)
#define F1000(n)                                                                                                  \
    F100(n##0) F100(n##1) F100(n##2) F100(n##3) F100(n##4) F100(n##5) F100(n##6) F100(n##7) F100(n##8) F100(n##9)

F1000(1) F1000(2) F1000(3) F1000(4) F1000(5) F1000(6) F1000(7) F1000(8) F1000(9)

long last_function(long x) { return f9999(x) + f5000(x) + f1000(x); }

int main(void) {
    printf("%ld %ld %ld\n", f1000(7), f5555(11), last_function(3));
    return 0;
}
