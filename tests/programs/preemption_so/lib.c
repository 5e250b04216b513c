/* Default-visibility definitions in a shared object are preemptible: the executable's copies win, and the
   library's own references (calls, address loads, data pointers) bind to them. Hidden and protected ones are not. */
int hook_fn(int x) { return x + 1; }                     /* preempted by the executable's definition */
int hook_data = 7;                                       /* preempted too (the executable defines it) */
__attribute__((visibility("protected"))) int prot_fn(int x) { return x + 3; }
__attribute__((visibility("hidden"))) int hidden_fn(int x) { return x + 4; }
int (*hook_ptr)(int) = hook_fn;                          /* R_X86_64_64 against a preemptible symbol */
extern int exe_only_fn(int);                             /* only the executable defines it */

int lib_run(int x) { return hook_fn(x) + exe_only_fn(x) + hook_data + prot_fn(x) + hidden_fn(x); }
int lib_ptr_run(int x) { return hook_ptr(x); }
void *lib_hook_addr(void) { return (void *)&hook_fn; }
int *lib_data_addr(void) { return &hook_data; }
