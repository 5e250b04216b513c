#include <stdio.h>
int pick_me(void);
extern int pick_me_data;
int first_calls(void);
int second_calls(void);
int main(void) {
    printf("pick_me=%d data=%d first=%d second=%d\n", pick_me(), pick_me_data, first_calls(), second_calls());
    return pick_me() == 1 && pick_me_data == 1111 ? 0 : 1;
}
