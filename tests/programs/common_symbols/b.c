#include <string.h>
int shared_int;
char sized_buf[128] __attribute__((aligned(32)));
long initialised_elsewhere;
void touch_b(void) { shared_int += 2; strcpy(sized_buf + 60, "largest common wins"); }
char *buf_addr_b(void) { return sized_buf; }
