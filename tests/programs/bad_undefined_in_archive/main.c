int user(void);
int main(void) { return user(); }
