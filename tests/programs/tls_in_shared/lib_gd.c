/* General dynamic (exported variables), local dynamic (static ones) and initial exec, all inside the library. */
__thread long lib_counter = 100;
__thread char lib_tag[12] = "tls-in-so";
static __thread int lib_private = 7;
static __thread int lib_private_bss;
__thread int lib_ie __attribute__((tls_model("initial-exec"))) = 5;

long gd_bump(long by) {
    lib_counter += by;
    lib_private += 1;
    lib_private_bss += 2;
    lib_ie += 3;
    return lib_counter * 1000 + lib_private * 100 + lib_private_bss * 10 + lib_ie + lib_tag[0];
}
long *gd_counter_addr(void) { return &lib_counter; }
int *gd_private_addr(void) { return &lib_private; }
