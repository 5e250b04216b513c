int dup_fn(void) { return 2; }
