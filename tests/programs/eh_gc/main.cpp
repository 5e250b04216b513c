// Exceptions under --gc-sections: .eh_frame must survive GC, and the FDEs that follow a dropped one (of an
// unused function) in the same input .eh_frame must still point at their functions.
#include <cstdio>
#include <stdexcept>

__attribute__((noinline)) int unused_first(int x) {
    if (x > 100) throw std::runtime_error("unused");
    return x * 3;
}
__attribute__((noinline)) int thrower(int x) {
    if (x > 1) throw std::runtime_error("too big");
    return x;
}
__attribute__((noinline)) int unused_second(int x) {
    if (x < -100) throw 1;
    return x + 7;
}
struct Guard {
    const char *name;
    ~Guard() { std::printf("unwound %s\n", name); }
};
__attribute__((noinline)) int middle(int x) {
    Guard g{"middle"};
    return thrower(x) + 1;
}

int main() {
    int caught = 0;
    for (int i = 0; i < 4; i++) {
        try {
            std::printf("middle(%d)=%d\n", i, middle(i));
        } catch (const std::exception &e) {
            std::printf("caught: %s\n", e.what());
            caught++;
        }
    }
    return caught == 2 ? 0 : 1;
}
