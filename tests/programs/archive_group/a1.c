int b_middle(int);
int a_entry(int x) { return b_middle(x + 1) * 2; }
