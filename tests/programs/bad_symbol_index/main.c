int broken_sym(void);
int main(void) { return broken_sym(); }
