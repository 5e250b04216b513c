#include <stdio.h>

extern void missing_fn(void) __attribute__((weak));
extern int missing_var __attribute__((weak));
extern void lazy_member_fn(void) __attribute__((weak));
int overridden(void);
int weak_only(void);
int value_of_weak_data(void);
extern int weak_data;

int main(void) {
    printf("missing_fn is null: %d\n", missing_fn == 0);
    printf("missing_var is null: %d\n", &missing_var == 0);
    printf("archive member not pulled by weak ref: %d\n", lazy_member_fn == 0);
    printf("overridden()=%d weak_only()=%d\n", overridden(), weak_only());
    printf("weak_data=%d seen from weak file=%d\n", weak_data, value_of_weak_data());
    if (missing_fn)
        missing_fn();
    return 0;
}
