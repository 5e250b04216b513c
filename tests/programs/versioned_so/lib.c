int vfn_old(int x) { return x + 1; }
int vfn_new(int x) { return x + 2; }
int other_fn(void) { return 7; }
__asm__(".symver vfn_old, vfn@VERS_1");
__asm__(".symver vfn_new, vfn@@VERS_2");
