#define MODEL(m) __attribute__((tls_model(m)))
__thread int gd_var = 1;
__thread int ld_var = 2;
__thread int ie_var = 3;
__thread int le_var MODEL("local-exec") = 4;
static __thread int hidden_counter MODEL("local-dynamic");
extern __thread int plain;
int helper_sum(void) {
    hidden_counter++;
    return gd_var + ld_var + ie_var + le_var + plain + hidden_counter;
}
