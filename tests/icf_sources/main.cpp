#include <vector>
#include <algorithm>
#include <functional>
#include <cstdio>
#include <stdexcept>
size_t use_int(int n);
size_t use_long(int n);
int lambdas();
int lambdas2();
int thrower_path(int);
int guarded_path(int);
int main() {
  std::printf("%zu %zu %d\n", use_int(10), use_long(20), lambdas() + lambdas2());
  try { thrower_path(3); } catch (const std::runtime_error &e) { std::printf("caught %s\n", e.what()); }
  std::printf("%d\n", guarded_path(2));
  return 0;
}
