#include "common.h"
#include <typeinfo>
int from_b() { return twice(100) + bump() + static_cast<int>(twice(0.5)); }
const void *counter_addr_b() { return &shared_counter(); }
static Square<3> sq_b;
const Shape &shape_b() { return sq_b; }
