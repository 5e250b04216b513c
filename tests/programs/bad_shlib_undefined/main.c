int lib_fn(void);
int main(void) { return lib_fn(); }
