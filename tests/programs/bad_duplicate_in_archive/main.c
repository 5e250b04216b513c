int dup_data = 1;
int needed_from_member(void);
int main(void) { return needed_from_member() + dup_data; }
