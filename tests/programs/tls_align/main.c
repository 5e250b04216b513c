#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

__thread char small_init = 'x';
__thread _Alignas(64) long aligned64[3] = {1, 2, 3};
__thread _Alignas(4096) char page_aligned[100] = "page";
__thread char big_bss[200000];
__thread _Alignas(128) int bss_aligned[4];
extern __thread short other_tls;

/* The compiler knows the declared alignment and would fold an alignment test to true: hide the address from it. */
static uintptr_t opaque(const void *p) {
    uintptr_t a = (uintptr_t)p;
    __asm__("" : "+r"(a));
    return a;
}

static int check(const char *who) {
    int ok = opaque(aligned64) % 64 == 0 && opaque(page_aligned) % 4096 == 0 && opaque(bss_aligned) % 128 == 0;
    big_bss[199999] = 5;
    bss_aligned[3] += 2;
    printf("%s: aligned=%d small=%c a64=%ld page=%s big=%d bss=%d other=%d\n", who, ok, small_init, aligned64[2],
           page_aligned, big_bss[199999] + big_bss[1000], bss_aligned[3], other_tls);
    return ok;
}

static void *worker(void *arg) {
    (void)arg;
    check("thread");
    return 0;
}

int main(void) {
    pthread_t t;
    int ok = check("main");
    pthread_create(&t, 0, worker, 0);
    pthread_join(t, 0);
    return ok ? 0 : 1;
}
