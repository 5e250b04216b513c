extern int lib_data;
int lib_read(void) { return lib_data; }
int lib_data = 9;
static int lib_static = 4;
int lib_static_read(void) { return lib_static; }
