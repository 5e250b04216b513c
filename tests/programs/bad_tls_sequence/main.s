# A general-dynamic access with padding where the call to __tls_get_addr belongs: an executable relaxes the
# whole sequence, so the linker must refuse it.
	.section .tbss,"awT",@nobits
	.globl	tv
tv:	.zero	4
	.text
	.globl	main
main:
	nop
	nop
	nop
	nop
	leaq	tv@tlsgd(%rip), %rdi
	.fill	12, 1, 0x90
	ret
	.section .note.GNU-stack,"",@progbits
