/* Compiled -fPIC: every access below is a general- or local-dynamic call to __tls_get_addr, which an executable's
   link relaxes (a variable defined in the executable to local-exec, one from the library to initial-exec). */
__thread int tls_here = 5;
extern __thread int tls_main;
extern __thread int lib_tls;
static __thread int tls_static_a = 7;
static __thread long tls_static_b[4] = {1, 2, 3, 4};

__attribute__((noinline)) int *addr_here(void) { return &tls_here; }
__attribute__((noinline)) int *addr_main(void) { return &tls_main; }
__attribute__((noinline)) int *addr_lib(void) { return &lib_tls; }
__attribute__((noinline)) long sum_static(int k)
{
    tls_static_a += k;
    return tls_static_a + tls_static_b[k & 3];
}
