/* A freestanding program (no libc) for links with embedded-style linker scripts: it clears .bss between the
   script's symbols, calls what other inputs may define, and exits by system call. Every symbol a script may define
   or drop is weak, so that the program links whatever a script says. Used by the cargo-fuzz targets (fuzz/) and
   by tests/fuzz.rs. */
extern char _sdata[] __attribute__((weak)), _edata[] __attribute__((weak)), _sbss[] __attribute__((weak));
extern char _ebss[] __attribute__((weak)), _sidata[] __attribute__((weak)), _stack_top[] __attribute__((weak));
extern char __bss_start[] __attribute__((weak)), _end[] __attribute__((weak)), etext[] __attribute__((weak));
extern int main(int, char **) __attribute__((weak));
extern int shared_fn(int) __attribute__((weak));
int counter = 40;
static __thread int tls_word = 3;
static char message[] = "freestanding\n";
long zero_words[8];
const char *table[] = { message, _sdata, _edata, _sbss, _ebss, _sidata, _stack_top, __bss_start, _end, etext };
static long sys3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}
__attribute__((section(".text.start"), noreturn)) void _start(void)
{
    for (char *d = _sbss; d < _ebss;)
        *d++ = 0;
    if (main)
        counter += main(tls_word, (char **)table);
    if (shared_fn)
        counter += shared_fn(2);
    sys3(1, 1, (long)message, sizeof message - 1);
    sys3(60, counter + (int)zero_words[1], 0, 0);
    __builtin_unreachable();
}
