/* References left undefined in the shared object, bound when it is loaded. */
int exe_callback(int x);     /* the executable defines it (-rdynamic) */
int nowhere_defined(int x);  /* nothing defines it: RTLD_NOW must fail */
int lib_ok(int x) { return exe_callback(x) + 1; }
int lib_bad(int x) { return nowhere_defined(x); }
