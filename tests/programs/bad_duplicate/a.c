int dup_fn(void) { return 1; }
int main(void) { return dup_fn(); }
