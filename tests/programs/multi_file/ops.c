#include "shared.h"

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
int mul(int a, int b) { return a * b; }
int divide(int a, int b) { return a / b; }

int (*const ops[NOPS])(int, int) = {add, sub, mul, divide};
const char *message = "defined in ops.c";
