int some_data[64] = {1, 2, 3};
int in_truncated(void) { return some_data[2]; }
