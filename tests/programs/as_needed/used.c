int used_fn(int x) { return x + 1000; }
