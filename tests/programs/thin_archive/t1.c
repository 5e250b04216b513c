int t2(int);
int t1(int x) { return t2(x) * x; }
