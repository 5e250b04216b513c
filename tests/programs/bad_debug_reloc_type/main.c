int debug_target(int x);

int main(void) { return debug_target(0); }
