#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <unwind.h>

#define NOINLINE __attribute__((noinline, noipa))

struct known { const char *name; uintptr_t addr; };
static struct known funcs[8];
static int nfuncs;
static const char *frames[32];
static int nframes;

/* The unwinder's own answer for the function containing ip (from the FDE it finds through .eh_frame_hdr or the
   registered frames), matched exactly against the functions we know. */
static const char *lookup(uintptr_t ip) {
    uintptr_t start = (uintptr_t)_Unwind_FindEnclosingFunction((void *)ip);
    for (int i = 0; i < nfuncs; i++)
        if (funcs[i].addr == start)
            return funcs[i].name;
    return "?";
}

static _Unwind_Reason_Code trace(struct _Unwind_Context *ctx, void *arg) {
    (void)arg;
    int before = 0;
    uintptr_t ip = _Unwind_GetIPInfo(ctx, &before);
    if (!before)
        ip--;
    if (nframes < 32)
        frames[nframes++] = lookup(ip);
    return _URC_NO_REASON;
}

NOINLINE int level3(int x) {
    _Unwind_Backtrace(trace, 0);
    void *bt[32];
    int n = backtrace(bt, 32);
    return x + (n >= 4 ? 1000 : 0);
}
NOINLINE int level2(int x) { return level3(x + 1) + 1; }
NOINLINE int level1(int x) { return level2(x * 2) + 1; }

int main(void) {
#define ADD(f) funcs[nfuncs++] = (struct known){#f, (uintptr_t)&f}
    ADD(main);
    ADD(level1);
    ADD(level2);
    ADD(level3);
    ADD(trace);
    int r = level1(5);
    printf("result=%d\nframes:", r);
    int seen_main = 0;
    for (int i = 0; i < nframes; i++) {
        if (frames[i][0] == '?')
            continue; /* libc start-up frames */
        printf(" %s", frames[i]);
        seen_main |= frames[i][0] == 'm';
    }
    printf("\n");
    return seen_main && r > 1000 ? 0 : 1;
}
