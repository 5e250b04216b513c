int m2_table[200] = {2};
int m2(void) { return m2_table[0]; }
