#include <pthread.h>
#include <stdio.h>

#define THREADS 4
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static long shared_total;
static int started, once_runs;
static __thread long my_count;

static void init_once(void) { once_runs++; }

static void *work(void *arg) {
    long id = (long)arg;
    pthread_once(&once, init_once);
    for (long i = 0; i <= id * 1000; i++)
        my_count += i;
    pthread_mutex_lock(&lock);
    shared_total += my_count;
    started++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    return (void *)my_count;
}

int main(void) {
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], 0, work, (void *)i);
    pthread_mutex_lock(&lock);
    while (started < THREADS)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        printf("thread %d counted %ld\n", i, (long)r);
    }
    printf("total=%ld once=%d main's own count=%ld\n", shared_total, once_runs, my_count);
    return 0;
}
