int __real_compute(int x);
int wrapped_calls;
int __wrap_compute(int x) {
    wrapped_calls++;
    return __real_compute(x) + 1000;
}
