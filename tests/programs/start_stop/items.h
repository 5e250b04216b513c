struct item {
    const char *name;
    int value;
};
#define ITEM(id, v) \
    __attribute__((section("rivet_items"), used, aligned(8))) static const struct item item_##id = {#id, v};
