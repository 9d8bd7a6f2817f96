#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
// zlib from the system (Debian: zlib1g-dev). Linux Foundation has no compression API.
#include <zlib.h>

// deflateInit is a macro (it passes the header's version and the stream's size), which Swift
// cannot call.
static inline int cachelog_deflate_init(z_streamp stream, int level) {
    return deflateInit(stream, level);
}
#endif
