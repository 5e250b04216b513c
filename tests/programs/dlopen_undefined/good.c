int exe_callback(int x);
int good_entry(int x) { return exe_callback(x) * 2; }
