#include <stdio.h>
int leaf_a(int x);
int leaf_b(int x);
int via_a(int x);
int via_b(int x);
int sum_a(int i);
int sum_b(int i);
int twin_1(int x);
int twin_2(int x);
int same_addr(void);
int sum_c(int i);
int main(void) {
  printf("%d %d %d %d\n", leaf_a(3), leaf_b(4), via_a(5), via_b(6));
  printf("%d %d %d %d\n", sum_a(2), sum_b(5), twin_1(7), twin_2(8));
  printf("%d\n", sum_c(4));
  printf("same address: %d\n", same_addr());
  return 0;
}
