int missing_fn(int);
int main(void) { return missing_fn(1); }
