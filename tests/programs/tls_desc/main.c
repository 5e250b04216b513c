#include <pthread.h>
#include <stdio.h>

extern __thread long desc_a;
extern __thread char desc_str[16];
static __thread int desc_local = 30;
__thread int desc_bss;

long read_other(void);

static void *worker(void *arg) {
    long *out = arg;
    desc_a += 5;
    desc_local += 2;
    desc_bss = 9;
    desc_str[0] = 'T';
    *out = desc_a * 1000 + desc_local * 10 + desc_bss + read_other();
    return 0;
}

int main(void) {
    long r[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], 0, worker, &r[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], 0);
    printf("threads: %ld %ld\n", r[0], r[1]);
    printf("main: a=%ld local=%d bss=%d str=%s other=%ld\n", desc_a, desc_local, desc_bss, desc_str, read_other());
    return 0;
}
