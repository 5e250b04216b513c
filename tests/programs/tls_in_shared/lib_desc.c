/* The same kinds of access through TLS descriptors (-mtls-dialect=gnu2). */
extern __thread long lib_counter;
extern __thread char lib_tag[12];
static __thread int desc_private = 40;
static __thread int desc_private_bss;

long desc_bump(long by) {
    lib_counter += by;
    desc_private += 1;
    desc_private_bss += 1;
    return lib_counter * 1000 + desc_private * 10 + desc_private_bss + lib_tag[4];
}
long *desc_counter_addr(void) { return &lib_counter; }
