int unused_fn(int x) { return x; }
