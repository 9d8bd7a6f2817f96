#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
// zlib from the system (Debian: zlib1g-dev). Linux Foundation has no compression API.
#include <zlib.h>
#endif
