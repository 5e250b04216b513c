#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static int found_len = -1;

static int visit(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    if (found_len >= 0)
        return 1;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *n;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                found_len = (int)n->n_descsz;
                return 1;
            }
            p += sizeof *n + ((n->n_namesz + 3) & ~3u) + ((n->n_descsz + 3) & ~3u);
        }
    }
    return 1; /* only the executable, which comes first */
}

int main(void) {
    dl_iterate_phdr(visit, 0);
    printf("build id length: %d\n", found_len);
    return found_len == 20 ? 0 : 1;
}
