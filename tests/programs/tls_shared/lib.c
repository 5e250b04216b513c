__thread int so_tls = 11;
__thread int so_tls_bss;
__thread char so_name[8] = "so";
int *so_tls_addr(void) { return &so_tls; }
int so_sum(void) { return so_tls + so_tls_bss + so_name[0]; }
