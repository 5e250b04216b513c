__thread long desc_a = 12;
__thread char desc_str[16] = "descriptor";
extern __thread int desc_bss;
long read_other(void) { return desc_a + desc_str[0] + desc_bss; }
