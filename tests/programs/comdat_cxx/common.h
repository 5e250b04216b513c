#include <cstdio>

template <typename T> T twice(T x) { return x + x; }

inline int &shared_counter() {
    static int counter = 0;
    return counter;
}

inline int bump() { return ++shared_counter(); }

struct Shape {
    virtual ~Shape() {}
    virtual int area() const = 0;
};

template <int N> struct Square : Shape {
    int area() const override { return N * N; }
};

int from_a();
int from_b();
const void *counter_addr_a();
const void *counter_addr_b();
const Shape &shape_a();
const Shape &shape_b();
