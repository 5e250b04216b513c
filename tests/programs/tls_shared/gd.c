extern __thread int so_tls __attribute__((tls_model("global-dynamic")));
extern __thread char so_name[8];
int gd_read(void) { return so_tls * 2 + so_name[1]; }
int *gd_addr(void) { return &so_tls; }
