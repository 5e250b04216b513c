#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

int main(int argc, char **argv, char **envp) {
    printf("argc=%d argv0=%s\n", argc, argv[0]);
    for (int i = 1; i < argc; i++)
        printf("argv[%d]=%s\n", i, argv[i]);
    printf("argv[argc] is null: %d\n", argv[argc] == 0);
    const char *v = getenv("RIVET_TEST_VAR");
    printf("RIVET_TEST_VAR=%s\n", v ? v : "(unset)");
    int in_environ = 0;
    for (char **e = environ; *e; e++)
        in_environ |= strncmp(*e, "RIVET_TEST_VAR=", 15) == 0;
    printf("in environ: %d, envp == environ: %d\n", in_environ, envp == environ);
    char line[64];
    int n = 0;
    while (fgets(line, sizeof line, stdin))
        printf("stdin %d: %s", ++n, line);
    return argc == 4 ? 0 : 1;
}
