int caller(void);
int target_fn(void) { return 5; }
int main(void) { return caller(); }
