#include <pthread.h>
#include <stdio.h>

extern __thread int so_tls;     /* initial-exec from an executable */
extern __thread int so_tls_bss;
int *so_tls_addr(void);
int so_sum(void);
int gd_read(void);
int *gd_addr(void);
int desc_read(void);

static void *worker(void *arg) {
    int *out = arg;
    so_tls += 50;
    so_tls_bss = 3;
    out[0] = so_sum();
    out[1] = gd_read() + desc_read();
    out[2] = &so_tls == so_tls_addr() && gd_addr() == so_tls_addr();
    return 0;
}

int main(void) {
    int r[2][3];
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], 0, worker, r[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], 0);
    for (int i = 0; i < 2; i++)
        printf("thread %d: so_sum=%d gd+desc=%d same=%d\n", i, r[i][0], r[i][1], r[i][2]);
    so_tls = 1;
    printf("main: so_sum=%d gd=%d desc=%d same=%d\n", so_sum(), gd_read(), desc_read(), &so_tls == so_tls_addr());
    return 0;
}
