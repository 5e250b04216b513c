#include <pthread.h>
#include <stdio.h>

extern __thread long lib_counter; /* initial-exec from the executable: TPOFF64 against the library's symbol */
extern __thread char lib_tag[12];
long gd_bump(long by);
long desc_bump(long by);
long *gd_counter_addr(void);
long *desc_counter_addr(void);
int *gd_private_addr(void);

static void *worker(void *arg) {
    long *out = arg;
    long by = out[0];
    out[1] = gd_bump(by);
    out[2] = desc_bump(by);
    out[3] = gd_counter_addr() == &lib_counter && desc_counter_addr() == &lib_counter;
    out[4] = lib_counter;
    return 0;
}

int main(void) {
    long r[3][5] = {{1}, {20}, {300}};
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], 0, worker, r[i]);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], 0);
    for (int i = 0; i < 3; i++)
        printf("thread %d: gd=%ld desc=%ld same=%ld counter=%ld\n", i, r[i][1], r[i][2], r[i][3], r[i][4]);
    lib_counter = 9;
    printf("main: gd=%ld desc=%ld tag=%s private=%d\n", gd_bump(1), desc_bump(1), lib_tag, *gd_private_addr());
    return 0;
}
