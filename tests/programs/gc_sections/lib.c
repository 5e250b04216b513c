int used_data[4] = {1, 2, 3, 4};
int unused_data[1000] = {9};
int kept_counter;

int unused_helper_chain(int x) { return x * 99; }
int unused_fn(int x) { return unused_helper_chain(x) + unused_data[x]; }
int used_fn(int x) { return x + 1; }
int used_via_pointer(int x) { return x * 2; }
static volatile int seed = 7;
__attribute__((constructor)) static void kept_by_ctor(void) { kept_counter = seed; }
