int b_last(int);
int a_back(int x) { return b_last(x) + 100; }

