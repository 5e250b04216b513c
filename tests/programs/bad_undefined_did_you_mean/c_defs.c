int compute_total(int x) { return x + 1; }
int helperFn(int x) { return x; }
