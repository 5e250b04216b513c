int dep_fn(int x) { return x * 10; }
