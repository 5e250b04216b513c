int compute_total(int);          // missing extern "C"
int cxx_only(double d) { return (int)d; }
extern "C" int helperfn(int);     // wrong case
int main() { return compute_total(1) + helperfn(2); }
