int t3_unused(void) { return 3; }
