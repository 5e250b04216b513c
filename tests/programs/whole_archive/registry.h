struct plugin {
    const char *name;
    int (*fn)(int);
    struct plugin *next;
};
void register_plugin(struct plugin *p);
#define PLUGIN(NAME, EXPR)                                                                 \
    int plugin_##NAME##_fn(int x) { return EXPR; }                                        \
    static struct plugin plugin_##NAME = {#NAME, plugin_##NAME##_fn, 0};                   \
    __attribute__((constructor)) static void register_##NAME(void) { register_plugin(&plugin_##NAME); }
