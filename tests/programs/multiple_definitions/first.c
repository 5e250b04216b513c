int value = 1;
const char *which(void) { return "first"; }
