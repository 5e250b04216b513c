#include <stdio.h>

/* Exported from the executable by name (--export-dynamic-symbol), by glob, and by a list file
   (--export-dynamic-symbol-list); the others stay out of .dynsym. */
void exported_by_name(void) { puts("by name"); }
void exported_by_glob_one(void) { puts("by glob"); }
void exported_by_list(void) { puts("by list"); }
void not_exported(void) { puts("not exported"); }

int main(void) {
    exported_by_name();
    exported_by_glob_one();
    exported_by_list();
    not_exported();
    return 0;
}
