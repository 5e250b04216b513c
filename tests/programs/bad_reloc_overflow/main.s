# movl $far_away, %eax: a 32-bit absolute field for a symbol whose value needs 33 bits.
	.text
	.globl	main
main:
	movl	$far_away, %eax
	ret
	.section .note.GNU-stack,"",@progbits
