#include <math.h>
#include <stdio.h>

volatile double inputs[] = {0.5, 1.0, 2.0, 3.14159};

int main(void) {
    for (int i = 0; i < 4; i++) {
        double x = inputs[i];
        printf("x=%.5f sin=%.6f cos=%.6f exp=%.6f log=%.6f sqrt=%.6f pow=%.6f atan2=%.6f\n", x, sin(x), cos(x),
               exp(x), log(x), sqrt(x), pow(x, 1.5), atan2(x, 2.0));
    }
    double (*fn[])(double) = {sin, cos, tan, floor, ceil};
    for (int i = 0; i < 5; i++)
        printf("fn[%d](0.75)=%.6f\n", i, fn[i](0.75));
    printf("lround(2.5)=%ld fma=%.3f\n", lround(inputs[2] + 0.5), fma(inputs[1], 2.0, 0.25));
    return 0;
}
