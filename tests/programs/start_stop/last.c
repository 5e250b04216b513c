#include "items.h"
ITEM(last_hundred, 100)
