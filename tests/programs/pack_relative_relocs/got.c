/* A GOT slot holding a link-time address in a PIE: an unrelaxed GOTPCREL to a hidden variable. */
__attribute__((visibility("hidden"))) long exe_hidden = 77;
long *exe_hidden_via_got(void) {
    long *p;
    __asm__("movq exe_hidden@GOTPCREL(%%rip), %0" : "=r"(p));
    return p;
}
