#include "registry.h"
PLUGIN(gamma, x - 100)
