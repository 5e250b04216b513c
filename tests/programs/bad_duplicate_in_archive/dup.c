int dup_data = 2;
int needed_from_member(void) { return 3; }
