int dep_fn(int);
int used_fn(int x) { return dep_fn(x) + 1; }
