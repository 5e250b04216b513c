int shared_int;
long initialised_elsewhere = 77;
void touch_a(void) { shared_int += 1; }
int *int_addr_a(void) { return &shared_int; }
