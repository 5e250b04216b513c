int value = 2;
const char *which(void) { return "second"; }
