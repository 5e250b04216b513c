int m1(void);
int m2(void);
int main(void) { return m1() + m2(); }
