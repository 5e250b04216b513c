# As bad_pc32_overflow, but `after` is local: the assembler refers to it through the .bss section symbol, a
# relocation rivet writes on a shorter path than a global's, with the same check and message.
	.bss
	.globl	big
big:	.zero	0x90000000
after:	.zero	4
	.text
	.globl	main
main:
	movl	after(%rip), %eax
	ret
	.section .note.GNU-stack,"",@progbits
