int overridden(void) { return 100; }
int weak_data = 20;
