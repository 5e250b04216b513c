#include "shapes.h"
#include <cstdio>
#include <memory>

struct Leaf : Mid {
    std::string name() const override { return "Leaf"; }
    int area() const override { return 11; }
};

static void through(int kind) {
    try {
        b_call(kind);
        std::printf("kind %d: no exception\n", kind);
    } catch (const ErrB &e) {
        std::printf("kind %d: ErrB code=%d what=%s is_err(liba)=%d\n", kind, e.code, e.what(), a_is_err(e));
    } catch (const Err &e) {
        std::printf("kind %d: Err code=%d what=%s is_err(liba)=%d\n", kind, e.code, e.what(), a_is_err(e));
    } catch (const std::exception &e) {
        std::printf("kind %d: std::exception what=%s is_err(liba)=%d\n", kind, e.what(), a_is_err(e));
    }
}

int main() {
    for (int kind = 0; kind < 4; kind++) through(kind);
    for (int kind = 0; kind < 4; kind++) std::printf("caught in libb, kind %d: %d\n", kind, b_catch_in_b(kind));

    std::unique_ptr<Base> sq(a_make_square(5)), mid(b_make_mid()), leaf(new Leaf);
    std::printf("square area via liba cast: %d, mid: %d, leaf: %d\n", a_area_if_square(sq.get()),
                a_area_if_square(mid.get()), a_area_if_square(leaf.get()));
    std::printf("mid area via libb cast: square %d, mid %d, leaf %d\n", b_mid_area(sq.get()), b_mid_area(mid.get()),
                b_mid_area(leaf.get()));
    std::printf("exe dynamic_cast<Mid*>: %d %d %d\n", dynamic_cast<Mid *>(sq.get()) != nullptr,
                dynamic_cast<Mid *>(mid.get()) != nullptr, dynamic_cast<Mid *>(leaf.get()) != nullptr);
    std::printf("typeid(Square) same object: %d, equal: %d\n", &typeid(*sq) == &a_typeid_square(),
                typeid(*sq) == a_typeid_square());
    std::printf("describe: [%s] [%s] [%s]\n", a_describe(*sq).c_str(), a_describe(*mid).c_str(),
                a_describe(*leaf).c_str());
    Err direct("made in the executable", 1);
    std::printf("exe-made Err is_err(liba)=%d\n", a_is_err(direct));
    return 0;
}
