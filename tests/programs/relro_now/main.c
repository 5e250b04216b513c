#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pointers in constant data: .data.rel.ro in a PIE, .rodata otherwise. Both are read-only after start-up. */
static const char *const table[] = {"zero", "one", "two"};

/* The address of puts's GOT slot: a lea with @GOTPCREL is never relaxed, so the slot must exist. */
static const void *got_slot_of_puts(void) {
    const void *slot;
    __asm__("leaq puts@GOTPCREL(%%rip), %0" : "=r"(slot));
    return slot;
}

/* The GOT base, where the PLT's slots are (.got.plt, which GNU ld merges into .got under -z now): the loader
   fills them at start-up, so full RELRO makes them read-only too. */
static const void *got_base(void) {
    const void *base;
    __asm__("leaq _GLOBAL_OFFSET_TABLE_(%%rip), %0" : "=r"(base));
    return base;
}

static void perms_of(const void *addr, char out[5]) {
    strcpy(out, "????");
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        uintptr_t lo, hi;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && (uintptr_t)addr >= lo && (uintptr_t)addr < hi) {
            strcpy(out, perms);
            break;
        }
    }
    fclose(f);
}

int main(void) {
    char p[5];
    /* RIVET_EXPECT_RELRO: the permissions relocated read-only data and the GOT should have. Without -fPIE the
       table needs no relocation and lives in .rodata, which is always read-only. */
    const char *want_got = getenv("RIVET_EXPECT_RELRO");
#ifdef __PIE__
    const char *want_table = want_got;
#else
    const char *want_table = "r--p";
#endif
    perms_of(&table[1], p);
    printf("table[1]=%s page %s (expected %s)\n", table[1], p, want_table);
    int ok = want_table && strcmp(p, want_table) == 0;
    perms_of(got_slot_of_puts(), p);
    printf("GOT page %s (expected %s)\n", p, want_got);
    ok &= want_got && strcmp(p, want_got) == 0;
    perms_of(got_base(), p);
    printf("PLT slots page %s (expected %s)\n", p, want_got);
    ok &= want_got && strcmp(p, want_got) == 0;
    puts("through the GOT");
    puts(ok ? "relro as expected" : "relro NOT as expected");
    return ok ? 0 : 1;
}
