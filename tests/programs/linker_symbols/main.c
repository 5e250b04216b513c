#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern const Elf64_Ehdr __ehdr_start;
extern char __executable_start[];
extern char _etext[], etext[], __etext[];
extern char _edata[], edata[];
extern char __bss_start[];
extern char _end[], end[];
extern char _DYNAMIC[] __attribute__((weak));

int initialised = 5;
static char zeroed[4096];
const char rodata_thing[] = "read only";

int main(void) {
    uintptr_t text = (uintptr_t)&main;
    printf("ELF magic at __ehdr_start: %d\n", memcmp(&__ehdr_start, ELFMAG, SELFMAG) == 0);
    printf("e_type DYN: %d, e_phnum > 0: %d\n", __ehdr_start.e_type == ET_DYN, __ehdr_start.e_phnum > 0);
    printf("__executable_start == __ehdr_start: %d\n", (void *)__executable_start == (void *)&__ehdr_start);
    printf("main < _etext: %d\n", text < (uintptr_t)_etext);
    printf("etext aliases: %d %d\n", _etext == etext, _etext == __etext);
    printf("_etext <= _edata: %d\n", (uintptr_t)_etext <= (uintptr_t)_edata);
    printf("initialised < _edata: %d\n", (uintptr_t)&initialised < (uintptr_t)_edata);
    printf("_edata == edata: %d\n", _edata == edata);
    printf("_edata <= __bss_start: %d\n", (uintptr_t)_edata <= (uintptr_t)__bss_start);
    printf("__bss_start <= zeroed < _end: %d\n",
           (uintptr_t)__bss_start <= (uintptr_t)zeroed && (uintptr_t)(zeroed + sizeof zeroed) <= (uintptr_t)_end);
    printf("_end == end: %d\n", _end == end);
    printf("_DYNAMIC defined: %d\n", _DYNAMIC != 0);
    printf("rodata before _edata: %d\n", (uintptr_t)rodata_thing < (uintptr_t)_edata);
    zeroed[4095] = 1;
    return 0;
}
