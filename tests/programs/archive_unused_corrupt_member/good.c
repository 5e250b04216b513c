int good(void) { return 7; }
