/* A shared object with 3000 preemptible functions and 3000 preemptible variables, each called through the PLT and
   loaded through the GOT from inside the library: more symbols with GOT and PLT slots than the linker numbers in one
   batch (rivet numbers them in chunks of 4096 symbols, in parallel), and 6000 exported dynamic symbols. */
#define X10(M, n) M(n##0) M(n##1) M(n##2) M(n##3) M(n##4) M(n##5) M(n##6) M(n##7) M(n##8) M(n##9)
#define X100(M, n) X10(M, n##0) X10(M, n##1) X10(M, n##2) X10(M, n##3) X10(M, n##4) \
    X10(M, n##5) X10(M, n##6) X10(M, n##7) X10(M, n##8) X10(M, n##9)
#define X1000(M, n) X100(M, n##0) X100(M, n##1) X100(M, n##2) X100(M, n##3) X100(M, n##4) \
    X100(M, n##5) X100(M, n##6) X100(M, n##7) X100(M, n##8) X100(M, n##9)
#define X3000(M) X1000(M, 1) X1000(M, 2) X1000(M, 3)

#define DEF(n) int v##n = n % 97; int f##n(int x) { return x * 3 + n % 89; }
X3000(DEF)

/* Calls (PLT32 against preemptible symbols) and address loads (GOTPCREL) of every one, ten to a function, not
   inlined (all of them in one function took clang -O2 minutes to compile). */
/* The same as X10, which cannot expand inside itself. */
#define Y10(M, n) M(n##0) M(n##1) M(n##2) M(n##3) M(n##4) M(n##5) M(n##6) M(n##7) M(n##8) M(n##9)
#define USE(n) s = s * 31 + f##n(v##n);
#define USE10(n) __attribute__((noinline)) static unsigned use##n(unsigned s) { Y10(USE, n) return s; }
#define CALL10(n) s = use##n(s);
X100(USE10, 1) X100(USE10, 2) X100(USE10, 3)
unsigned lib_sum(void) {
    unsigned s = 0;
    X100(CALL10, 1) X100(CALL10, 2) X100(CALL10, 3)
    return s;
}
