# An absolute symbol above 4 GiB, in its own object so that the assembler leaves the reference to the linker.
	.globl	far_away
	.set	far_away, 0x100000000
	.section .note.GNU-stack,"",@progbits
