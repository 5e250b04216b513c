const char t2_data[] = "thin";
int t2(int x) { return x + (int)sizeof t2_data; }
