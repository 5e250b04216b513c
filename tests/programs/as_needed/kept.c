int kept_fn(int x) { return x; }
