#include <stdexcept>

extern "C" int throws_and_catches(int x) {
    try {
        if (x > 0)
            throw std::runtime_error("large");
    } catch (const std::exception &) {
        return x + 100;
    }
    return x;
}
