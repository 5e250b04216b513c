/* Group "pick_me" holds a function and a data object; second.c has a different copy of the same group. */
__asm__(".section .text.pick_me,\"axG\",@progbits,pick_me,comdat\n"
        ".globl pick_me\n"
        ".type pick_me,@function\n"
        "pick_me:\n"
        "  movl $1, %eax\n"
        "  ret\n"
        ".size pick_me, .-pick_me\n"
        ".section .data.pick_me_data,\"awG\",@progbits,pick_me,comdat\n"
        ".globl pick_me_data\n"
        ".type pick_me_data,@object\n"
        "pick_me_data: .long 1111\n"
        ".size pick_me_data, 4\n"
        ".text\n");
int first_calls(void) { extern int pick_me(void); return pick_me(); }
