#include <pthread.h>
#include <stdio.h>

__thread int tls_init = 5;
__thread int tls_zero;
static __thread char tls_buf[32] = "main";
extern __thread long tls_other;
extern __thread long tls_other_bss;
long other_sum(void);

struct result { int init, zero; long other, other_bss, sum; char buf[32]; };

static void *worker(void *arg) {
    struct result *r = arg;
    tls_init += 100;
    tls_zero += 7;
    tls_other *= 3;
    tls_other_bss = 9;
    snprintf(tls_buf, sizeof tls_buf, "thread %d", tls_init);
    r->init = tls_init;
    r->zero = tls_zero;
    r->other = tls_other;
    r->other_bss = tls_other_bss;
    r->sum = other_sum();
    snprintf(r->buf, sizeof r->buf, "%s", tls_buf);
    return 0;
}

int main(void) {
    pthread_t t[3];
    struct result r[3];
    tls_init = 1;
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], 0, worker, &r[i]);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], 0);
    for (int i = 0; i < 3; i++)
        printf("thread %d: init=%d zero=%d other=%ld other_bss=%ld sum=%ld buf=%s\n", i, r[i].init, r[i].zero,
               r[i].other, r[i].other_bss, r[i].sum, r[i].buf);
    printf("main: init=%d zero=%d other=%ld buf=%s\n", tls_init, tls_zero, tls_other, tls_buf);
    return 0;
}
