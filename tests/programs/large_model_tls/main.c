#include <pthread.h>
#include <stdio.h>

__thread int tls_main = 11;
extern __thread int lib_tls;
int *addr_here(void);
int *addr_main(void);
int *addr_lib(void);
long sum_static(int k);
int lib_bump(void);

static void report(const char *who)
{
    *addr_here() += 1;
    *addr_main() += 2;
    *addr_lib() += 3;
    printf("%s: %d %d %d %ld %ld %d same=%d\n", who, *addr_here(), *addr_main(), *addr_lib(), sum_static(1),
           sum_static(2), lib_bump(), addr_main() == &tls_main && addr_lib() == &lib_tls);
}

static void *thread(void *arg)
{
    report(arg);
    return 0;
}

int main(void)
{
    pthread_t t;
    report("main");
    pthread_create(&t, 0, thread, "thread");
    pthread_join(t, 0);
    report("main again");
    return 0;
}
