int m1_table[200] = {1};
int m1(void) { return m1_table[0]; }
