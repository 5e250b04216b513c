const char *str_a1(void) { return "the same literal in three files"; }
const char *str_a2(void) { return "the same literal in three files"; }
