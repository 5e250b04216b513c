#!/bin/sh
# Builds cxx-debug, a generated C++ program of N objects (default 400) compiled with g++ -g -ggnu-pubnames -O0
# (each one using std::map, std::string, std::vector and its own namespace, class and template), into the corpus
# folder as a workload for bench/gdb_index.py: its response.txt is the link line the g++ driver runs.
#
# Usage: bench/gdb_index_cxx.sh [N]; then bench/gdb_index.py RIVET cxx-debug
set -eu
n=${1:-400}
dir=${BENCH_CACHE:-$HOME/.cache/linker-bench}/corpus/cxx-debug
mkdir -p "$dir/src"
cd "$dir"
i=0
while [ "$i" -lt "$n" ]; do
    f=src/unit$i.cc
    if [ ! -f "$f" ]; then
        cat > "$f" <<EOC
#include <map>
#include <string>
#include <vector>
namespace mod$i {
struct Item$i { int id; std::string name; std::vector<double> values; };
template <typename T> struct Box$i { T v; T get() const { return v; } };
class Registry$i {
 public:
  void add(const Item$i &it) { items_[it.id] = it; }
  double total() const;
 private:
  std::map<int, Item$i> items_;
};
double Registry$i::total() const {
  double t = 0;
  for (auto &kv : items_) for (double d : kv.second.values) t += d;
  return t;
}
static int counter$i = $i;
}
double run$i(int n) {
  mod$i::Registry$i r;
  for (int k = 0; k < n; k++) r.add({k, "x", {1.0 * k}});
  mod$i::Box$i<int> b{n};
  return r.total() + b.get() + mod$i::counter$i;
}
EOC
    fi
    i=$((i + 1))
done
{
    echo '#include <cstdio>'
    i=0; while [ "$i" -lt "$n" ]; do echo "double run$i(int);"; i=$((i + 1)); done
    echo 'int main() { double t = 0;'
    i=0; while [ "$i" -lt "$n" ]; do echo "  t += run$i(3);"; i=$((i + 1)); done
    printf '%s\n' '  std::printf("%g\n", t); return 0; }'
} > src/main.cc
ls src/*.cc | sed 's/\.cc$//' | xargs -P "$(nproc)" -I{} sh -c \
    '[ {}.o -nt {}.cc ] || g++ -g -ggnu-pubnames -O0 -c {}.cc -o {}.o'
# The driver's link line, captured by an `ld` that records its arguments.
mkdir -p shim
cat > shim/ld <<'EOS'
#!/bin/sh
for a in "$@"; do printf "'%s'\n" "$a"; done > "$RECORD"
EOS
chmod +x shim/ld
RECORD="$dir/response.txt" g++ -Bshim/ src/*.o -o cxx-debug
echo "cxx-debug: $(ls src/*.o | wc -l) objects, response.txt in $dir"
