static int add_one_generic(int x) { return x + 1; }
static int add_one_fancy(int x) { return 1 + x; }

static int (*resolve_add_one(void))(int) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse2") ? add_one_fancy : add_one_generic;
}

int add_one(int x) __attribute__((ifunc("resolve_add_one")));
int (*add_one_from_data)(int) = add_one;
int (*add_one_addr_other_tu(void))(int) { return add_one; }
