#include "shapes.h"
#include <cstdio>

Base::~Base() {}
std::string Base::name() const { return "Base"; }
std::string Square::name() const { return "Square(" + std::to_string(side) + ")"; }
Err::~Err() {}

void a_throw(int kind) {
    switch (kind) {
    case 0: throw Err("thrown in liba", 10);
    case 1: throw 42;
    case 2: throw std::out_of_range("liba index");
    default: break;
    }
}
Base *a_make_square(int side) { return new Square(side); }
int a_area_if_square(const Base *b) {
    const Square *s = dynamic_cast<const Square *>(b);
    return s ? s->area() : -1;
}
bool a_is_err(const std::exception &e) { return dynamic_cast<const Err *>(&e) != nullptr; }
const std::type_info &a_typeid_square() { return typeid(Square); }
std::string a_describe(const Base &b) { return std::string(typeid(b).name()) + " " + b.name(); }
