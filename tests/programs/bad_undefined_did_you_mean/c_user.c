int cxx_only(double);
int use_it(void) { return cxx_only(1.0); }
