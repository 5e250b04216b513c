int b_last(int x) { return x + 7; }
