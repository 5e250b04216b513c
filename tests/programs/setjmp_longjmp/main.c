#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

static jmp_buf env;
static sigjmp_buf sigenv;
static volatile int depth_reached;

__attribute__((noinline)) static void dive(int depth) {
    depth_reached = depth;
    if (depth == 5)
        longjmp(env, depth * 10);
    dive(depth + 1);
}

static void on_usr1(int sig) { siglongjmp(sigenv, sig); }

int main(void) {
    int r = setjmp(env);
    if (r == 0) {
        dive(0);
        puts("not reached");
    }
    printf("longjmp returned %d after depth %d\n", r, depth_reached);
    signal(SIGUSR1, on_usr1);
    int s = sigsetjmp(sigenv, 1);
    if (s == 0) {
        raise(SIGUSR1);
        puts("not reached either");
    }
    printf("siglongjmp from handler: signal %d\n", s);
    return 3;
}
