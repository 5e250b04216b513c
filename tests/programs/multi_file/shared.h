extern int global_counter;
extern int table[8];
extern long big_table[1000];
extern const char *message;
#define NOPS 4
extern int (*const ops[NOPS])(int, int);
void add_to_counter(int n);
int table_sum(void);
int util_next(void);
