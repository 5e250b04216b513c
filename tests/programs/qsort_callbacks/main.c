#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
static int cmp_int_desc(const void *a, const void *b) { return cmp_int(b, a); }
static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

struct sorter { const char *name; int (*cmp)(const void *, const void *); };
static const struct sorter sorters[] = {{"ascending", cmp_int}, {"descending", cmp_int_desc}};

int main(void) {
    for (unsigned s = 0; s < sizeof sorters / sizeof sorters[0]; s++) {
        int v[] = {42, 7, 19, 3, 88, 23, 7, 61};
        qsort(v, 8, sizeof v[0], sorters[s].cmp);
        printf("%s:", sorters[s].name);
        for (int i = 0; i < 8; i++)
            printf(" %d", v[i]);
        printf("\n");
    }
    const char *words[] = {"pear", "apple", "fig", "banana", "cherry"};
    qsort(words, 5, sizeof words[0], cmp_str);
    for (int i = 0; i < 5; i++)
        printf("%s%s", words[i], i == 4 ? "\n" : " ");
    const char *key = "fig";
    const char **hit = bsearch(&key, words, 5, sizeof words[0], cmp_str);
    printf("bsearch fig at %d\n", hit ? (int)(hit - words) : -1);
    return 0;
}
