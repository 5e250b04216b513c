int never_used(void) { return 1; }
