#include "registry.h"
PLUGIN(alpha, x + 1)
