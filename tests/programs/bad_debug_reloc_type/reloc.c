int debug_global = 3;

int debug_target(int x) { return x + debug_global; }
