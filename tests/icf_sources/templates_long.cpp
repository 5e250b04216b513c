#include <vector>
#include <algorithm>
#include <functional>
#include <stdexcept>
template <class T> __attribute__((noinline)) size_t fill(std::vector<T> &v, int n) {
  for (int i = 0; i < n; i++) v.push_back((T)(long)(i * 8));
  std::sort(v.begin(), v.end(), std::greater<T>());
  return v.size() + (size_t)(long)v[0];
}
size_t use_long(int n) { std::vector<long *> v; return fill(v, n); }
int lambdas2() {
  auto l2 = [](int x) { return x * 5 + 1; };
  std::function<int(int)> f2 = l2;
  return f2(4);
}
__attribute__((noinline)) void boom(int x) { if (x > 2) throw std::runtime_error("boom"); }
template <int N> __attribute__((noinline)) int pass(int x) { boom(x); return x + 1; }
/* The same code as pass<N>'s, outside a COMDAT group. */
__attribute__((noinline)) int plain_pass(int x) { boom(x); return x + 1; }
int thrower_path(int x) { return pass<1>(x) + pass<2>(x) + plain_pass(x); }
/* Identical, each with an LSDA: lld keeps them apart (their exception tables are not compared). */
template <int N> __attribute__((noinline)) int guarded(int x) {
  try { boom(x); } catch (const std::exception &) { return -1; }
  return x;
}
int guarded_path(int x) { return guarded<1>(x) + guarded<2>(x + 1); }
