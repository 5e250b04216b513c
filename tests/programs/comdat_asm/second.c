__asm__(".section .text.pick_me,\"axG\",@progbits,pick_me,comdat\n"
        ".globl pick_me\n"
        ".type pick_me,@function\n"
        "pick_me:\n"
        "  movl $2, %eax\n"
        "  ret\n"
        ".size pick_me, .-pick_me\n"
        ".section .data.pick_me_data,\"awG\",@progbits,pick_me,comdat\n"
        ".globl pick_me_data\n"
        ".type pick_me_data,@object\n"
        "pick_me_data: .long 2222\n"
        ".size pick_me_data, 4\n"
        ".text\n");
int second_calls(void) { extern int pick_me(void); return pick_me() * 10; }
