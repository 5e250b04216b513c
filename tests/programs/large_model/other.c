int other_value = 11;
int other_fn(int x) { return x * 2; }
