// Classes shared by liba.so (defines Base, Err, Square), libb.so (Mid, ErrB) and the executable (Leaf).
#pragma once
#include <stdexcept>
#include <string>
#include <typeinfo>

struct Base {
    virtual ~Base();
    virtual std::string name() const;
    virtual int area() const { return 0; }
};
struct Square : Base {
    int side;
    explicit Square(int s) : side(s) {}
    std::string name() const override;
    int area() const override { return side * side; }
};
struct Err : std::runtime_error {
    int code;
    Err(const std::string &what, int c) : std::runtime_error(what), code(c) {}
    ~Err() override;
};
struct Mid : Base {
    std::string name() const override;
    int area() const override { return 7; }
};
struct ErrB : Err {
    explicit ErrB(int c) : Err("translated in libb", c) {}
    ~ErrB() override;
};

// liba.so
void a_throw(int kind);                         // 0: Err, 1: int, 2: std::out_of_range, 3: nothing
Base *a_make_square(int side);
int a_area_if_square(const Base *b);            // dynamic_cast<const Square *> in liba, -1 if not
bool a_is_err(const std::exception &e);         // dynamic_cast<const Err *> in liba
const std::type_info &a_typeid_square();
std::string a_describe(const Base &b);          // typeid(b).name() and the virtual name()

// libb.so
void b_call(int kind);                          // calls a_throw: translates int into ErrB, adds to Err
Base *b_make_mid();
int b_mid_area(Base *b);                        // dynamic_cast<Mid &>: -1 on std::bad_cast
int b_catch_in_b(int kind);                     // a_throw caught inside libb by base class
