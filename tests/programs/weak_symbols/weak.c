__attribute__((weak)) int overridden(void) { return 1; }
__attribute__((weak)) int weak_only(void) { return 2; }
__attribute__((weak)) int weak_data = 10;
int value_of_weak_data(void) { return weak_data; }
