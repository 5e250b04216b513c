__thread long tls_other = 77;
__thread long tls_other_bss;
long other_sum(void) { return tls_other + tls_other_bss; }
