#include <stdio.h>

/* --dynamic-list-data: the executable's global data goes in .dynsym, its functions do not. */
int exported_data = 3;
const char exported_table[] = "table";
void kept_local_fn(void) { puts("function"); }

int main(void) {
    kept_local_fn();
    printf("%d %s\n", exported_data, exported_table);
    return 0;
}
