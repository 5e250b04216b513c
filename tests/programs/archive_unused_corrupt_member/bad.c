int bad(void) { return 2; }
