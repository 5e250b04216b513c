int unused_fn(int x) { return x - 1000; }
