// tests/gc_eh_frame.rs: functions with exception tables (try/catch of a class type, cleanups), some of them
// unused, compiled with -ffunction-sections for --gc-sections.
#include <cstdio>
#include <stdexcept>
#include <string>
struct Err { int code; };
int __attribute__((noinline)) risky(int x) { if (x > 5) throw std::runtime_error("big " + std::to_string(x)); return x; }
int __attribute__((noinline)) used(int x) { try { return risky(x); } catch (const std::exception &e) { std::puts(e.what()); return -1; } }
int __attribute__((noinline)) unused1(int x) { try { return risky(x * 2); } catch (const Err &e) { return e.code; } catch (...) { return -2; } }
int __attribute__((noinline)) unused2(int x) { try { if (x) throw Err{x}; return 0; } catch (const Err &e) { return e.code + 1; } }
struct Guard { ~Guard() { std::puts("guard"); } };
int __attribute__((noinline)) unused3(int x) { Guard g; return risky(x); }
int main(int argc, char **) { std::printf("%d %d\n", used(argc), used(argc + 10)); return 0; }
