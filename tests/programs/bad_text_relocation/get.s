	.text
	.globl	get_value
	.type	get_value, @function
# An absolute address in code: in a position-independent output, a dynamic relocation in .text.
get_value:
	movabsq	$value, %rax
	movl	(%rax), %eax
	ret
	.data
	.globl	value
value:
	.long	42
	.section	.note.GNU-stack,"",@progbits
