int good(void);
int bad(void);
int main(void) { return good() + bad(); }
