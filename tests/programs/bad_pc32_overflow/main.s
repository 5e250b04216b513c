# main reads `after`, which lies behind 2.25 GiB of .bss: farther than a 32-bit displacement reaches.
	.bss
	.globl	big
big:	.zero	0x90000000
	.globl	after
after:	.zero	4
	.text
	.globl	main
main:
	movl	after(%rip), %eax
	ret
	.section .note.GNU-stack,"",@progbits
