#pragma once
#include <atomic>
#include <cstdio>
#include <string>

struct Tally {
    int count;
    Tally();
    ~Tally();
};
extern thread_local Tally tally;
extern std::atomic<int> tl_constructed, tl_destroyed;
int bump(int n);

struct Registry {
    std::string name;
    std::atomic<int> hits{0};
    explicit Registry(const char *n) : name(n) { std::printf("construct %s\n", n); }
    ~Registry() { std::printf("destroy %s (hits %d)\n", name.c_str(), hits.load()); }
};
Registry &registry();
