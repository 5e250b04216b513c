int in_truncated(void);
int main(void) { return in_truncated(); }
