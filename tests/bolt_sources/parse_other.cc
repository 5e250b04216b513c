// A second static parse() with a cold part of its own (tests/bolt.rs): BOLT tells the two apart by file symbol.
#include <stdexcept>
#include <string>
static int __attribute__((noinline)) parse(const std::string &s) {
  if (s.size() > 3) throw std::length_error("too long: " + s);
  int v = 0;
  for (char c : s) v = v * 7 + c;
  return v;
}
int parse_other(const char *s) { try { return parse(s); } catch (const std::exception &) { return -1; } }
