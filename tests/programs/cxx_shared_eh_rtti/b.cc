#include "shapes.h"

std::string Mid::name() const { return "Mid"; }
ErrB::~ErrB() {}

void b_call(int kind) {
    try {
        a_throw(kind);
    } catch (int v) {
        throw ErrB(v);              // translated: the executable catches it as Err
    } catch (Err &e) {
        e.code += 100;              // passes through libb, modified, rethrown as the same object
        throw;
    }
}
Base *b_make_mid() { return new Mid(); }
int b_mid_area(Base *b) {
    try {
        return dynamic_cast<Mid &>(*b).area();
    } catch (const std::bad_cast &) {
        return -1;
    }
}
int b_catch_in_b(int kind) {
    try {
        a_throw(kind);
    } catch (const std::logic_error &e) {
        return 2;
    } catch (const std::exception &e) {
        return 1;
    } catch (...) {
        return 3;
    }
    return 0;
}
