    .globl magic_a, magic_b, magic_c
    .set magic_a, 0x1122334455667788
    .set magic_b, 0x0102030405060708
    .set magic_c, 0x0a0b0c0d
    .section .note.GNU-stack,"",@progbits
