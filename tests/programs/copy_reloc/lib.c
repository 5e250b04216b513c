#include <stdio.h>
#include <stdlib.h>

int counter = 40;
int table[4] = {10, 20, 30, 40};
const char *greeting = "greeting from the library";
struct point { long x, y; } origin = {3, 4};
long lib_bss[16];

extern char **environ;

int lib_get_counter(void) { return counter; }
void lib_bump(void) { counter++; table[3]++; origin.y *= 2; lib_bss[15] = 77; }
int *lib_counter_addr(void) { return &counter; }
void *lib_environ_addr(void) { return &environ; }
FILE *lib_stdout(void) { return stdout; }
