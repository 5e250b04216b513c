#include "runtime.h"
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

struct Noisy {
    const char *name;
    explicit Noisy(const char *n) : name(n) { std::printf("construct %s\n", n); }
    ~Noisy() { std::printf("destroy %s\n", name); }
};
Noisy first_global("first global");
static void at_exit_a() { std::printf("atexit a\n"); }
Noisy second_global("second global");
static void at_exit_b() { std::printf("atexit b\n"); }

thread_local std::string tl_name = std::string("thread-") + "local";   // dynamic init in this TU

int main() {
    std::atexit(at_exit_a);
    static Noisy local_static("function static");
    std::atexit(at_exit_b);

    std::ostringstream os;
    os << "iostream " << 42 << ' ' << 2.5 << ' ' << std::hex << 255;
    std::cout << os.str() << std::endl;

    std::mutex m;
    std::map<int, int> results;
    std::vector<std::thread> threads;
    std::exception_ptr failure;
    for (int t = 0; t < 4; t++) {
        threads.emplace_back([t, &m, &results, &failure] {
            registry().hits++;
            int v = 0;
            for (int i = 0; i <= t; i++) v = bump(i + 1);
            tl_name += std::to_string(t);
            std::lock_guard<std::mutex> g(m);
            results[t] = v * 1000 + (int)tl_name.size();
            if (t == 2) {
                try {
                    throw std::runtime_error("from thread 2");
                } catch (...) {
                    failure = std::current_exception();
                }
            }
        });
    }
    for (auto &th : threads) th.join();
    for (auto &[t, v] : results) std::cout << "thread " << t << ": " << v << "\n";
    std::cout << "main thread tally " << bump(0) << " name " << tl_name << "\n";
    std::cout << "thread_local constructed " << tl_constructed << " destroyed " << tl_destroyed << "\n";
    try {
        if (failure) std::rethrow_exception(failure);
    } catch (const std::exception &e) {
        std::cout << "rethrown in main: " << e.what() << "\n";
    }
    std::function<int(int)> f = [](int x) { return x * 3; };
    std::cout << "function " << f(14) << std::endl;
    std::cout.flush();
    return 0;
}
