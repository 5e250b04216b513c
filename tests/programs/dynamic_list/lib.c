/* Linked with --dynamic-list=lib.list: only `hook` stays preemptible; `other` binds inside the library even though
   the executable defines one too. */
int hook(int x) { return x + 1; }
int other(int x) { return x + 2; }
int lib_run(int x) { return hook(x) * 1000 + other(x); }
