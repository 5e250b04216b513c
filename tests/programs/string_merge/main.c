#include <stdio.h>
#include <string.h>

const char *str_a1(void);
const char *str_a2(void);
const char *str_b(void);
const char *wide_b(void);
const double *const_b(void);

static const char *mine(void) { return "the same literal in three files"; }

int main(void) {
    const char *m = mine();
    printf("%s\n%s\n%s\n", m, str_a1(), str_b());
    printf("content equal: %d %d\n", strcmp(m, str_a1()) == 0, strcmp(m, str_b()) == 0);
    printf("one copy: %d %d %d\n", m == str_a1(), m == str_b(), str_a1() == str_a2());
    printf("other literal: %s\n", str_a2());
    printf("wide: %d\n", wide_b()[0] == 'w');
    static const double d = 2.718281828;
    printf("constants: %.3f %.3f\n", d, *const_b());
    return 0;
}
