int missing_in_lib(void);
int lib_fn(void) { return missing_in_lib(); }
