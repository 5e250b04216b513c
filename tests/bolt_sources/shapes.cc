// A C++ program for tests/bolt.rs: virtual calls, a switch that compiles to a jump table, exceptions thrown
// from a static function that gcc splits (parse.cold), thread-local data, and libstdc++ containers.
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct Shape { virtual ~Shape() = default; virtual double area() const = 0; virtual const char *name() const = 0; };
struct Sq : Shape { double s; explicit Sq(double s) : s(s) {} double area() const override { return s * s; } const char *name() const override { return "sq"; } };
struct Ci : Shape { double r; explicit Ci(double r) : r(r) {} double area() const override { return 3.0 * r * r; } const char *name() const override { return "ci"; } };

static int classify(int x) {
  switch (x % 11) {
  case 0: return 7; case 1: return 3; case 2: return 19; case 3: return 2; case 4: return 5;
  case 5: return 13; case 6: return 1; case 7: return 17; case 8: return 4; case 9: return 8; default: return 0;
  }
}

static int __attribute__((noinline)) parse(const std::string &s) {
  if (s.empty()) throw std::invalid_argument("empty");
  int v = 0;
  for (char c : s) { if (c < '0' || c > '9') throw std::runtime_error("bad digit in " + s); v = v * 10 + (c - '0'); }
  return v;
}

thread_local int tls_counter = 0;
int parse_other(const char *s);

int main(int argc, char **argv) {
  std::vector<std::unique_ptr<Shape>> v;
  for (int i = 0; i < 100; i++) { if (i % 3) v.push_back(std::make_unique<Sq>(i)); else v.push_back(std::make_unique<Ci>(i)); }
  double total = 0; std::map<std::string, int> counts;
  for (auto &s : v) { total += s->area(); counts[s->name()]++; }
  long acc = 0;
  for (int i = 0; i < 200000; i++) { acc += classify(i * (argc + 1)); tls_counter++; }
  int errs = 0;
  const char *ins[] = {"12", "", "3x", "999"};
  for (const char *in : ins) { try { acc += parse(in); } catch (const std::exception &e) { errs++; std::printf("caught: %s\n", e.what()); } }
  acc += parse_other("12") + parse_other("12345");
  for (auto &[k, n] : counts) std::printf("%s=%d\n", k.c_str(), n);
  std::printf("total=%.1f acc=%ld errs=%d tls=%d argc=%d\n", total, acc, errs, tls_counter, argc);
  return 0;
}
