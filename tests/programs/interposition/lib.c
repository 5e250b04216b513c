int hook_fn(int x) { return x + 1; }          /* preempted by the executable's definition */
extern int exe_only_fn(int);                    /* only the executable defines it */
extern int exe_data;
int lib_run(int x) { return hook_fn(x) + exe_only_fn(x) + exe_data; }
