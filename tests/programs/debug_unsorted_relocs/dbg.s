# A non-allocated section large enough to be written in parts (512 KiB and up), whose relocations are not sorted
# by offset: `.reloc` keeps the order it is given in. Each one stores an absolute symbol's value.
    .section .rivet_dbg,"",@progbits
start:
    .rept 87500
    .quad 0
    .endr
    .reloc start+600000, R_X86_64_64, magic_b
    .reloc start+8, R_X86_64_64, magic_a
    .reloc start+300000, R_X86_64_32, magic_c
    .reloc start+16, R_X86_64_64, magic_b
    .reloc start+699992, R_X86_64_64, magic_a
    .section .note.GNU-stack,"",@progbits
