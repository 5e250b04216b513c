#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int counter;
extern int table[4];
extern const char *greeting;
extern struct point { long x, y; } origin;
extern long lib_bss[16];
extern char **environ;

int lib_get_counter(void);
void lib_bump(void);
int *lib_counter_addr(void);
void *lib_environ_addr(void);
FILE *lib_stdout(void);

int main(void) {
    printf("counter=%d lib sees %d\n", counter, lib_get_counter());
    counter += 2;
    printf("after exe write: lib sees %d\n", lib_get_counter());
    lib_bump();
    printf("after lib write: exe sees %d table[3]=%d origin=(%ld,%ld) bss=%ld\n", counter, table[3], origin.x,
           origin.y, lib_bss[15]);
    printf("same object: %d\n", &counter == lib_counter_addr());
    printf("same environ: %d\n", (void *)&environ == lib_environ_addr());
    printf("same stdout: %d\n", stdout == lib_stdout());
    printf("greeting: %s\n", greeting);
    const char *v = getenv("RIVET_COPY_RELOC");
    int found = 0;
    for (char **e = environ; *e; e++)
        if (strcmp(*e, "RIVET_COPY_RELOC=yes") == 0)
            found = 1;
    printf("getenv=%s environ scan=%d\n", v ? v : "(null)", found);
    fprintf(stdout, "written with fprintf(stdout)\n");
    return counter == 43 && found ? 0 : 1;
}
