	.text
	.globl	lib_get
	.type	lib_get, @function
# An absolute address in code: in a position-independent output, a dynamic relocation in .text.
lib_get:
	movabsq	$lib_value, %rax
	movl	(%rax), %eax
	ret
	.data
	.globl	lib_value
lib_value:
	.long	7
	.section	.note.GNU-stack,"",@progbits
