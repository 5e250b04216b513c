#include "registry.h"
PLUGIN(beta, x * 10)
