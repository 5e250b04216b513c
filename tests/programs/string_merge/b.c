#include <wchar.h>
const char *str_b(void) { return "the same literal in three files"; }
const char *wide_b(void) { return (const char *)L"wide string literal"; }
const double *const_b(void) { static const double e = 2.718281828; return &e; }
