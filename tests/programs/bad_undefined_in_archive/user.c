int missing_in_lib(void);
int user(void) { return missing_in_lib() + 1; }
