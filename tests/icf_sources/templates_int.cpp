#include <vector>
#include <algorithm>
#include <functional>
template <class T> __attribute__((noinline)) size_t fill(std::vector<T> &v, int n) {
  for (int i = 0; i < n; i++) v.push_back((T)(long)(i * 8));
  std::sort(v.begin(), v.end(), std::greater<T>());
  return v.size() + (size_t)(long)v[0];
}
size_t use_int(int n) { std::vector<int *> v; return fill(v, n); }
int lambdas() {
  auto l1 = [](int x) { return x * 5 + 1; };
  std::function<int(int)> f1 = l1;
  return f1(3);
}
