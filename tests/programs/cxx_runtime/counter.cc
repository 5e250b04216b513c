// A second translation unit: the thread_local object is defined here and reached from main.cc through its TLS
// wrapper function (_ZTW...), which calls the init function (_ZTH...) on first use in each thread.
#include "runtime.h"
#include <atomic>
#include <cstdio>

std::atomic<int> tl_constructed{0}, tl_destroyed{0};

Tally::Tally() : count(100) { tl_constructed++; }
Tally::~Tally() { tl_destroyed++; }

thread_local Tally tally;

int bump(int n) {
    tally.count += n;
    return tally.count;
}

Registry &registry() {
    static Registry r("registry");   // guarded static local, first touched by several threads at once
    return r;
}
