#include "items.h"
ITEM(more_ten, 10)
ITEM(more_twenty, 20)
