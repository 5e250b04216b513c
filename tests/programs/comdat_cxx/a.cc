#include "common.h"
int from_a() { return twice(10) + bump(); }
const void *counter_addr_a() { return &shared_counter(); }
static Square<3> sq_a;
const Shape &shape_a() { return sq_a; }
