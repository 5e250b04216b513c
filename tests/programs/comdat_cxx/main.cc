#include "common.h"
#include <typeinfo>

int main() {
    int a = from_a();
    int b = from_b();
    std::printf("from_a=%d from_b=%d counter=%d\n", a, b, shared_counter());
    std::printf("one counter: %d\n", counter_addr_a() == counter_addr_b());
    std::printf("areas: %d %d\n", shape_a().area(), shape_b().area());
    std::printf("same typeinfo: %d\n", typeid(shape_a()) == typeid(shape_b()));
    std::printf("twice<long>: %ld\n", twice(21L));
    return shared_counter() == 2 && counter_addr_a() == counter_addr_b() ? 0 : 1;
}
