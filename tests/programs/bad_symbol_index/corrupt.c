int broken_sym(void) { return 3; }
