int target_fn(void);
int caller(void) { return target_fn(); }
