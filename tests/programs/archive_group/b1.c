int a_back(int);
int b_middle(int x) { return a_back(x * 3); }
