#include <pthread.h>
#include <stdio.h>

#define MODEL(m) __attribute__((tls_model(m)))

extern __thread int gd_var MODEL("global-dynamic");
extern __thread int ld_var MODEL("local-dynamic");
extern __thread int ie_var MODEL("initial-exec");
extern __thread int le_var MODEL("local-exec");
static __thread int static_ld MODEL("local-dynamic") = 3;
static __thread int static_gd MODEL("global-dynamic") = 4;
__thread int plain = 6; /* global-dynamic under -fPIC */
int helper_sum(void);

static int sum(void) { return gd_var + ld_var + ie_var + le_var + static_ld + static_gd + plain; }

static void *worker(void *arg) {
    int *out = arg;
    gd_var += 1000;
    ld_var += 2000;
    ie_var += 3000;
    le_var += 4000;
    static_ld += 5000;
    static_gd += 6000;
    plain += 7000;
    out[0] = sum();
    out[1] = helper_sum();
    return 0;
}

int main(void) {
    int r[2][2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], 0, worker, r[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], 0);
    printf("main sum=%d helper=%d\n", sum(), helper_sum());
    for (int i = 0; i < 2; i++)
        printf("thread %d sum=%d helper=%d\n", i, r[i][0], r[i][1]);
    return sum() == 1 + 2 + 3 + 4 + 3 + 4 + 6 ? 0 : 1;
}
