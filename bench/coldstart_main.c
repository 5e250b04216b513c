/* LD_PRELOAD helper of bench/coldstart.py: records when the program's main() is entered.
 *
 * It interposes __libc_start_main (called by _start through the GOT, so the preloaded definition wins) and hands
 * glibc a main that first writes one line to $COLDSTART_OUT: nanoseconds since $COLDSTART_T0 (CLOCK_MONOTONIC,
 * taken by the runner just before it forks the child that executes the program), this process's minor and major
 * page faults and the bytes it has read from storage so far, and the CLOCK_MONOTONIC time itself
 * (`coldstart.py where` splits a perf trace with it). Everything before that line (the kernel's exec, ld.so
 * mapping and relocating, every constructor of the libraries and of the program) is "start-up". The program under
 * test is not relinked, so the layout being measured is the linker's alone.
 *
 * Build: cc -O2 -shared -fPIC -o coldstart_main.so coldstart_main.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);

static main_fn real_main;

/* read_bytes of /proc/self/io: bytes this process caused to be fetched from storage. */
static long long read_bytes(void) {
    char buf[512];
    int fd = open("/proc/self/io", O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *p = strstr(buf, "\nread_bytes: ");
    return p ? atoll(p + 13) : -1;
}

static int timed_main(int argc, char **argv, char **envp) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    const char *t0 = getenv("COLDSTART_T0"), *out = getenv("COLDSTART_OUT");
    if (t0 && out) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        char line[256];
        int len = snprintf(line, sizeof line, "main_ns=%lld minflt=%ld majflt=%ld read_bytes=%lld mono_ns=%lld\n",
                           ns - atoll(t0), ru.ru_minflt, ru.ru_majflt, read_bytes(), ns);
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            if (write(fd, line, (size_t)len) != len) {
                /* the runner reports a missing line */
            }
            close(fd);
        }
    }
    /* Children of the program are not timed. */
    unsetenv("COLDSTART_OUT");
    unsetenv("LD_PRELOAD");
    return real_main(argc, argv, envp);
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end) {
    start_fn next = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    real_main = main;
    return next(timed_main, argc, argv, init, fini, rtld_fini, stack_end);
}
