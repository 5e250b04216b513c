#include <stdio.h>
int shared_int;
char sized_buf[16];
long initialised_elsewhere;
void touch_a(void);
void touch_b(void);
char *buf_addr_b(void);
int *int_addr_a(void);
int main(void) {
    touch_a();
    touch_b();
    printf("shared_int=%d initialised=%ld\n", shared_int, initialised_elsewhere);
    printf("one object: %d %d\n", &shared_int == int_addr_a(), sized_buf == buf_addr_b());
    printf("buf: %s\n", sized_buf + 60);
    return shared_int == 3 ? 0 : 1;
}
