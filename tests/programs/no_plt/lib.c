int np_lib(int x) { return x ^ 0x55; }
