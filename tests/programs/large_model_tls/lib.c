/* Built as a shared object: its general- and local-dynamic sequences stay calls to __tls_get_addr. */
__thread int lib_tls = 100;
static __thread int lib_counter;
extern __thread int tls_main;
int lib_bump(void) { return ++lib_counter + lib_tls; }
