#include <stdarg.h>
#include <stdio.h>

static double sum_doubles(int n, ...) {
    va_list ap;
    va_start(ap, n);
    double s = 0;
    for (int i = 0; i < n; i++)
        s += va_arg(ap, double);
    va_end(ap);
    return s;
}

static void logf_like(const char *fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    printf("[log] %s\n", buf);
}

int main(void) {
    volatile double third = 1.0 / 3.0;
    volatile float f = 2.5f;
    volatile long double ld = 1.0L / 7.0L;
    printf("%.10f %e %g %a\n", third, third * 1e10, third, 1.0);
    printf("%f %.3Lf %10.4f|%-10.2f|\n", (double)f, ld, 3.14159, -2.5);
    printf("sum=%.2f\n", sum_doubles(4, 1.5, 2.25, third, 100.0));
    logf_like("%s=%d %s=%.1f %c %5s %x %lu", "int", 42, "dbl", 9.75, 'z', "pad", 255, 1UL << 40);
    return 0;
}
